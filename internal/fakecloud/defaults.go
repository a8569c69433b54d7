package fakecloud

import "encoding/json"

//go:generate sh -c "go run ../../cmd/fakecloud --print-default-data > ../../hack/fakecloud/data.yaml"

// Fixed identifiers and credentials of DefaultData, for tests and the demo.
const (
	DefaultOrganizationID = "7f0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d"
	DefaultServiceID      = "4e2c6a1b-9d8f-4c3b-a2e1-0f9e8d7c6b5a"
	// EmptyServiceID is a service of DefaultOrganizationID with no pipes and
	// no endpoints.
	EmptyServiceID = "0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"

	KafkaPipeID         = "11111111-1111-4111-8111-111111111111"
	ObjectStoragePipeID = "22222222-2222-4222-8222-222222222222"
	KinesisPipeID       = "33333333-3333-4333-8333-333333333333"
	PostgresPipeID      = "44444444-4444-4444-8444-444444444444"
	PubSubPipeID        = "44444444-4444-4444-8444-444444444445"
	MySQLPipeID         = "44444444-4444-4444-8444-444444444446"
	BigQueryPipeID      = "44444444-4444-4444-8444-444444444447"
	MongoDBPipeID       = "44444444-4444-4444-8444-444444444448"

	// MongoDBHost and MongoDBDatabase are what the MongoDB pipe's connection
	// URI names; the operator shows them, and never the URI itself.
	MongoDBHost     = "cluster0.example.invalid"
	MongoDBDatabase = "catalog"

	// TodayServiceID is a service of DefaultOrganizationID shaped like the
	// services send pipes and endpoints today (issue 15): every kind of
	// source with the fields the spec does not list, a kind the operator
	// does not know, scaling as Kubernetes quantities, the kinesis timestamp
	// as a string, credentials a server might echo (all FakeCredential), and
	// endpoints with today's fields. See TodaysPipes.
	TodayServiceID = "5d6e7f80-91a2-4b3c-8d4e-5f6a7b8c9d0e"
	// FakeCredential is every credential of TodayServiceID's pipes:
	// obviously not a real one.
	FakeCredential = "fake-credential-not-a-real-one"

	ReversePrivateEndpointID = "55555555-5555-4555-8555-555555555555"

	// DefaultAlertID is an active alert; SecondAlertID a disabled one.
	DefaultAlertID = "65f1a2b3c4d5e6f708192a3b"
	SecondAlertID  = "65f1a2b3c4d5e6f708192a3c"

	DefaultKeyID      = "fake-key-id"
	DefaultKeySecret  = "fake-key-secret"
	DefaultAlertToken = "fake-alert-token"

	// FakeConnectionString is the object-storage pipe's connection string:
	// obviously not a real credential.
	FakeConnectionString = "fake-connection-string-not-a-real-credential"
)

// DefaultData returns data that covers every field of the spec and the
// fields the operator knows beyond it: a pipe of each of the eight source
// kinds (Kafka with a schema registry and an offset, object storage with a
// connection string, Kinesis, Postgres with settings and table mappings,
// Pub/Sub, MySQL, BigQuery and MongoDB), a reverse private endpoint, two
// alerts in the spec's shape and one in the current shape of the alert API.
// Decimals are json.Number so they are served with their exact text.
// TodayServiceID holds the messier shapes of today's services.
func DefaultData() Data {
	return Data{
		ManagementKey: ManagementKey{KeyID: DefaultKeyID, KeySecret: DefaultKeySecret},
		AlertToken:    DefaultAlertToken,
		Organizations: map[string]map[string]Service{
			DefaultOrganizationID: {
				DefaultServiceID: {
					Pipes: []map[string]any{
						kafkaPipe(), objectStoragePipe(), kinesisPipe(), postgresPipe(),
						pubsubPipe(), mysqlPipe(), bigqueryPipe(), mongodbPipe(),
					},
					ReversePrivateEndpoints: []map[string]any{reversePrivateEndpoint()},
					Alerts:                  ServiceAlerts(),
				},
				TodayServiceID: {
					Pipes:                   TodaysPipes(FakeCredential),
					ReversePrivateEndpoints: TodaysEndpoints(),
				},
				EmptyServiceID: {
					Pipes:                   []map[string]any{},
					ReversePrivateEndpoints: []map[string]any{},
				},
			},
		},
		Alerts: map[string]map[string]any{
			DefaultAlertID:      defaultAlert(),
			SecondAlertID:       secondAlert(),
			CurrentShapeAlertID: currentShapeAlert(),
		},
	}
}

// scaling returns a pipe's scaling with the given memory per replica, an
// exact decimal.
func scaling(replicaMemoryGb string) map[string]any {
	return map[string]any{
		"replicas":             2,
		"concurrency":          4,
		"replicaCpuMillicores": 500,
		"replicaMemoryGb":      json.Number(replicaMemoryGb),
	}
}

// pipe returns the fields every default pipe has.
func pipe(id, name, state string, source map[string]any) map[string]any {
	return map[string]any{
		"id":        id,
		"serviceId": DefaultServiceID,
		"name":      name,
		"state":     state,
		"scaling":   scaling("0.5"),
		"source":    source,
		"destination": map[string]any{
			"database":     "analytics",
			"table":        name,
			"managedTable": true,
			"tableDefinition": map[string]any{
				"engine": map[string]any{
					"type":            "ReplacingMergeTree",
					"versionColumnId": "updated_at",
					"columnIds":       []any{"id", "updated_at"},
				},
				"sortingKey":  []any{"id"},
				"partitionBy": "toYYYYMM(created_at)",
				"primaryKey":  "id",
			},
			"columns": []any{
				map[string]any{"name": "id", "type": "UUID"},
				map[string]any{"name": "payload", "type": "String"},
				map[string]any{"name": "created_at", "type": "DateTime64(3)"},
				map[string]any{"name": "updated_at", "type": "DateTime64(3)"},
			},
		},
		"fieldMappings": []any{
			map[string]any{"sourceField": "id", "destinationField": "id"},
			map[string]any{"sourceField": "body", "destinationField": "payload"},
		},
		"settings": map[string]any{
			"streaming_max_insert_wait_ms":                 5000,
			"object_storage_concurrency":                   1,
			"object_storage_polling_interval_ms":           30000,
			"object_storage_max_insert_bytes":              10737418240,
			"object_storage_max_file_count":                100,
			"warehouse_max_threads":                        8,
			"warehouse_max_insert_threads":                 1,
			"warehouse_min_insert_block_size_bytes":        1073741824,
			"warehouse_max_download_threads":               4,
			"warehouse_parallel_distributed_insert_select": 2,
			"object_storage_use_cluster_function":          true,
			"warehouse_parallel_view_processing":           false,
		},
		"createdAt": "2026-01-10T08:00:00Z",
		"updatedAt": "2026-01-12T16:20:00Z",
	}
}

func kafkaPipe() map[string]any {
	p := pipe(KafkaPipeID, "events_kafka", "Running", map[string]any{
		"kafka": map[string]any{
			"type":           "msk",
			"format":         "JSONEachRow",
			"authentication": "IAM_ROLE",
			"exactlyOnce":    false,
			"brokers":        "b-1.example.invalid:9098,b-2.example.invalid:9098",
			"topics":         "events",
			"consumerGroup":  "servicewatch-demo",
			"iamRole":        "arn:aws:iam::123456789012:role/fake-kafka-reader",
			"offset":         map[string]any{"strategy": "from_timestamp", "timestamp": "2026-01-10T08:00"},
			"schemaRegistry": map[string]any{
				"url":           "https://schema-registry.example.invalid",
				"caCertificate": "-----BEGIN CERTIFICATE-----\nFAKE-REGISTRY-CA\n-----END CERTIFICATE-----\n",
			},
			"caCertificate":             "-----BEGIN CERTIFICATE-----\nFAKE-BROKER-CA\n-----END CERTIFICATE-----\n",
			"reversePrivateEndpointIds": []any{ReversePrivateEndpointID},
		},
	})
	// A scaling with a second exact decimal, so not every pipe looks alike.
	p["scaling"] = scaling("12.25")
	return p
}

func objectStoragePipe() map[string]any {
	return pipe(ObjectStoragePipeID, "logs_object_storage", "Running", map[string]any{
		"objectStorage": map[string]any{
			"type":               "s3",
			"format":             "JSONEachRow",
			"authentication":     "IAM_ROLE",
			"url":                "https://bucket.example.invalid/logs/**/*.ndjson.gz",
			"delimiter":          ",",
			"compression":        "auto",
			"isContinuous":       true,
			"queueUrl":           "https://queue.example.invalid/123456789012/fake-logs-queue",
			"iamRole":            "arn:aws:iam::123456789012:role/fake-storage-reader",
			"connectionString":   FakeConnectionString,
			"path":               "logs/2026/*",
			"azureContainerName": "fake-container",
		},
	})
}

func kinesisPipe() map[string]any {
	return pipe(KinesisPipeID, "clicks_kinesis", "Stopped", map[string]any{
		"kinesis": map[string]any{
			"streamName":        "clicks",
			"region":            "us-east-1",
			"format":            "JSONEachRow",
			"authentication":    "IAM_ROLE",
			"useEnhancedFanOut": false,
			"iteratorType":      "AT_TIMESTAMP",
			"timestamp":         1767225600, // an integer, as the spec says (its unit is not shown)
			"iamRole":           "arn:aws:iam::123456789012:role/fake-kinesis-reader",
		},
	})
}

func postgresPipe() map[string]any {
	return pipe(PostgresPipeID, "orders_postgres", "Running", map[string]any{
		"postgres": map[string]any{
			"type":                 "postgres",
			"authentication":       "basic",
			"disableTls":           false,
			"skipCertVerification": false,
			"tlsHost":              "db.example.invalid",
			"host":                 "db.example.invalid",
			"port":                 5432,
			"database":             "shop",
			"settings": map[string]any{
				"syncIntervalSeconds":            10,
				"pullBatchSize":                  100000,
				"publicationName":                "servicewatch_pub",
				"replicationSlotName":            "servicewatch_slot",
				"allowNullableColumns":           true,
				"initialLoadParallelism":         4,
				"snapshotNumRowsPerPartition":    100000,
				"snapshotNumberOfParallelTables": 1,
				"enableFailoverSlots":            false,
			},
			"tableMappings": []any{
				map[string]any{
					"sourceSchemaName":    "public",
					"sourceTable":         "orders",
					"targetTable":         "orders",
					"excludedColumns":     []any{"card_number"},
					"useCustomSortingKey": true,
					"sortingKeys":         []any{"customer_id", "id"},
				},
				map[string]any{
					"sourceSchemaName":    "public",
					"sourceTable":         "customers",
					"targetTable":         "customers",
					"excludedColumns":     []any{},
					"useCustomSortingKey": false,
					"sortingKeys":         []any{},
				},
			},
		},
	})
}

func reversePrivateEndpoint() map[string]any {
	return map[string]any{
		"id":                         ReversePrivateEndpointID,
		"serviceId":                  DefaultServiceID,
		"description":                "Private link to the Kafka cluster",
		"type":                       "VPC_ENDPOINT_SERVICE",
		"vpcEndpointServiceName":     "com.amazonaws.vpce.us-east-1.vpce-svc-0fake0000000000000",
		"vpcResourceConfigurationId": "rcfg-0fake0000000000000",
		"vpcResourceShareArn":        "arn:aws:ram:us-east-1:123456789012:resource-share/fake-share",
		"mskClusterArn":              "arn:aws:kafka:us-east-1:123456789012:cluster/fake-cluster/fake-uuid",
		"mskAuthentication":          "SASL_IAM",
		"endpointId":                 "vpce-0fake0000000000000",
		"dnsNames":                   []any{"vpce-0fake0000000000000.vpce-svc.us-east-1.vpce.amazonaws.example.invalid"},
		"privateDnsNames":            []any{"kafka.internal.example.invalid"},
		"customPrivateDnsMappings": []any{
			map[string]any{"privateDnsName": "b-1.kafka.internal.example.invalid"},
			map[string]any{"privateDnsName": "b-2.kafka.internal.example.invalid"},
		},
		"status": "Ready",
	}
}

func pubsubPipe() map[string]any {
	return pipe(PubSubPipeID, "orders_pubsub", "Running", map[string]any{
		"pubsub": map[string]any{
			"format":         "JSONEachRow",
			"authentication": "SERVICE_ACCOUNT",
			"projectId":      "fake-gcp-project",
			"topic":          "orders",
			"subscription":   "servicewatch-demo-orders",
			"seekType":       "latest",
			"enableOrdering": true,
		},
	})
}

func mysqlPipe() map[string]any {
	return pipe(MySQLPipeID, "crm_mysql", "Running", map[string]any{
		"mysql": map[string]any{
			"type":                 "rdsmysql",
			"authentication":       "basic",
			"host":                 "mysql.example.invalid",
			"port":                 3306,
			"disableTls":           false,
			"skipCertVerification": false,
			"tlsHost":              "mysql.example.invalid",
			"settings":             map[string]any{"replicationMode": "cdc", "syncIntervalSeconds": 30},
			"tableMappings": []any{
				map[string]any{"sourceDatabaseName": "crm", "sourceTable": "accounts", "targetTable": "crm_accounts", "tableEngine": "ReplacingMergeTree"},
			},
		},
	})
}

func bigqueryPipe() map[string]any {
	return pipe(BigQueryPipeID, "sales_bigquery", "Stopped", map[string]any{
		"bigquery": map[string]any{
			"authentication":      "SERVICE_ACCOUNT",
			"snapshotStagingPath": "gs://fake-staging-bucket/servicewatch/",
			"settings":            map[string]any{"replicationMode": "snapshot"},
			"tableMappings": []any{
				map[string]any{"sourceDatasetName": "sales", "sourceTable": "orders", "targetTable": "bq_orders"},
			},
		},
	})
}

// mongodbPipe's URI has no credentials: the default data is shown as it is
// (TodaysPipes has one with a user and password).
func mongodbPipe() map[string]any {
	return pipe(MongoDBPipeID, "catalog_mongodb", "Running", map[string]any{
		"mongodb": map[string]any{
			"uri":            "mongodb+srv://" + MongoDBHost + "/" + MongoDBDatabase,
			"readPreference": "secondaryPreferred",
			"tableMappings": []any{
				map[string]any{"sourceDatabaseName": MongoDBDatabase, "sourceCollection": "products", "targetTable": "products"},
			},
		},
	})
}

// defaultAlert is the alert DefaultAlertID of DefaultData, in the spec's shape.
func defaultAlert() map[string]any {
	return map[string]any{
		"id":            DefaultAlertID,
		"name":          "Ingest lag above 12.25 s",
		"message":       "Pipe ingest lag is high on analytics-prod",
		"threshold":     json.Number("12.25"),
		"interval":      "5m",
		"thresholdType": "above",
		"source":        "tile",
		"state":         "active",
		"channel":       map[string]any{"type": "webhook", "webhookId": "65f1a2b3c4d5e6f708192b01"},
		"team":          "65f1a2b3c4d5e6f708192c01",
		"tileId":        "tile-ingest-lag",
		"dashboard":     "65f1a2b3c4d5e6f708192d01",
		"createdAt":     "2026-01-15T09:30:00.000Z",
		"updatedAt":     "2026-02-01T17:45:12.345Z",
	}
}

// secondAlert is the alert SecondAlertID of DefaultData, in the spec's shape: a disabled one.
func secondAlert() map[string]any {
	return map[string]any{
		"id":            SecondAlertID,
		"name":          "Error rate",
		"message":       "Insert errors above 0.5 per second",
		"threshold":     json.Number("0.5"),
		"interval":      "1m",
		"thresholdType": "above",
		"source":        "tile",
		"state":         "disabled",
		"channel":       map[string]any{"type": "webhook", "webhookId": "65f1a2b3c4d5e6f708192b02"},
		"team":          "65f1a2b3c4d5e6f708192c01",
		"tileId":        "tile-error-rate",
		"dashboard":     "65f1a2b3c4d5e6f708192d01",
		"createdAt":     "2026-01-16T10:00:00.000Z",
		"updatedAt":     "2026-01-16T10:00:00.000Z",
	}
}
