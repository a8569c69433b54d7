package v1beta1_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

// fill sets every field reachable from v to a non-zero value, so that a field
// added to the types later is covered by the round trip without editing it.
func fill(v reflect.Value, name string) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), name)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[metav1.Time]() { // whole seconds: what JSON keeps
			v.Set(reflect.ValueOf(metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))))
			return
		}
		for i := range v.NumField() {
			fill(v.Field(i), v.Type().Field(i).Name)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), name)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		elem := reflect.New(v.Type().Elem()).Elem()
		fill(elem, name)
		v.SetMapIndex(reflect.ValueOf("Running"), elem)
	case reflect.String:
		if v.Type() == reflect.TypeFor[swv1.Decimal]() {
			v.SetString("3")
			return
		}
		v.SetString("value-of-" + name)
	case reflect.Int32, reflect.Int64:
		v.SetInt(42)
	case reflect.Bool:
		v.SetBool(true)
	default:
		panic("fill: unhandled kind " + v.Kind().String() + " of " + name)
	}
}

func fullStatus() swv1.ServiceWatchStatus {
	var pipe swv1.Pipe
	fill(reflect.ValueOf(&pipe).Elem(), "pipe")
	pipe.Scaling.ReplicaMemoryGb = ptr.To(swv1.Decimal("0.5"))
	pipe.Source.ObjectStorage.ConnectionString = ptr.To("<redacted>")
	// Zero values the cloud sent must survive as sent.
	pipe.Settings.WarehouseParallelViewProcessing = ptr.To(false)
	pipe.Source.Kinesis.Timestamp = ptr.To[int64](0)
	pipe.Source.Kafka.IAMRole = ptr.To("")
	// An empty list stays an empty list, not absent.
	pipe.Source.Postgres.TableMappings[0].ExcludedColumns = []string{}

	var endpoint swv1.ReversePrivateEndpoint
	fill(reflect.ValueOf(&endpoint).Elem(), "endpoint")

	var alert swv1.AlertStatus
	fill(reflect.ValueOf(&alert).Elem(), "alert")
	alert.Threshold = ptr.To(swv1.Decimal("12.25"))

	var summary swv1.Summary
	fill(reflect.ValueOf(&summary).Elem(), "summary")

	now := metav1.NewTime(time.Date(2026, 11, 22, 15, 4, 5, 0, time.UTC))
	return swv1.ServiceWatchStatus{
		ObservedGeneration:     1,
		LastSyncTime:           &now,
		LastHandledRequestedAt: "2026-11-22T15:00:00Z",
		Summary:                &summary,
		Conditions: []metav1.Condition{{
			Type: swv1.ConditionReady, Status: metav1.ConditionTrue, Reason: swv1.ReasonSynced,
			Message: "synced", LastTransitionTime: now, ObservedGeneration: 1,
		}},
		Pipes:                   []swv1.Pipe{pipe},
		ReversePrivateEndpoints: []swv1.ReversePrivateEndpoint{endpoint},
		Alerts:                  []swv1.AlertStatus{alert, {ID: "never-fetched", Error: "NotFound: alert not found"}},
	}
}

func TestStatusRoundTripsEveryField(t *testing.T) {
	ctx := context.Background()
	w := createValidWatch(t, "roundtrip")
	want := fullStatus()
	w.Status = want
	if err := env.Client.Status().Update(ctx, w); err != nil {
		t.Fatalf("writing the full status: %v", err)
	}

	var got swv1.ServiceWatch
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(w), &got); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got.Status, want) {
		t.Fatalf("status changed on the way through the API server\n got: %s\nwant: %s", indentedJSON(got.Status), indentedJSON(want))
	}
	if got.Status.Pipes[0].Source.Postgres.TableMappings[0].ExcludedColumns == nil {
		t.Error("an empty list came back as absent")
	}

	// What kubectl and jq see: decimals are JSON numbers with their exact value.
	raw := unstructuredFrom(nil)
	raw.SetGroupVersionKind(swv1.GroupVersion.WithKind("ServiceWatch"))
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(w), raw); err != nil {
		t.Fatal(err)
	}
	memory := lookup(t, raw.Object, "status", "pipes", 0, "scaling", "replicaMemoryGb")
	threshold := lookup(t, raw.Object, "status", "alerts", 0, "threshold")
	if memory != 0.5 {
		t.Errorf("replicaMemoryGb = %#v, want the number 0.5", memory)
	}
	if threshold != 12.25 {
		t.Errorf("threshold = %#v, want the number 12.25", threshold)
	}
}

func TestDecimalKeepsTheAPIServersForm(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0.5", "0.5"},
		{"12.25", "12.25"},
		{"12.250", "12.25"},
		{"2.0", "2"},
		{"1e3", "1000"},
		{"-7", "-7"},
		{"0.1", "0.1"},
		{"1e21", "1e+21"},
		{`"4.5"`, "4.5"},
	}
	for _, tt := range tests {
		var d swv1.Decimal
		if err := json.Unmarshal([]byte(tt.in), &d); err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		out, err := json.Marshal(d)
		if err != nil || string(out) != tt.want {
			t.Errorf("%s: marshaled to %s (%v), want %s", tt.in, out, err, tt.want)
		}
	}
	for _, bad := range []string{`"abc"`, `{}`, `true`} {
		var d swv1.Decimal
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("%s was accepted as a decimal", bad)
		}
	}
}
