package cloudapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

func listPipesFrom(t *testing.T, body string) (cloudapi.List[swv1.Pipe], error) {
	t.Helper()
	srv, _ := serve(t, reply{status: 200, contentType: "application/json", body: body})
	return newClient(cloudapi.Options{}).ListPipes(context.Background(), srv.URL, testCreds, orgID, svcID, pipeOptions{})
}

func TestListPipesDecodesEveryField(t *testing.T) {
	got, err := listPipesFrom(t, readFile(t, "testdata/pipes.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := cloudapi.List[swv1.Pipe]{
		RequestID: "9b2f4c1e-7a3d-4e5f-8a6b-1c2d3e4f5a6b",
		Total:     2,
		Items: []swv1.Pipe{
			{
				ID:        ptr("11111111-1111-4111-8111-111111111111"),
				ServiceID: ptr(svcID),
				Name:      ptr("events_kafka"),
				State:     ptr("Running"),
				Scaling: &swv1.PipeScaling{
					Replicas: ptr[int64](2), Concurrency: ptr[int64](4), ReplicaCPUMillicores: ptr[int64](500),
					ReplicaMemoryGb: dec("12.25"),
				},
				Source: &swv1.PipeSource{Kafka: &swv1.KafkaSource{
					Brokers:       ptr("b-1.example.invalid:9098,b-2.example.invalid:9098"),
					Topics:        ptr("events"),
					ConsumerGroup: ptr("cg-events"),
					IAMRole:       ptr("arn:aws:iam::123456789012:role/kafka-reader"),
					Offset:        &swv1.KafkaOffset{Timestamp: ptr("2026-01-10T08:00")},
					SchemaRegistry: &swv1.SchemaRegistry{
						URL: ptr("https://registry.example.invalid"), CACertificate: ptr("REGISTRY-CA"),
					},
					CACertificate:             ptr("BROKER-CA"),
					ReversePrivateEndpointIDs: []string{"55555555-5555-4555-8555-555555555555"},
				}},
				Destination: &swv1.PipeDestination{
					Database:     ptr("analytics"),
					Table:        ptr("events"),
					ManagedTable: ptr(true),
					TableDefinition: &swv1.TableDefinition{
						Engine:      &swv1.TableEngine{VersionColumnID: ptr("updated_at"), ColumnIDs: []string{"id", "updated_at"}},
						SortingKey:  []string{"id"},
						PartitionBy: ptr("toYYYYMM(created_at)"),
						PrimaryKey:  ptr("id"),
					},
					Columns: []swv1.DestinationColumn{
						{Name: ptr("id"), Type: ptr("UUID")},
						{Name: ptr("payload"), Type: ptr("String")},
					},
				},
				FieldMappings: []swv1.FieldMapping{{SourceField: ptr("body"), DestinationField: ptr("payload")}},
				Settings: &swv1.PipeSettings{
					StreamingMaxInsertWaitMs:                 ptr[int64](5000),
					ObjectStorageConcurrency:                 ptr[int64](1),
					ObjectStoragePollingIntervalMs:           ptr[int64](30000),
					ObjectStorageMaxInsertBytes:              ptr[int64](10737418240),
					ObjectStorageMaxFileCount:                ptr[int64](100),
					WarehouseMaxThreads:                      ptr[int64](8),
					WarehouseMaxInsertThreads:                ptr[int64](1),
					WarehouseMinInsertBlockSizeBytes:         ptr[int64](1073741824),
					WarehouseMaxDownloadThreads:              ptr[int64](4),
					WarehouseParallelDistributedInsertSelect: ptr[int64](2),
					ObjectStorageUseClusterFunction:          ptr(true),
					WarehouseParallelViewProcessing:          ptr(false),
				},
				CreatedAt:  ptr("2026-01-10T08:00:00Z"),
				UpdatedAt:  ptr("2026-01-12 16:20:00.123456+00"),
				SourceKind: ptr("kafka"),
			},
			{
				ID:        ptr("22222222-2222-4222-8222-222222222222"),
				ServiceID: ptr(svcID),
				Name:      ptr("logs"),
				State:     ptr("Stopped"),
				Scaling: &swv1.PipeScaling{
					Replicas: ptr[int64](0), Concurrency: ptr[int64](1), ReplicaCPUMillicores: ptr[int64](250),
					ReplicaMemoryGb: dec("0.5"),
				},
				Source: &swv1.PipeSource{
					ObjectStorage: &swv1.ObjectStorageSource{
						URL:                ptr("https://bucket.example.invalid/logs/**/*.gz"),
						Delimiter:          ptr(""),
						Compression:        ptr("auto"),
						IsContinuous:       ptr(false),
						QueueURL:           ptr("https://queue.example.invalid/123/logs"),
						IAMRole:            ptr("arn:aws:iam::123456789012:role/storage-reader"),
						ConnectionString:   ptr("<redacted>"),
						Path:               ptr("logs/*"),
						AzureContainerName: ptr("container"),
					},
					Kinesis: &swv1.KinesisSource{
						StreamName:        ptr("clicks"),
						Region:            ptr("us-east-1"),
						UseEnhancedFanOut: ptr(true),
						Timestamp:         ptr[int64](1767254400000),
						IAMRole:           ptr("arn:aws:iam::123456789012:role/kinesis-reader"),
					},
					Postgres: &swv1.PostgresSource{
						Host:     ptr("db.example.invalid"),
						Port:     ptr[int64](5432),
						Database: ptr("shop"),
						Settings: &swv1.PostgresSettings{
							SyncIntervalSeconds:            ptr[int64](10),
							PullBatchSize:                  ptr[int64](100000),
							PublicationName:                ptr("pub"),
							ReplicationSlotName:            ptr("slot"),
							AllowNullableColumns:           ptr(true),
							InitialLoadParallelism:         ptr[int64](4),
							SnapshotNumRowsPerPartition:    ptr[int64](100000),
							SnapshotNumberOfParallelTables: ptr[int64](1),
							EnableFailoverSlots:            ptr(false),
						},
						TableMappings: []swv1.PostgresTableMapping{
							{
								SourceSchemaName: ptr("public"), SourceTable: ptr("orders"), TargetTable: ptr("orders"),
								ExcludedColumns: []string{"card_number"}, UseCustomSortingKey: ptr(true),
								SortingKeys: []string{"customer_id", "id"},
							},
							{
								SourceSchemaName: ptr("public"), SourceTable: ptr("customers"), TargetTable: ptr("customers"),
								ExcludedColumns: []string{}, UseCustomSortingKey: ptr(false), SortingKeys: []string{},
							},
						},
					},
				},
				Destination:   &swv1.PipeDestination{Database: ptr("analytics"), Table: ptr("logs"), ManagedTable: ptr(false), Columns: []swv1.DestinationColumn{}},
				FieldMappings: []swv1.FieldMapping{},
				Settings:      &swv1.PipeSettings{},
				CreatedAt:     ptr("2026-01-10T08:00:00Z"),
				UpdatedAt:     ptr("2026-01-10T08:00:00Z"),
				SourceKind:    ptr("objectStorage,kinesis,postgres"),
			},
		},
	}
	assertEqual(t, got, want)
}

// The items go into status as they are: what was sent (false, 0, "", [])
// must be written back, what was absent or null must stay out, and decimals
// must keep their value.
func TestPipesRoundTripKeepsPresenceAndDecimals(t *testing.T) {
	got, err := listPipesFrom(t, readFile(t, "testdata/pipes.json"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(got.Items[1])
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Destination map[string]json.RawMessage `json:"destination"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"replicas":0`, `"replicaMemoryGb":0.5`, `"delimiter":""`, `"isContinuous":false`,
		`"fieldMappings":[]`, `"settings":{}`, `"columns":[]`, `"excludedColumns":[]`, `"managedTable":false`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("re-marshaled pipe lacks %s:\n%s", want, b)
		}
	}
	if _, ok := m.Destination["tableDefinition"]; ok {
		t.Errorf("absent tableDefinition came back: %s", b)
	}
}

func TestListPipesToleratesNullsUnknownFieldsAndValues(t *testing.T) {
	got, err := listPipesFrom(t, readFile(t, "testdata/pipes_sparse.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The pipe without an id comes first: items are ordered by id, and those
	// without one lead. A decimal finer than the API server can store takes
	// the form it would store (swv1.Decimal): 1.000000000000000000001 is 1.
	// Members the spec does not list, dropped before issue 15, are kept as
	// sent in otherFields, and a source of a kind the operator does not know
	// names its kind.
	want := cloudapi.List[swv1.Pipe]{
		RequestID: "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
		Total:     2,
		Items: []swv1.Pipe{
			{},
			{
				ID:          ptr("33333333-3333-4333-8333-333333333333"),
				State:       ptr("SomeStateNotInTheSpec"),
				Scaling:     &swv1.PipeScaling{ReplicaMemoryGb: dec("1")},
				Source:      &swv1.PipeSource{},
				Settings:    &swv1.PipeSettings{WarehouseMaxThreads: ptr[int64](0)},
				CreatedAt:   ptr("not a timestamp"),
				SourceKind:  ptr("futureKind"),
				OtherFields: []string{`scaling.gpu: 1`, `source.futureKind.x: 1`, `settings.a_new_setting: "x"`, `labels.team: "data"`},
			},
		},
	}
	assertEqual(t, got, want)
	b := mustJSON(t, got.Items[1], "")
	const wantJSON = `{"id":"33333333-3333-4333-8333-333333333333","state":"SomeStateNotInTheSpec",` +
		`"scaling":{"replicaMemoryGb":1},"source":{},"settings":{"warehouse_max_threads":0},` +
		`"createdAt":"not a timestamp","sourceKind":"futureKind",` +
		`"otherFields":["scaling.gpu: 1","source.futureKind.x: 1","settings.a_new_setting: \"x\"","labels.team: \"data\""]}`
	if string(b) != wantJSON {
		t.Errorf("re-marshaled:\n got %s\nwant %s", b, wantJSON)
	}
}

func TestListPipesEmptyResultIsEmptyNotNil(t *testing.T) {
	got, err := listPipesFrom(t, `{"status":200,"requestId":"r","result":[]}`)
	if err != nil {
		t.Fatal(err)
	}
	if got.Items == nil || len(got.Items) != 0 {
		t.Fatalf("Items = %#v, want empty non-nil", got.Items)
	}
}

func TestListReversePrivateEndpointsDecodesEveryField(t *testing.T) {
	srv, _ := serve(t, reply{status: 200, contentType: "application/json", body: readFile(t, "testdata/reverse_private_endpoints.json")})
	got, err := newClient(cloudapi.Options{}).ListReversePrivateEndpoints(context.Background(), srv.URL, testCreds, orgID, svcID,
		endpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := cloudapi.List[swv1.ReversePrivateEndpoint]{
		RequestID: "1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e",
		Total:     2,
		Items: []swv1.ReversePrivateEndpoint{
			{
				ID:                         ptr("55555555-5555-4555-8555-555555555555"),
				ServiceID:                  ptr(svcID),
				Description:                ptr("Private link to Kafka"),
				Type:                       ptr("VPC_ENDPOINT_SERVICE"),
				VPCEndpointServiceName:     ptr("com.amazonaws.vpce.us-east-1.vpce-svc-0fake"),
				VPCResourceConfigurationID: ptr("rcfg-0fake"),
				VPCResourceShareArn:        ptr("arn:aws:ram:us-east-1:123456789012:resource-share/fake"),
				MSKClusterArn:              ptr("arn:aws:kafka:us-east-1:123456789012:cluster/fake/uuid"),
				MSKAuthentication:          ptr("SASL_IAM"),
				EndpointID:                 ptr("vpce-0fake"),
				DNSNames:                   []string{"a.example.invalid", "b.example.invalid"},
				PrivateDNSNames:            []string{},
				Status:                     ptr("Ready"),
			},
			{
				ID:          ptr("66666666-6666-4666-8666-666666666666"),
				Type:        ptr("A_TYPE_NOT_IN_THE_SPEC"),
				Status:      ptr("Provisioning"),
				OtherFields: []string{`tags[0]: "x"`}, // dropped before issue 15
			},
		},
	}
	assertEqual(t, got, want)
}

func TestGetAlertDecodesEveryField(t *testing.T) {
	srv, _ := serve(t, reply{status: 200, contentType: "application/json; charset=utf-8",
		header: map[string]string{"X-Request-Id": "alert-req-1"}, body: readFile(t, "testdata/alert.json")})
	got, err := newClient(cloudapi.Options{}).GetAlert(context.Background(), srv.URL, testToken, "65f1a2b3c4d5e6f708192a3b")
	if err != nil {
		t.Fatal(err)
	}
	want := cloudapi.AlertResult{
		RequestID: "alert-req-1",
		Alert: swv1.AlertStatus{
			ID:            "65f1a2b3c4d5e6f708192a3b",
			Name:          ptr("Ingest lag"),
			Message:       ptr("Pipe ingest lag is high"),
			Threshold:     dec("12.25"),
			Interval:      ptr("5m"),
			ThresholdType: ptr("above"),
			Source:        ptr("tile"),
			State:         ptr("active"),
			Channel:       &swv1.AlertChannel{Type: ptr("webhook"), WebhookID: ptr("65f1a2b3c4d5e6f708192b01")},
			Team:          ptr("65f1a2b3c4d5e6f708192c01"),
			TileID:        ptr("tile-1"),
			Dashboard:     ptr("65f1a2b3c4d5e6f708192d01"),
			CreatedAt:     ptr("2026-01-15T09:30:00.000Z"),
			UpdatedAt:     ptr("2026-02-01T17:45:12.345Z"),
		},
	}
	assertEqual(t, got, want)
}

func TestGetAlertToleratesNullsAndUnknownFields(t *testing.T) {
	srv, _ := serve(t, reply{status: 200, contentType: "application/json", body: readFile(t, "testdata/alert_sparse.json")})
	got, err := newClient(cloudapi.Options{}).GetAlert(context.Background(), srv.URL, testToken, "a1")
	if err != nil {
		t.Fatal(err)
	}
	want := cloudapi.AlertResult{Alert: swv1.AlertStatus{
		ID:        "a1",
		Threshold: dec("0.1"), // 0.10 as the API server stores it
		Channel:   &swv1.AlertChannel{Type: ptr("email")},
		State:     ptr("snoozed"),
		// A silenced object, even of nulls, says the alert is silenced.
		Silenced: &swv1.AlertSilence{},
	}}
	assertEqual(t, got, want)
	b := mustJSON(t, got.Alert, "")
	if want := `{"id":"a1","threshold":0.1,"state":"snoozed","channel":{"type":"email"},"silenced":{}}`; string(b) != want {
		t.Errorf("re-marshaled:\n got %s\nwant %s", b, want)
	}
}
