package fakecloud

import "encoding/json"

// Identifiers of TodaysPipes and TodaysEndpoints.
const (
	TodayKafkaPipeID       = "d0000000-0000-4000-8000-000000000001"
	TodayOddPipeID         = "d0000000-0000-4000-8000-000000000010"
	TodayUnknownPipeID     = "d0000000-0000-4000-8000-000000000009"
	TodayGCPEndpointID     = "e0000000-0000-4000-8000-000000000001"
	TodayMSKEndpointID     = "e0000000-0000-4000-8000-000000000002"
	todayUnknownKind       = "cassandra"
	TodayServiceAttachment = "projects/fake-project/regions/us-central1/serviceAttachments/fake-kafka"
)

// TodayUnknownKind is the kind of source of TodayUnknownPipeID, one the
// operator does not know.
const TodayUnknownKind = todayUnknownKind

// TodaysPipes returns pipes shaped like the services send them today (issue
// 15): one of each of the eight kinds of source with the common fields
// (type, format, authentication), one of a kind the operator does not know,
// scaling as Kubernetes quantities and numeric strings, the kinesis
// timestamp (an integer in the spec) as a numeric string, and one pipe with a value of a type nobody can use
// (scaling.replicas as an object). Every credential a server might echo is
// set, each to secret followed by "-" and a name of its own, so that a test
// can tell which one leaked.
func TodaysPipes(secret string) []map[string]any {
	cred := func(name string) string { return secret + "-" + name }
	today := func(id, name, state string, scaling, source map[string]any) map[string]any {
		return map[string]any{
			"id": id, "serviceId": TodayServiceID, "name": name, "state": state,
			"scaling": scaling, "source": source,
			"destination": map[string]any{"database": "today", "table": name, "managedTable": true,
				"tableDefinition": map[string]any{"engine": map[string]any{"type": "MergeTree"}, "sortingKey": []any{"id"}}},
			"createdAt": "2026-03-01T08:00:00Z",
		}
	}
	return []map[string]any{
		today(TodayKafkaPipeID, "events_kafka", "Running",
			map[string]any{"replicas": 1, "replicaCpuMillicores": "500m", "replicaMemoryGb": "2Gi"},
			map[string]any{"kafka": map[string]any{
				"type": "confluent", "format": "AvroConfluent", "authentication": "PLAIN",
				"brokers": "pkc-fake.example.invalid:9092", "topics": "events",
				"offset": map[string]any{"strategy": "from_latest"}, "exactlyOnce": true,
				"credentials": map[string]any{"username": "reader", "password": cred("kafka-password")},
				"schemaRegistry": map[string]any{
					"url":            "https://registry-user:" + cred("registry-url-password") + "@registry.example.invalid/?token=" + cred("registry-url-token"),
					"authentication": "PLAIN",
					"credentials":    map[string]any{"username": "sr", "password": cred("registry-password")},
				},
			}}),
		today("d0000000-0000-4000-8000-000000000002", "logs_s3", "Running",
			map[string]any{"replicas": 1, "replicaCpuMillicores": "250", "replicaMemoryGb": "0.5"},
			map[string]any{"objectStorage": map[string]any{
				"type": "s3", "format": "Parquet", "authentication": "IAM_USER",
				"url":          "https://bucket.example.invalid/logs/*.parquet?X-Amz-Signature=" + cred("presigned-signature"),
				"isContinuous": true, "skipInitialLoad": "true", "startAfter": "logs/2026/02/28.parquet",
				"connectionString": cred("connection-string"),
				"accessKey":        map[string]any{"accessKeyId": "AKIAFAKEFAKEFAKE", "secretKey": cred("secret-key")},
			}}),
		today("d0000000-0000-4000-8000-000000000003", "clicks_kinesis", "Running",
			map[string]any{"replicas": 1, "replicaCpuMillicores": 1000, "replicaMemoryGb": 4},
			map[string]any{"kinesis": map[string]any{
				"type": "kinesis", "format": "JSONEachRow", "authentication": "IAM_USER", "streamName": "clicks", "region": "eu-west-1",
				"iteratorType": "AT_TIMESTAMP", "timestamp": "1767225600",
				"accessKey": map[string]any{"accessKeyId": "AKIAFAKEFAKEFAKE", "secretKey": cred("kinesis-secret-key")},
			}}),
		today("d0000000-0000-4000-8000-000000000004", "shop_postgres", "Running", nil,
			map[string]any{"postgres": map[string]any{
				"type": "postgres", "format": "Native", "authentication": "IAM_ROLE", "iamRole": "arn:aws:iam::123456789012:role/fake-postgres",
				"host": "db.example.invalid", "port": "5432", "database": "shop",
				"disableTls": false, "skipCertVerification": true, "tlsHost": "db.internal.example.invalid", "caCertificate": fakeCA,
				"settings":      map[string]any{"replicationMode": "cdc", "deleteOnMerge": "true", "enableFailoverSlots": true},
				"credentials":   map[string]any{"username": "repl", "password": cred("postgres-password")},
				"tableMappings": cdcTableMappings(pgTableMapping),
			}}),
		today("d0000000-0000-4000-8000-000000000005", "orders_pubsub", "Running", nil,
			map[string]any{"pubsub": map[string]any{
				"type": "pubsub", "format": "JSONEachRow", "authentication": "SERVICE_ACCOUNT", "projectId": "fake-project", "topic": "orders",
				"subscription": "orders-sub", "seekType": "timestamp", "seekTimestamp": "2026-01-01T00:00:00Z", "seekSnapshot": "orders-snapshot",
				"filter": `attributes.region = "eu"`, "ackDeadline": 60,
				"serviceAccountKey": cred("pubsub-service-account-key"),
			}}),
		today("d0000000-0000-4000-8000-000000000006", "crm_mysql", "Paused", nil,
			map[string]any{"mysql": map[string]any{
				"type": "auroramysql", "format": "Native", "authentication": "IAM_ROLE", "iamRole": "arn:aws:iam::123456789012:role/fake-mysql",
				"host": "mysql.example.invalid", "port": 3306, "serverId": 4242,
				"disableTls": true, "skipCertVerification": false, "tlsHost": "mysql.internal.example.invalid", "caCertificate": fakeCA,
				"credentials":   map[string]any{"username": "repl", "password": cred("mysql-password")},
				"settings":      dbSettings("cdc"),
				"tableMappings": cdcTableMappings(mySQLTableMapping),
			}}),
		today("d0000000-0000-4000-8000-000000000007", "sales_bigquery", "Running", nil,
			map[string]any{"bigquery": map[string]any{
				"type": "bigquery", "format": "Avro", "authentication": "SERVICE_ACCOUNT", "projectId": "fake-project",
				"snapshotStagingPath": "gs://fake-staging/clickpipes/",
				"settings":            dbSettings("snapshot"),
				"tableMappings": []any{map[string]any{
					"sourceDatasetName": "sales", "sourceTable": "orders", "targetTable": "bq_orders",
					"excludedColumns": []any{"card_number"}, "useCustomSortingKey": true, "sortingKeys": []any{"order_id"}, "tableEngine": "MergeTree",
				}},
				"credentials":       map[string]any{"serviceAccountFile": cred("bigquery-service-account-file")},
				"serviceAccountKey": map[string]any{"serviceAccountFile": cred("bigquery-service-account-key-file")},
			}}),
		today("d0000000-0000-4000-8000-000000000008", "catalog_mongodb", "Running", nil,
			map[string]any{"mongodb": map[string]any{
				"uri": "mongodb://catalog:" + cred("mongodb-password") + "@m1.example.invalid:27017,m2.example.invalid:27017/catalog?replicaSet=rs0&retryWrites=true&authSource=admin" +
					"&tlsCertificateKeyFilePassword=" + cred("mongodb-key-password") + "&authMechanismProperties=AWS_SESSION_TOKEN:" + cred("mongodb-query"),
				"type": "mongodb", "format": "JSONEachRow", "authentication": "basic",
				"readPreference": "secondaryPreferred", "disableTls": false, "skipCertVerification": false, "tlsHost": "m1.example.invalid", "caCertificate": fakeCA,
				"settings":      dbSettings("cdc"),
				"tableMappings": []any{map[string]any{"sourceDatabaseName": "catalog", "sourceCollection": "products", "targetTable": "products", "tableEngine": "ReplacingMergeTree"}},
			}}),
		today(TodayUnknownPipeID, "next_year", "Running", nil,
			map[string]any{todayUnknownKind: map[string]any{
				"hosts":            []any{"c1.example.invalid", "c2.example.invalid"},
				"keyspace":         "ks",
				"connectionString": cred("unknown-kind-connection-string"),
				"credentials": map[string]any{
					"password":   cred("unknown-kind-password"),
					"privateKey": "-----BEGIN PRIVATE KEY-----\n" + cred("unknown-kind-private-key") + "\n-----END PRIVATE KEY-----",
				},
				"clientKey": "-----BEGIN RSA PRIVATE KEY-----\n" + cred("unknown-kind-pem") + "\n-----END RSA PRIVATE KEY-----",
				"uri":       "cql://user:" + cred("unknown-kind-uri-password") + "@c1.example.invalid:9042/ks?sig=" + cred("unknown-kind-uri-query"),
			}}),
		today(TodayOddPipeID, "odd_values", "Running",
			map[string]any{"replicas": map[string]any{"min": 1, "max": 3}, "replicaCpuMillicores": 2000, "replicaMemoryGb": json.Number("8")},
			map[string]any{"kafka": map[string]any{"brokers": "b.example.invalid:9092", "topics": "odd"}}),
	}
}

// TodaysEndpoints returns reverse private endpoints with today's fields: a
// service attachment, custom private DNS mappings, and types and statuses
// the spec does not list.
func TodaysEndpoints() []map[string]any {
	return []map[string]any{
		{
			"id": TodayGCPEndpointID, "serviceId": TodayServiceID, "description": "Private Service Connect to Kafka",
			"type": "GCP_PSC_SERVICE_ATTACHMENT", "status": "PendingAcceptance",
			"gcpServiceAttachment": TodayServiceAttachment,
			"customPrivateDnsMappings": []any{
				map[string]any{"privateDnsName": "broker-1.example.internal"},
				map[string]any{"privateDnsName": "broker-2.example.internal"},
			},
		},
		{
			"id": TodayMSKEndpointID, "serviceId": TodayServiceID, "type": "MSK_MULTI_VPC", "status": "Provisioning",
			"mskClusterArn": "arn:aws:kafka:eu-west-1:123456789012:cluster/fake/uuid", "mskAuthentication": "SASL_SCRAM",
			"dnsNames": []any{"b-1.fake.kafka.eu-west-1.amazonaws.example.invalid"},
			"tags":     map[string]any{"team": "data"}, // a field the operator does not know
		},
	}
}

const fakeCA = "-----BEGIN CERTIFICATE-----\nFAKE-CA\n-----END CERTIFICATE-----\n"

// dbSettings are replication settings of a database source, every one set,
// the booleans as the real services send some of them: as strings.
func dbSettings(mode string) map[string]any {
	return map[string]any{
		"replicationMode": mode, "syncIntervalSeconds": 30, "pullBatchSize": 10000, "initialLoadParallelism": 2,
		"snapshotNumRowsPerPartition": 100000, "snapshotNumberOfParallelTables": 2,
		"replicationMechanism": "GTID", "useCompression": true, "allowNullableColumns": "true", "deleteOnMerge": false,
		"useJsonNativeFormat": true,
	}
}

// cdcTables are the tables of the CDC pipes' table mappings: more than one
// table's worth of the vendor-typed fields would fill otherFields' 16 entries.
var cdcTables = []string{"accounts", "contacts", "orders", "invoices", "payments", "tickets"}

// cdcTableMappings are the table mappings of a CDC pipe, one per cdcTables,
// each shaped by mapping.
func cdcTableMappings(mapping func(table string) map[string]any) []any {
	out := make([]any, 0, len(cdcTables))
	for _, table := range cdcTables {
		out = append(out, mapping(table))
	}
	return out
}

// pgTableMapping maps one table of a Postgres source with every field the
// vendor's clients type.
func pgTableMapping(table string) map[string]any {
	return map[string]any{
		"sourceSchemaName": "public", "sourceTable": table, "targetTable": "shop_" + table,
		"excludedColumns": []any{"ssn"}, "useCustomSortingKey": true, "sortingKeys": []any{"id"},
		"tableEngine": "ReplacingMergeTree", "partitionKey": "id", "partitionByExpr": "toYYYYMM(created_at)",
	}
}

// mySQLTableMapping maps one table of a MySQL source with every field the
// vendor's clients type, and the database under both the names services use.
func mySQLTableMapping(table string) map[string]any {
	return map[string]any{
		"sourceDatabaseName": "crm", "sourceSchemaName": "crm", "sourceTable": table, "targetTable": "crm_" + table,
		"excludedColumns": []any{"ssn"}, "useCustomSortingKey": true, "sortingKeys": []any{"id"},
		"tableEngine": "ReplacingMergeTree", "partitionKey": "id",
	}
}
