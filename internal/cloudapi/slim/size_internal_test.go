package slim

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"testing"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/bound"
)

// items reads the result of one of internal/cloudapi's test answers.
func items[T any](t *testing.T, file string) []T {
	t.Helper()
	raw, err := os.ReadFile("../testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var env struct{ Result []T }
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatal(err)
	}
	return env.Result
}

// oddStrings are strings encoding/json escapes, each its own way.
var oddStrings = []string{"", "plain", `q"b\s`, "<a&b>", "\b\f\n\r\t\x01\x1f", "é ü 日本", "\u2028\u2029", "bad \xff\xfe utf-8", "x\x7f"}

// An odd pipe: every escape in its strings, a decimal, an omitted record of
// an earlier cut, empty and nil lists.
func oddPipe() swv1.Pipe {
	p := swv1.Pipe{ID: ptr.To("p-odd"), Name: ptr.To(oddStrings[3]), State: ptr.To(""), SourceKind: ptr.To("postgres"),
		Scaling:       &swv1.PipeScaling{Replicas: ptr.To(int64(-12)), ReplicaMemoryGb: ptr.To(swv1.Decimal("0.5"))},
		FieldMappings: []swv1.FieldMapping{},
		Destination:   &swv1.PipeDestination{Columns: []swv1.DestinationColumn{{Name: ptr.To("c")}}},
		Source:        &swv1.PipeSource{Postgres: &swv1.PostgresSource{Port: ptr.To(int64(math.MaxInt64))}},
		Omitted:       map[string]int32{"source.postgres.tableMappings": 7, "otherFields": 1}}
	for i, s := range oddStrings {
		p.OtherFields = append(p.OtherFields, s)
		p.Source.Postgres.TableMappings = append(p.Source.Postgres.TableMappings, swv1.PostgresTableMapping{
			SourceTable: ptr.To(s), ExcludedColumns: oddStrings[:i], SortingKeys: []string{}})
	}
	return p
}

// What the plan sizes, for every k, is bound.Charge of what the cut builds:
// the sizes are computed, not encoded, and must agree with what the keeper
// and the status' final check charge.
func TestSizeIsTheChargeOfTheCut(t *testing.T) {
	pipes := append(items[swv1.Pipe](t, "pipes.json"), items[swv1.Pipe](t, "pipes_sparse.json")...)
	pipes = append(pipes, oddPipe(), swv1.Pipe{})
	checkSizes(t, New[swv1.Pipe](Pipes), pipes)
	checkSizes(t, New[swv1.ReversePrivateEndpoint](Endpoints), items[swv1.ReversePrivateEndpoint](t, "reverse_private_endpoints.json"))
	var alerts []swv1.AlertStatus
	for _, file := range []string{"alert.json", "alert_current.json", "alert_sparse.json"} {
		raw, err := os.ReadFile("../testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		var env struct{ Result swv1.AlertStatus }
		if err := json.Unmarshal(raw, &env); err != nil {
			t.Fatal(err)
		}
		alerts = append(alerts, env.Result)
	}
	alerts = append(alerts, swv1.AlertStatus{ID: "a", Message: ptr.To(oddStrings[4]), Threshold: ptr.To(swv1.Decimal("12.25"))})
	checkSizes(t, New[swv1.AlertStatus](Alerts), alerts)
}

func checkSizes[T any](t *testing.T, s *Slimmer[T], list []T) {
	t.Helper()
	s.plan()
	if len(list) == 0 {
		t.Fatal("no items")
	}
	for i := range list {
		v := ptrValue(&list[i])
		prev := omittedOf(s, &list[i])
		for _, k := range []int{0, 1, 2, 3, 5, math.MaxInt} {
			sized, err := s.measure(v, k, math.MaxInt, prev)
			if err != nil {
				t.Fatal(err)
			}
			cut, err := s.build(v, sized, prev)
			if err != nil {
				t.Fatal(err)
			}
			if want := bound.Charge(&cut); sized.charge != want {
				raw, _ := json.Marshal(cut) //nolint:errchkjson // only for the message
				t.Errorf("item %d cut to %d: sized %d, bound.Charge %d (JSON %d, GoSize %d): %s",
					i, k, sized.charge, want, len(raw), bound.GoSize(&cut), raw)
			}
		}
		bare, charge, err := s.bare(v, prev)
		if err != nil {
			t.Fatal(err)
		}
		if want := bound.Charge(&bare); charge != want {
			t.Errorf("item %d bare: sized %d, bound.Charge %d", i, charge, want)
		}
	}
}

func omittedOf[T any](s *Slimmer[T], item *T) map[string]int32 {
	m, _ := reflect.TypeAssert[map[string]int32](ptrValue(item).FieldByIndex(s.omitted.index))
	return m
}

// Cutting never changes the item it was given.
func TestCutLeavesTheItemAlone(t *testing.T) {
	p := oddPipe()
	before := fmt.Sprintf("%#v", mustJSON(t, &p))
	for _, target := range []int{100, 600, 1200, 2000} {
		if _, err := Item(&p, target, Pipes); err != nil {
			t.Fatal(err)
		}
	}
	if after := fmt.Sprintf("%#v", mustJSON(t, &p)); after != before {
		t.Errorf("the item changed:\n%s\n%s", before, after)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
