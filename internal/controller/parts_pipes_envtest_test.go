package controller_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// metricsText is what the manager's metrics endpoint would serve: the state
// metrics and the sync and request metrics, in the text format.
func metricsText(t *testing.T) string {
	t.Helper()
	state := prometheus.NewPedanticRegistry()
	state.MustRegister(stateMetrics)
	var families []*dto.MetricFamily
	for _, g := range []prometheus.Gatherer{state, syncMetrics} {
		fs, err := g.Gather()
		if err != nil {
			t.Fatalf("gathering metrics: %v", err)
		}
		families = append(families, fs...)
	}
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// watchOfToday is a watch of TodayServiceID, whose pipes carry credentials
// that start with secretMarker (so the suite's sweep of the log covers them)
// and are unique to this test.
func (f *fixture) watchOfToday(name string) (secret string) {
	f.t.Helper()
	secret = secretMarker + "cloud-" + f.ns
	f.fake.SetPipes(fakecloud.DefaultOrganizationID, fakecloud.TodayServiceID, fakecloud.TodaysPipes(secret))
	f.createSecrets()
	w := f.newWatch(name)
	w.Spec.ServiceID = fakecloud.TodayServiceID
	f.create(w)
	return secret
}

// Issue 15, as a user sees it: every kind of source named in status and in
// servicewatch_pipe_info, today's fields kept, one odd value costing only
// its own field (said in PipesSynced), today's endpoint fields, and no
// credential the cloud sent anywhere a user or a log reader looks.
func TestTodaysPipesAndEndpointsAsUsersSeeThem(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	secret := f.watchOfToday("today")
	w := f.waitFor("today", 20*time.Second, "Ready", isReady)

	// Every pipe listed, each with its kind.
	wantKinds := map[string]string{
		fakecloud.TodayKafkaPipeID:             "kafka",
		"d0000000-0000-4000-8000-000000000002": "objectStorage",
		"d0000000-0000-4000-8000-000000000003": "kinesis",
		"d0000000-0000-4000-8000-000000000004": "postgres",
		"d0000000-0000-4000-8000-000000000005": "pubsub",
		"d0000000-0000-4000-8000-000000000006": "mysql",
		"d0000000-0000-4000-8000-000000000007": "bigquery",
		"d0000000-0000-4000-8000-000000000008": "mongodb",
		fakecloud.TodayUnknownPipeID:           fakecloud.TodayUnknownKind,
		fakecloud.TodayOddPipeID:               "kafka",
	}
	if w.Status.Summary.Pipes != int32(len(wantKinds)) || len(w.Status.Pipes) != len(wantKinds) {
		t.Fatalf("summary.pipes %d, %d listed; want %d", w.Status.Summary.Pipes, len(w.Status.Pipes), len(wantKinds))
	}
	byID := map[string]swv1.Pipe{}
	for _, p := range w.Status.Pipes {
		byID[*p.ID] = p
		if got := deref(p.SourceKind); got != wantKinds[*p.ID] {
			t.Errorf("pipe %s: sourceKind %q, want %q", *p.ID, got, wantKinds[*p.ID])
		}
	}

	// Today's fields, read as the user expects them.
	kafka := byID[fakecloud.TodayKafkaPipeID]
	if k := kafka.Source.Kafka; deref(k.Type) != "confluent" || deref(k.Format) != "AvroConfluent" || deref(k.Authentication) != "PLAIN" ||
		deref(k.Offset.Strategy) != "from_latest" || k.ExactlyOnce == nil || !*k.ExactlyOnce {
		t.Errorf("kafka source: %s", mustJSON(t, k))
	}
	if s := kafka.Scaling; s.ReplicaCPUMillicores == nil || *s.ReplicaCPUMillicores != 500 || s.ReplicaMemoryGb == nil || *s.ReplicaMemoryGb != "2.147483648" {
		t.Errorf(`scaling "500m"/"2Gi" read as %s, want 500 millicores and 2.147483648 GB`, mustJSON(t, s))
	}
	if e := kafka.Destination.TableDefinition.Engine; deref(e.Type) != "MergeTree" {
		t.Errorf("destination engine type %q", deref(e.Type))
	}
	if ts := byID["d0000000-0000-4000-8000-000000000003"].Source.Kinesis.Timestamp; ts == nil || *ts != 1767225600 {
		t.Errorf("kinesis timestamp %v, want the numeric string sent as the spec's integer", ts)
	}
	if pg := byID["d0000000-0000-4000-8000-000000000004"].Source.Postgres; deref(pg.TLSHost) != "db.internal.example.invalid" ||
		pg.SkipCertVerification == nil || !*pg.SkipCertVerification || pg.Port == nil || *pg.Port != 5432 {
		t.Errorf("postgres source: %s", mustJSON(t, pg))
	}
	// The URI keeps its harmless options and loses its user info and the
	// options that carry secrets (a key's password, the AWS session token).
	if m := byID["d0000000-0000-4000-8000-000000000008"].Source.MongoDB; deref(m.Host) != "m1.example.invalid:27017,m2.example.invalid:27017" ||
		deref(m.Database) != "catalog" || deref(m.ReadPreference) != "secondaryPreferred" ||
		deref(m.URI) != "mongodb://m1.example.invalid:27017,m2.example.invalid:27017/catalog?replicaSet=rs0&retryWrites=true&authSource=admin" {
		t.Errorf("mongodb source: %s", mustJSON(t, m))
	}
	unknown := strings.Join(byID[fakecloud.TodayUnknownPipeID].OtherFields, "\n")
	for _, want := range []string{`source.cassandra.keyspace: "ks"`, `source.cassandra.hosts[1]: "c2.example.invalid"`, `source.cassandra.credentials: "<redacted>"`} {
		if !strings.Contains(unknown, want) {
			t.Errorf("the unknown kind's otherFields lack %s:\n%s", want, unknown)
		}
	}

	// One value of a type nobody can use: that field only, said in the
	// condition, which stays True.
	odd := byID[fakecloud.TodayOddPipeID]
	if odd.Scaling.Replicas != nil || odd.Scaling.ReplicaCPUMillicores == nil || *odd.Scaling.ReplicaCPUMillicores != 2000 {
		t.Errorf("odd pipe's scaling: %s", mustJSON(t, odd.Scaling))
	}
	if !strings.Contains(strings.Join(odd.OtherFields, "\n"), "scaling.replicas.max: 3") {
		t.Errorf("the odd value is not kept as sent: %v", odd.OtherFields)
	}
	synced := meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionPipesSynced)
	wantMsg := "Listed 10 pipes; 1 had fields left out that could not be read (kept as sent in otherFields): " +
		fakecloud.TodayOddPipeID + " (scaling.replicas)"
	if synced == nil || synced.Status != metav1.ConditionTrue || synced.Message != wantMsg {
		t.Errorf("PipesSynced = %+v, want True with message %q", synced, wantMsg)
	}

	// Today's endpoint fields.
	var gcp swv1.ReversePrivateEndpoint
	for _, e := range w.Status.ReversePrivateEndpoints {
		if *e.ID == fakecloud.TodayGCPEndpointID {
			gcp = e
		}
	}
	if deref(gcp.GCPServiceAttachment) != fakecloud.TodayServiceAttachment || len(gcp.CustomPrivateDNSMappings) != 2 ||
		deref(gcp.CustomPrivateDNSMappings[1].PrivateDNSName) != "broker-2.example.internal" || deref(gcp.Status) != "PendingAcceptance" {
		t.Errorf("GCP endpoint: %s", mustJSON(t, gcp))
	}

	// What the metrics show: each kind in source_kind. The manager sets a
	// watch's series just after it writes the status, so a scrape right
	// after Ready may come a moment before them.
	series := map[string]*regexp.Regexp{}
	for id, kind := range wantKinds {
		series[id] = regexp.MustCompile(`servicewatch_pipe_info\{[^}]*namespace="` + f.ns + `"[^}]*pipe_id="` + id + `"[^}]*source_kind="` + kind + `"`)
	}
	text := metricsText(t)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); text = metricsText(t) {
		all := strings.Contains(text, `type="GCP_PSC_SERVICE_ATTACHMENT"`)
		for _, re := range series {
			all = all && re.MatchString(text)
		}
		if all {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for id, kind := range wantKinds {
		if !series[id].MatchString(text) {
			t.Errorf("no servicewatch_pipe_info series for %s with source_kind=%q:\n%s", id, kind, linesWith(text, id))
		}
	}
	if !strings.Contains(text, `type="GCP_PSC_SERVICE_ATTACHMENT"`) {
		t.Error("the GCP endpoint has no servicewatch_reverse_private_endpoint_info series")
	}

	// Not one credential, whichever member it came in.
	markers := regexp.MustCompile(regexp.QuoteMeta(secret)+`-[a-z-]+`).FindAllString(string(mustJSON(t, fakecloud.TodaysPipes(secret))), -1)
	if len(markers) < 15 {
		t.Fatalf("only %d credentials served, want every kind of them", len(markers))
	}
	status := string(mustJSON(t, f.rawStatus("today")))
	events := string(mustJSON(t, f.events("today")))
	log := managerLog.String()
	for _, m := range append(markers, secret) {
		for where, text := range map[string]string{"status": status, "events": events, "metrics": text, "manager log": log} {
			if strings.Contains(text, m) {
				t.Errorf("%s contains the credential %s:\n%s", where, m, linesWith(text, m))
			}
		}
	}

	// Nothing loops: a second sync of the same answer keeps the condition's
	// transition time and every item as it was.
	again := f.requestSyncAndWait("today")
	if c := meta.FindStatusCondition(again.Status.Conditions, swv1.ConditionPipesSynced); c == nil || !c.LastTransitionTime.Equal(&synced.LastTransitionTime) || c.Message != wantMsg {
		t.Errorf("PipesSynced changed on an unchanged cloud: %+v", c)
	}
	if !bytes.Equal(mustJSON(t, again.Status.Pipes), mustJSON(t, w.Status.Pipes)) {
		t.Error("pipes changed on an unchanged cloud")
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Issue 28, part 2, as a user sees it: a Postgres CDC pipe and a MySQL CDC
// pipe of six table mappings each show what the vendor's own clients type
// (iamRole, the replication settings, each table mapping's engine and
// partitioning) at the types those clients give them, booleans sent as
// strings included, and their otherFields hold only what nobody types (the
// echoed credentials, redacted): it no longer overflows and loses values.
// Read from the status as stored, so that it says what any client reads.
func TestCDCPipesShowWhatTheVendorsClientsType(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.watchOfToday("cdc")
	f.waitFor("cdc", 20*time.Second, "Ready", isReady)
	pipes := map[string]map[string]any{}
	listed, _ := f.rawStatus("cdc")["pipes"].([]any)
	for _, item := range listed {
		p, _ := item.(map[string]any)
		id, _ := dig(p, "id").(string)
		pipes[id] = p
	}
	tests := []struct {
		pipe, kind string
		want       map[string]any // path below source.<kind>: value as stored
		mappings   map[string]any // path below each table mapping: value as stored
	}{
		{
			pipe: "d0000000-0000-4000-8000-000000000004", kind: "postgres",
			want: map[string]any{
				"iamRole": "arn:aws:iam::123456789012:role/fake-postgres", "settings.deleteOnMerge": true,
				"settings.enableFailoverSlots": true, "port": int64(5432),
			},
			mappings: map[string]any{"tableEngine": "ReplacingMergeTree", "partitionKey": "id", "partitionByExpr": "toYYYYMM(created_at)", "sourceSchemaName": "public"},
		},
		{
			pipe: "d0000000-0000-4000-8000-000000000006", kind: "mysql",
			want: map[string]any{
				"settings.replicationMechanism": "GTID", "settings.useCompression": true,
				"settings.allowNullableColumns": true, "settings.deleteOnMerge": false,
			},
			mappings: map[string]any{"sourceSchemaName": "crm", "partitionKey": "id", "tableEngine": "ReplacingMergeTree"},
		},
	}
	for _, tt := range tests {
		p := pipes[tt.pipe]
		source, _ := dig(p, "source."+tt.kind).(map[string]any)
		if source == nil {
			t.Fatalf("pipe %s has no %s source: %s", tt.pipe, tt.kind, indentedJSON(p))
		}
		for path, want := range tt.want {
			if got := dig(source, path); got != want {
				t.Errorf("%s pipe: source.%s.%s = %#v, want %#v", tt.kind, tt.kind, path, got, want)
			}
		}
		mappings, _ := source["tableMappings"].([]any)
		if len(mappings) != 6 {
			t.Errorf("%s pipe: %d table mappings, want 6", tt.kind, len(mappings))
		}
		for i, m := range mappings {
			for path, want := range tt.mappings {
				if got := dig(m, path); got != want {
					t.Errorf("%s pipe: source.%s.tableMappings[%d].%s = %#v, want %#v", tt.kind, tt.kind, i, path, got, want)
				}
			}
		}
		wantOther := []any{`source.` + tt.kind + `.credentials: "<redacted>"`}
		if other := p["otherFields"]; fmt.Sprint(other) != fmt.Sprint(wantOther) {
			t.Errorf("%s pipe: otherFields %s, want only %s", tt.kind, indentedJSON(other), wantOther)
		}
	}
}

// dig returns the value at the dotted path below v, a JSON object as
// decoded into map[string]any; nil when it is not there.
func dig(v any, path string) any {
	for name := range strings.SplitSeq(path, ".") {
		m, _ := v.(map[string]any)
		v = m[name]
	}
	return v
}
