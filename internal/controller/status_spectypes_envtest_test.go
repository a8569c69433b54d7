package controller_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// specPipe is a pipe as a consumer written against shared/spec/cloud-apis.md
// declares it: the spec's JSON types, nothing of api/v1beta1. (The pubsub
// ackDeadline, which the spec does not list, is the publish-subscribe
// service's integer of seconds.)
type specPipe struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Scaling *struct {
		Replicas        *int64   `json:"replicas"`
		ReplicaMemoryGb *float64 `json:"replicaMemoryGb"`
	} `json:"scaling"`
	Source *struct {
		Kinesis *struct {
			UseEnhancedFanOut *bool  `json:"useEnhancedFanOut"`
			Timestamp         *int64 `json:"timestamp"`
		} `json:"kinesis"`
		PubSub *struct {
			AckDeadline *int64 `json:"ackDeadline"`
		} `json:"pubsub"`
	} `json:"source"`
	Settings *struct {
		WarehouseMaxThreads             *int64 `json:"warehouse_max_threads"`
		ObjectStorageUseClusterFunction *bool  `json:"object_storage_use_cluster_function"`
	} `json:"settings"`
	OtherFields []string `json:"otherFields"`
}

// Issue 28, as a consumer of status sees it: a status written by the manager
// decodes into the spec's types. Values the cloud sent in a form that
// converts without loss are shown converted; one that does not convert is
// kept as sent in otherFields, and its pipe stays listed.
func TestStatusDecodesIntoTheSpecsTypes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pipe := func(id, name string, source map[string]any, more map[string]any) map[string]any {
		p := map[string]any{"id": id, "serviceId": fakecloud.DefaultServiceID, "name": name, "state": "Running", "source": source}
		maps.Copy(p, more)
		return p
	}
	f.fake.SetPipes(fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, []map[string]any{
		pipe("e0000000-0000-4000-8000-000000000001", "kinesis_spec",
			map[string]any{"kinesis": map[string]any{"timestamp": 1767225600, "useEnhancedFanOut": true}}, nil),
		pipe("e0000000-0000-4000-8000-000000000002", "kinesis_strings",
			map[string]any{"kinesis": map[string]any{"timestamp": "1767225600", "useEnhancedFanOut": "true"}},
			map[string]any{
				"scaling":  map[string]any{"replicas": "2", "replicaMemoryGb": "1.5"},
				"settings": map[string]any{"warehouse_max_threads": "8", "object_storage_use_cluster_function": "false"},
			}),
		pipe("e0000000-0000-4000-8000-000000000003", "kinesis_date",
			map[string]any{"kinesis": map[string]any{"timestamp": "2026-01-01T00:00"}}, nil),
		pipe("e0000000-0000-4000-8000-000000000004", "pubsub_strings",
			map[string]any{"pubsub": map[string]any{"ackDeadline": "60"}}, nil),
	})
	f.createSecrets()
	f.create(f.newWatch("spec-types"))
	w := f.waitFor("spec-types", 20*time.Second, "Ready", isReady)

	raw, err := json.Marshal(f.rawStatus("spec-types")["pipes"])
	if err != nil {
		t.Fatal(err)
	}
	var pipes []specPipe
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&pipes); err != nil {
		t.Fatalf("status.pipes does not decode into the spec's types: %v\n%s", err, raw)
	}
	byName := map[string]specPipe{}
	for _, p := range pipes {
		byName[p.Name] = p
	}
	if len(byName) != 4 {
		t.Fatalf("%d pipes listed, want 4: %s", len(byName), raw)
	}
	for _, name := range []string{"kinesis_spec", "kinesis_strings"} {
		k := byName[name].Source.Kinesis
		if k.Timestamp == nil || *k.Timestamp != 1767225600 || k.UseEnhancedFanOut == nil || !*k.UseEnhancedFanOut {
			t.Errorf("%s: kinesis %s, want timestamp 1767225600 and useEnhancedFanOut true", name, mustJSON(t, k))
		}
	}
	strs := byName["kinesis_strings"]
	if s := strs.Scaling; s == nil || s.Replicas == nil || *s.Replicas != 2 || s.ReplicaMemoryGb == nil || *s.ReplicaMemoryGb != 1.5 {
		t.Errorf("scaling %s, want replicas 2 and replicaMemoryGb 1.5", mustJSON(t, strs.Scaling))
	}
	if s := strs.Settings; s == nil || s.WarehouseMaxThreads == nil || *s.WarehouseMaxThreads != 8 ||
		s.ObjectStorageUseClusterFunction == nil || *s.ObjectStorageUseClusterFunction {
		t.Errorf("settings %s, want warehouse_max_threads 8 and object_storage_use_cluster_function false", mustJSON(t, strs.Settings))
	}
	if d := byName["pubsub_strings"].Source.PubSub; d.AckDeadline == nil || *d.AckDeadline != 60 {
		t.Errorf("pubsub %s, want ackDeadline 60", mustJSON(t, d))
	}
	date := byName["kinesis_date"]
	if date.Source.Kinesis.Timestamp != nil || !slices.Contains(date.OtherFields, `source.kinesis.timestamp: "2026-01-01T00:00"`) {
		t.Errorf("kinesis_date: timestamp %v, otherFields %q; want the date-time kept as sent in otherFields only",
			date.Source.Kinesis.Timestamp, date.OtherFields)
	}
	synced := meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionPipesSynced)
	if synced == nil || !strings.Contains(synced.Message, "e0000000-0000-4000-8000-000000000003 (source.kinesis.timestamp)") {
		t.Errorf("PipesSynced %+v does not name the value left out", synced)
	}
}
