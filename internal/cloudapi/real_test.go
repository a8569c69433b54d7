package cloudapi_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// Issue 15: the services as they are. testdata/pipes_real.json holds one
// pipe of each of the eight kinds of source, and one of a kind the operator
// does not know, shaped like the services send them today, with every
// credential a server might echo set to a value that starts with MARKER-.

func TestListPipesReadsEverySourceKind(t *testing.T) {
	got, err := listPipesFrom(t, readFile(t, "testdata/pipes_real.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The kinesis pipe's timestamp is a date-time, not the spec's integer:
	// only that value is left out.
	if got.Total != 9 || got.Incomplete != 1 {
		t.Fatalf("Total %d, Incomplete %d %v; want 9, 1 (the kinesis timestamp)", got.Total, got.Incomplete, got.IncompleteItems)
	}
	byName := map[string]swv1.Pipe{}
	for _, p := range got.Items {
		byName[*p.Name] = p
	}
	common := func(typ, format, auth string) swv1.SourceCommon {
		c := swv1.SourceCommon{}
		if typ != "" {
			c.Type = ptr(typ)
		}
		if format != "" {
			c.Format = ptr(format)
		}
		if auth != "" {
			c.Authentication = ptr(auth)
		}
		return c
	}
	tests := []struct {
		pipe, kind string
		source     swv1.PipeSource
		other      []string
	}{
		{
			pipe: "events_kafka", kind: "kafka",
			source: swv1.PipeSource{Kafka: &swv1.KafkaSource{
				SourceCommon: common("msk", "JSONEachRow", "SCRAM-SHA-512"),
				Brokers:      ptr("b-1.example.invalid:9096"), Topics: ptr("events"),
				Offset: &swv1.KafkaOffset{Strategy: ptr("from_timestamp"), Timestamp: ptr("2026-01-01T00:00")},
				// User info and query removed from the URL.
				SchemaRegistry: &swv1.SchemaRegistry{URL: ptr("https://registry.example.invalid/path"), Authentication: ptr("PLAIN")},
				ExactlyOnce:    ptr(true),
			}},
			other: []string{`source.kafka.credentials: "<redacted>"`, `source.kafka.schemaRegistry.credentials: "<redacted>"`},
		},
		{
			pipe: "logs_s3", kind: "objectStorage",
			source: swv1.PipeSource{ObjectStorage: &swv1.ObjectStorageSource{
				SourceCommon: common("s3", "Parquet", "IAM_USER"),
				URL:          ptr("https://bucket.example.invalid/logs/*.parquet"), ConnectionString: ptr("<redacted>"),
			}},
			other: []string{`source.objectStorage.accessKey: "<redacted>"`},
		},
		{
			pipe: "clicks_kinesis", kind: "kinesis",
			source: swv1.PipeSource{Kinesis: &swv1.KinesisSource{
				SourceCommon: common("", "JSONEachRow", "IAM_ROLE"),
				StreamName:   ptr("clicks"), Region: ptr("us-east-1"), IteratorType: ptr("AT_TIMESTAMP"),
				IAMRole: ptr("arn:aws:iam::123456789012:role/kinesis-reader"),
			}},
			other: []string{`source.kinesis.timestamp: "2026-01-01T00:00"`},
		},
		{
			pipe: "shop_postgres", kind: "postgres",
			source: swv1.PipeSource{Postgres: &swv1.PostgresSource{
				SourceCommon: common("postgres", "", "basic"),
				SourceTLS:    swv1.SourceTLS{DisableTLS: ptr(false), SkipCertVerification: ptr(true), TLSHost: ptr("db.internal.example.invalid")},
				Host:         ptr("db.example.invalid"), Port: ptr[int64](5432), Database: ptr("shop"), // port sent as "5432"
				IAMRole: ptr("arn:aws:iam::123456789012:role/pg-reader"),
				// deleteOnMerge sent as "true"
				Settings: &swv1.PostgresSettings{ReplicationMode: ptr("cdc"), SyncIntervalSeconds: ptr[int64](10), DeleteOnMerge: ptr(true)},
				TableMappings: []swv1.PostgresTableMapping{{
					SourceSchemaName: ptr("public"), SourceTable: ptr("orders"), TargetTable: ptr("orders"),
					TableEngine: ptr("ReplacingMergeTree"), PartitionKey: ptr("id"), PartitionByExpr: ptr("toYYYYMM(created_at)"),
				}},
			}},
			other: []string{`source.postgres.credentials: "<redacted>"`},
		},
		{
			pipe: "orders_pubsub", kind: "pubsub",
			source: swv1.PipeSource{PubSub: &swv1.PubSubSource{
				SourceCommon: common("", "JSONEachRow", "SERVICE_ACCOUNT"),
				ProjectID:    ptr("my-gcp-project"), Topic: ptr("orders"), Subscription: ptr("orders-sub"),
				SeekType: ptr("timestamp"), SeekTimestamp: ptr("2026-01-01T00:00:00Z"), EnableOrdering: ptr(true), AckDeadline: ptr[int64](60),
			}},
			other: []string{`source.pubsub.serviceAccountKey: "<redacted>"`},
		},
		{
			pipe: "crm_mysql", kind: "mysql",
			source: swv1.PipeSource{MySQL: &swv1.MySQLSource{
				SourceCommon: common("rdsmysql", "", "basic"),
				SourceTLS:    swv1.SourceTLS{DisableTLS: ptr(false), SkipCertVerification: ptr(false), TLSHost: ptr("mysql.internal.example.invalid")},
				Host:         ptr("mysql.example.invalid"), Port: ptr[int64](3306), ServerID: ptr[int64](4242),
				Settings: &swv1.DatabaseSourceSettings{
					ReplicationMode: ptr("cdc"), PullBatchSize: ptr[int64](10000), ReplicationMechanism: ptr("GTID"),
					UseCompression: ptr(true), AllowNullableColumns: ptr(false), DeleteOnMerge: ptr(true), // allowNullableColumns sent as "false"
				},
				TableMappings: []swv1.MySQLTableMapping{{
					SourceDatabaseName: ptr("crm"), SourceSchemaName: ptr("crm"), PartitionKey: ptr("account_id"),
					TableMapping: swv1.TableMapping{SourceTable: ptr("accounts"), TargetTable: ptr("crm_accounts"), TableEngine: ptr("ReplacingMergeTree")},
				}},
			}},
			other: []string{`source.mysql.credentials: "<redacted>"`},
		},
		{
			pipe: "warehouse_bigquery", kind: "bigquery",
			source: swv1.PipeSource{BigQuery: &swv1.BigQuerySource{
				SourceCommon:        common("", "", "SERVICE_ACCOUNT"),
				SnapshotStagingPath: ptr("gs://staging-bucket/clickpipes/"),
				Settings:            &swv1.DatabaseSourceSettings{ReplicationMode: ptr("snapshot"), AllowNullableColumns: ptr(true)},
				TableMappings: []swv1.BigQueryTableMapping{{
					SourceDatasetName: ptr("sales"),
					TableMapping:      swv1.TableMapping{SourceTable: ptr("orders"), TargetTable: ptr("bq_orders")},
				}},
			}},
			other: []string{`source.bigquery.credentials: "<redacted>"`},
		},
		{
			pipe: "catalog_mongodb", kind: "mongodb",
			source: swv1.PipeSource{MongoDB: &swv1.MongoDBSource{
				SourceTLS: swv1.SourceTLS{DisableTLS: ptr(false), TLSHost: ptr("cluster0.example.invalid")},
				// The URI and what is read from it, without its user, password
				// and the option that carries a secret; authSource stays.
				URI:  ptr("mongodb+srv://cluster0.example.invalid/catalog?authSource=admin"),
				Host: ptr("cluster0.example.invalid"), Database: ptr("catalog"), ReadPreference: ptr("secondaryPreferred"),
				Settings:      &swv1.DatabaseSourceSettings{ReplicationMode: ptr("cdc"), DeleteOnMerge: ptr(false), UseJSONNativeFormat: ptr(true)},
				TableMappings: []swv1.CollectionMapping{{SourceDatabaseName: ptr("catalog"), SourceCollection: ptr("products"), TargetTable: ptr("products")}},
			}},
		},
		{
			pipe: "next_year", kind: "cassandra",
			source: swv1.PipeSource{},
			other: []string{
				`source.cassandra.hosts[0]: "c1.example.invalid"`,
				`source.cassandra.hosts[1]: "c2.example.invalid"`,
				`source.cassandra.keyspace: "ks"`,
				`source.cassandra.credentials: "<redacted>"`,
				`source.cassandra.privateKey: "<redacted>"`,
				`source.cassandra.uri: "cql://c1.example.invalid:9042/ks"`,
				`source.cassandra.tlsClientKey: "<redacted>"`, // a PEM private key, whatever its name
				`source.cassandra.serviceAccountKey: "<redacted>"`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			p, ok := byName[tt.pipe]
			if !ok {
				t.Fatalf("pipe %s not listed", tt.pipe)
			}
			if p.SourceKind == nil || *p.SourceKind != tt.kind {
				t.Errorf("sourceKind = %s, want %s", show(p.SourceKind), tt.kind)
			}
			assertEqual(t, *p.Source, tt.source)
			assertEqual(t, p.OtherFields, tt.other)
		})
	}
	kafka := byName["events_kafka"]
	if e := kafka.Destination.TableDefinition.Engine; e.Type == nil || *e.Type != "ReplacingMergeTree" {
		t.Errorf("destination.tableDefinition.engine.type = %s, want ReplacingMergeTree", show(e.Type))
	}
}

// No credential of the document reaches what the client returns, nor what
// it shows to Each.
func TestListPipesShowsNoCredentialOfAnyMember(t *testing.T) {
	body := readFile(t, "testdata/pipes_real.json")
	markers := regexp.MustCompile(`MARKER-[A-Z-]+`).FindAllString(body, -1)
	if len(markers) < 15 {
		t.Fatalf("the document holds %d markers, want every credential field", len(markers))
	}
	var each []byte
	srv, _ := serve(t, reply{status: 200, contentType: "application/json", body: body})
	got, err := newClient(cloudapi.Options{}).ListPipes(context.Background(), srv.URL, testCreds, orgID, svcID, pipeOptions{
		Each: func(p *swv1.Pipe) { each = append(each, mustJSON(t, p, "")...) },
	})
	if err != nil {
		t.Fatal(err)
	}
	kept := string(mustJSON(t, got, ""))
	for _, m := range markers {
		if strings.Contains(kept, m) || strings.Contains(string(each), m) {
			t.Errorf("%s reached the client's result", m)
		}
	}
}

// One odd value costs its own field, never the item or the list: numbers
// also as numeric strings, scaling also as Kubernetes quantities, the
// kinesis timestamp an integer (a date-time string is left out). What cannot be used is left out,
// kept as sent in otherFields, and counted in Incomplete.
func TestListPipesReadsEachValueOnItsOwn(t *testing.T) {
	tests := []struct {
		name, pipe string
		want       swv1.Pipe
		leftOut    string // "" when nothing is left out
	}{
		{name: "cpu as millicores quantity", pipe: `{"scaling":{"replicaCpuMillicores":"500m"}}`,
			want: swv1.Pipe{Scaling: &swv1.PipeScaling{ReplicaCPUMillicores: ptr[int64](500)}}},
		{name: "cpu as cores quantity", pipe: `{"scaling":{"replicaCpuMillicores":"2k"}}`,
			want: swv1.Pipe{Scaling: &swv1.PipeScaling{ReplicaCPUMillicores: ptr[int64](2_000_000)}}},
		{name: "cpu as numeric string", pipe: `{"scaling":{"replicaCpuMillicores":"250"}}`,
			want: swv1.Pipe{Scaling: &swv1.PipeScaling{ReplicaCPUMillicores: ptr[int64](250)}}},
		{name: "cpu as a whole float", pipe: `{"scaling":{"replicaCpuMillicores":1e3}}`,
			want: swv1.Pipe{Scaling: &swv1.PipeScaling{ReplicaCPUMillicores: ptr[int64](1000)}}},
		{name: "cpu not a whole number of millicores", pipe: `{"scaling":{"replicas":2,"replicaCpuMillicores":"1500u"}}`,
			want:    swv1.Pipe{Scaling: &swv1.PipeScaling{Replicas: ptr[int64](2)}, OtherFields: []string{`scaling.replicaCpuMillicores: "1500u"`}},
			leftOut: "scaling.replicaCpuMillicores"},
		{name: "memory in binary gigabytes", pipe: `{"scaling":{"replicaMemoryGb":"2Gi"}}`,
			want: swv1.Pipe{Scaling: &swv1.PipeScaling{ReplicaMemoryGb: dec("2.147483648")}}},
		{name: "memory in decimal units", pipe: `{"scaling":{"replicaMemoryGb":"500M"}}`,
			want: swv1.Pipe{Scaling: &swv1.PipeScaling{ReplicaMemoryGb: dec("0.5")}}},
		{name: "memory as numeric string", pipe: `{"scaling":{"replicaMemoryGb":"0.5"}}`,
			want: swv1.Pipe{Scaling: &swv1.PipeScaling{ReplicaMemoryGb: dec("0.5")}}},
		{name: "memory that is not exact once stored", pipe: `{"scaling":{"replicaMemoryGb":"123456789123456789123Ki"}}`,
			want:    swv1.Pipe{Scaling: &swv1.PipeScaling{}, OtherFields: []string{`scaling.replicaMemoryGb: "123456789123456789123Ki"`}},
			leftOut: "scaling.replicaMemoryGb"},
		{name: "memory no number", pipe: `{"scaling":{"replicaMemoryGb":"lots"}}`,
			want:    swv1.Pipe{Scaling: &swv1.PipeScaling{}, OtherFields: []string{`scaling.replicaMemoryGb: "lots"`}},
			leftOut: "scaling.replicaMemoryGb"},
		{name: "kinesis timestamp as integer", pipe: `{"source":{"kinesis":{"timestamp":1767225600}}}`,
			want: swv1.Pipe{Source: &swv1.PipeSource{Kinesis: &swv1.KinesisSource{Timestamp: ptr[int64](1767225600)}}, SourceKind: ptr("kinesis")}},
		{name: "kinesis timestamp as string", pipe: `{"source":{"kinesis":{"timestamp":"2026-01-01T00:00"}}}`,
			want: swv1.Pipe{Source: &swv1.PipeSource{Kinesis: &swv1.KinesisSource{}}, SourceKind: ptr("kinesis"),
				OtherFields: []string{`source.kinesis.timestamp: "2026-01-01T00:00"`}},
			leftOut: "source.kinesis.timestamp"},
		{name: "integer as string", pipe: `{"settings":{"warehouse_max_threads":"8"}}`,
			want: swv1.Pipe{Settings: &swv1.PipeSettings{WarehouseMaxThreads: ptr[int64](8)}}},
		{name: "integer with a fraction", pipe: `{"scaling":{"replicas":1.5,"concurrency":2}}`,
			want:    swv1.Pipe{Scaling: &swv1.PipeScaling{Concurrency: ptr[int64](2)}, OtherFields: []string{`scaling.replicas: 1.5`}},
			leftOut: "scaling.replicas"},
		{name: "boolean as string", pipe: `{"source":{"objectStorage":{"isContinuous":"true"}}}`,
			want: swv1.Pipe{Source: &swv1.PipeSource{ObjectStorage: &swv1.ObjectStorageSource{IsContinuous: ptr(true)}}, SourceKind: ptr("objectStorage")}},
		{name: "object where a number belongs", pipe: `{"name":"n","scaling":{"replicas":{"min":1,"max":3}}}`,
			want:    swv1.Pipe{Name: ptr("n"), Scaling: &swv1.PipeScaling{}, OtherFields: []string{`scaling.replicas.min: 1`, `scaling.replicas.max: 3`}},
			leftOut: "scaling.replicas"},
		{name: "string where an object belongs", pipe: `{"scaling":"large"}`,
			want: swv1.Pipe{OtherFields: []string{`scaling: "large"`}}, leftOut: "scaling"},
		{name: "one bad element of a list", pipe: `{"fieldMappings":[{"sourceField":"a"},7,{"sourceField":"b"}]}`,
			want:    swv1.Pipe{FieldMappings: []swv1.FieldMapping{{SourceField: ptr("a")}, {SourceField: ptr("b")}}, OtherFields: []string{`fieldMappings[1]: 7`}},
			leftOut: "fieldMappings[1]"},
		{name: "a cloud member named like an operator field", pipe: `{"sourceKind":"x","otherFields":[1]}`,
			want: swv1.Pipe{OtherFields: []string{`sourceKind: "x"`, `otherFields[0]: 1`}}},
		{name: "a pipe of the spec's shape has its URLs and credentials cleaned too",
			pipe: `{"source":{"objectStorage":{"url":"https://user:MARKER@bucket.example.invalid/x/*.gz?sig=MARKER","connectionString":"MARKER"}}}`,
			want: swv1.Pipe{Source: &swv1.PipeSource{ObjectStorage: &swv1.ObjectStorageSource{
				URL: ptr("https://bucket.example.invalid/x/*.gz"), ConnectionString: ptr("<redacted>"),
			}}, SourceKind: ptr("objectStorage")}},
		{name: "several kinds: known ones in their order, then the others as sent",
			pipe: `{"source":{"zeta":{},"postgres":{},"kafka":{},"alpha":{}}}`,
			want: swv1.Pipe{Source: &swv1.PipeSource{Kafka: &swv1.KafkaSource{}, Postgres: &swv1.PostgresSource{}}, SourceKind: ptr("kafka,postgres,zeta,alpha"),
				OtherFields: []string{"source.zeta: {}", "source.alpha: {}"}}},
		{name: "a connection string of the wrong type", pipe: `{"source":{"objectStorage":{"connectionString":{"key":"MARKER"}}}}`,
			want: swv1.Pipe{Source: &swv1.PipeSource{ObjectStorage: &swv1.ObjectStorageSource{}}, SourceKind: ptr("objectStorage"),
				OtherFields: []string{`source.objectStorage.connectionString: "<redacted>"`}},
			leftOut: "source.objectStorage.connectionString"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assertReadBetweenGoodPipes(t, tt.pipe, tt.want, tt.leftOut) })
	}
}

// assertReadBetweenGoodPipes lists pipe (a JSON object) between two good
// pipes and checks that it reads as want (its id aside), with leftOut the
// path counted as left out ("" for none), and that the list and the other
// pipes survive.
func assertReadBetweenGoodPipes(t *testing.T, pipe string, want swv1.Pipe, leftOut string) {
	t.Helper()
	body := `{"status":200,"result":[{"id":"a","name":"good"},` + withID(pipe, "b") + `,{"id":"c","name":"good too"}]}`
	got, err := listPipesFrom(t, body)
	if err != nil {
		t.Fatalf("the list failed: %v", err)
	}
	if len(got.Items) != 3 || *got.Items[0].Name != "good" || *got.Items[2].Name != "good too" {
		t.Fatalf("the other items did not come through: %s", mustJSON(t, got.Items, ""))
	}
	want.ID = ptr("b")
	assertEqual(t, got.Items[1], want)
	wantIncomplete, wantItems := 0, []string(nil)
	if leftOut != "" {
		wantIncomplete, wantItems = 1, []string{"b (" + leftOut + ")"}
	}
	if got.Incomplete != wantIncomplete || fmt.Sprint(got.IncompleteItems) != fmt.Sprint(wantItems) {
		t.Errorf("Incomplete %d %q, want %d %q", got.Incomplete, got.IncompleteItems, wantIncomplete, wantItems)
	}
}

// withID puts "id":id first in the JSON object pipe.
func withID(pipe, id string) string {
	return `{"id":"` + id + `",` + strings.TrimPrefix(pipe, "{")
}

// An item that is not an object is left out whole and counted; the list
// stands.
func TestListPipesLeavesOutAnItemThatIsNoObject(t *testing.T) {
	got, err := listPipesFrom(t, `{"status":200,"result":[{"id":"a"},"pipe",{"id":"c"},[1]]}`)
	if err != nil {
		t.Fatal(err)
	}
	if pipeIDs(got.Items) != "a c" || got.Total != 2 || got.Incomplete != 2 {
		t.Fatalf("kept %q of %d, Incomplete %d; want \"a c\" of 2, 2", pipeIDs(got.Items), got.Total, got.Incomplete)
	}
	want := []string{"item 2 (not a JSON object, left out)", "item 4 (not a JSON object, left out)"}
	assertEqual(t, got.IncompleteItems, want)
}

// Many items with fields left out: the count covers them all, the
// descriptions the first five, each with its first four paths.
func TestListPipesIncompleteIsBounded(t *testing.T) {
	var items []string
	for i := range 8 {
		items = append(items, fmt.Sprintf(`{"id":"p%d","scaling":{"replicas":"x","concurrency":"x","replicaCpuMillicores":"x","replicaMemoryGb":"x"},"settings":{"warehouse_max_threads":"x"}}`, i))
	}
	got, err := listPipesFrom(t, `{"status":200,"result":[`+strings.Join(items, ",")+`]}`)
	if err != nil {
		t.Fatal(err)
	}
	if got.Incomplete != 8 || len(got.IncompleteItems) != 5 {
		t.Fatalf("Incomplete %d with %d descriptions, want 8 with 5", got.Incomplete, len(got.IncompleteItems))
	}
	const want = "p0 (scaling.replicas, scaling.concurrency, scaling.replicaCpuMillicores, scaling.replicaMemoryGb and 1 more)"
	if got.IncompleteItems[0] != want {
		t.Errorf("first description %q, want %q", got.IncompleteItems[0], want)
	}
}

// otherFields stays small whatever a pipe carries: 16 entries of at most 256
// bytes, and one that says more were sent.
func TestOtherFieldsAreBounded(t *testing.T) {
	var members []string
	for i := range 100 {
		members = append(members, fmt.Sprintf(`"f%d":{"deep":[%q]}`, i, strings.Repeat("v", 1000)))
	}
	got, err := listPipesFrom(t, `{"status":200,"result":[{"id":"a","source":{"ninth":{`+strings.Join(members, ",")+`}}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	other := got.Items[0].OtherFields
	if len(other) != 17 || other[16] != "… more fields not shown" {
		t.Fatalf("%d entries, last %q; want 16 and a last one saying more were sent", len(other), other[len(other)-1])
	}
	for _, e := range other {
		if len(e) > 256 {
			t.Errorf("entry of %d bytes: %.40s…", len(e), e)
		}
	}
	if !strings.HasPrefix(other[0], `source.ninth.f0.deep[0]: "vvv`) || !strings.HasSuffix(other[0], "…") {
		t.Errorf("first entry %.60s…", other[0])
	}
	if *got.Items[0].SourceKind != "ninth" {
		t.Errorf("sourceKind %q, want ninth", *got.Items[0].SourceKind)
	}
}

func TestListReversePrivateEndpointsReadsTodaysFields(t *testing.T) {
	var mappings []string
	for i := range 40 {
		mappings = append(mappings, fmt.Sprintf(`{"privateDnsName":"broker-%d.example.internal"}`, i))
	}
	body := `{"status":200,"result":[` +
		`{"id":"e1","type":"GCP_PSC_SERVICE_ATTACHMENT","status":"PendingAcceptance",` +
		`"gcpServiceAttachment":"projects/p/regions/us-central1/serviceAttachments/kafka",` +
		`"customPrivateDnsMappings":[{"privateDnsName":"broker-1.example.internal"},null,{"privateDnsName":"broker-2.example.internal","port":9092}]},` +
		`{"id":"e2","type":"MSK_MULTI_VPC","status":"Expired","dnsNames":["a",5],"customPrivateDnsMappings":[` + strings.Join(mappings, ",") + `]},` +
		`{"id":"e3","type":"VPC_RESOURCE","status":"Rejected","customPrivateDnsMappings":"broker.example.internal"}]}`
	srv, _ := serve(t, reply{status: 200, contentType: "application/json", body: body})
	got, err := newClient(cloudapi.Options{}).ListReversePrivateEndpoints(context.Background(), srv.URL, testCreds, orgID, svcID, endpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != 3 {
		t.Fatalf("%d endpoints, want 3", len(got.Items))
	}
	assertEqual(t, got.Items[0], swv1.ReversePrivateEndpoint{
		ID: ptr("e1"), Type: ptr("GCP_PSC_SERVICE_ATTACHMENT"), Status: ptr("PendingAcceptance"),
		GCPServiceAttachment: ptr("projects/p/regions/us-central1/serviceAttachments/kafka"),
		CustomPrivateDNSMappings: []swv1.PrivateDNSMapping{
			{PrivateDNSName: ptr("broker-1.example.internal")}, {PrivateDNSName: ptr("broker-2.example.internal")},
		},
		OtherFields: []string{"customPrivateDnsMappings[2].port: 9092"},
	})
	e2 := got.Items[1]
	if len(e2.CustomPrivateDNSMappings) != 32 || *e2.CustomPrivateDNSMappings[31].PrivateDNSName != "broker-31.example.internal" {
		t.Errorf("kept %d DNS mappings, want the first 32", len(e2.CustomPrivateDNSMappings))
	}
	assertEqual(t, e2.DNSNames, []string{"a", "5"})
	assertEqual(t, e2.OtherFields, []string{"customPrivateDnsMappings: 8 more not shown"})
	if got.Items[2].CustomPrivateDNSMappings != nil || got.Incomplete != 1 || got.IncompleteItems[0] != "e3 (customPrivateDnsMappings)" {
		t.Errorf("e3: %s; Incomplete %d %q", mustJSON(t, got.Items[2], ""), got.Incomplete, got.IncompleteItems)
	}
	var statuses []string
	for _, e := range got.Items {
		statuses = append(statuses, *e.Status)
	}
	if strings.Join(statuses, ",") != "PendingAcceptance,Expired,Rejected" {
		t.Errorf("statuses %v, want them as sent", statuses)
	}
}
