package slim_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/cloudapi/slim"
)

// cdcPipe is a Postgres CDC pipe with n table mappings and m otherFields.
func cdcPipe(id string, n, m int) swv1.Pipe {
	p := swv1.Pipe{ID: ptr.To(id), Name: ptr.To("orders " + id), State: ptr.To("Running"), SourceKind: ptr.To("postgres"),
		Source: &swv1.PipeSource{Postgres: &swv1.PostgresSource{}}}
	for i := range n {
		p.Source.Postgres.TableMappings = append(p.Source.Postgres.TableMappings, swv1.PostgresTableMapping{
			SourceTable: ptr.To(fmt.Sprintf("table_%05d", i)), TargetTable: ptr.To(fmt.Sprintf("public_table_%05d", i))})
	}
	for i := range m {
		p.OtherFields = append(p.OtherFields, fmt.Sprintf("x.f%d: %d", i, i))
	}
	return p
}

// cutTo is p with its table mappings and otherFields cut to their first k,
// counted as left out: what slimming it should give.
func cutTo(p swv1.Pipe, k int) swv1.Pipe {
	mappings, other := p.Source.Postgres.TableMappings, p.OtherFields
	omitted := map[string]int32{}
	if len(mappings) > k {
		omitted["source.postgres.tableMappings"] = int32(len(mappings) - k)
		mappings = mappings[:k]
	}
	if len(other) > k {
		omitted["otherFields"] = int32(len(other) - k)
		other = other[:k]
	}
	if k == 0 {
		mappings, other = nil, nil
	}
	pg := *p.Source.Postgres
	pg.TableMappings = mappings
	p.Source = &swv1.PipeSource{Postgres: &pg}
	p.OtherFields, p.Omitted = other, omitted
	return p
}

// largestCut is the largest k for which cutTo(p, k) fits target (the
// charge grows with k: a bisection).
func largestCut(p swv1.Pipe, target int) int {
	lo, hi := 0, max(len(p.OtherFields), len(p.Source.Postgres.TableMappings))+1 // lo fits, hi does not
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if cut := cutTo(p, mid); bound.Charge(&cut) <= target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

func TestItem(t *testing.T) {
	tests := map[string]struct {
		pipe   swv1.Pipe
		target int
		// bare: only the identity fits, each other member counted whole.
		bare bool
	}{
		"fits: unchanged": {pipe: cdcPipe("p-1", 3, 1), target: 1 << 20},
		"big: mappings cut and counted, identity kept":       {pipe: cdcPipe("p-42", 4000, 0), target: 8 << 10},
		"every list cut to the same length, otherFields too": {pipe: cdcPipe("p-7", 100, 40), target: 4 << 10},
		"only the identity fits":                             {pipe: cdcPipe("p-9", 100, 0), target: 200, bare: true},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := slim.Item(&tt.pipe, tt.target, slim.Pipes)
			if err != nil {
				t.Fatal(err)
			}
			if *got.ID != *tt.pipe.ID || *got.Name != *tt.pipe.Name || *got.State != "Running" || *got.SourceKind != "postgres" {
				t.Errorf("identity lost: %+v", got)
			}
			if tt.bare {
				if got.Source != nil || fmt.Sprint(got.Omitted) != "map[source:1]" {
					t.Errorf("cut to its identity: source %+v, omitted %v; want no source, map[source:1]", got.Source, got.Omitted)
				}
				return
			}
			k := largestCut(tt.pipe, tt.target)
			want := cutTo(tt.pipe, k)
			if k == max(len(tt.pipe.OtherFields), len(tt.pipe.Source.Postgres.TableMappings)) {
				want = tt.pipe // nothing cut
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("kept %d table mappings, %d otherFields, omitted %v; want the first %d of each (omitted %v)",
					len(got.Source.Postgres.TableMappings), len(got.OtherFields), got.Omitted, k, want.Omitted)
			}
			if c := bound.Charge(&got); c > tt.target {
				t.Errorf("charge %d over target %d", c, tt.target)
			}
		})
	}
}

// Slimming a slimmed item again gives what slimming the original to the
// smaller target gives: the keeper and the status' final check may both cut.
func TestItemTwiceAddsUp(t *testing.T) {
	p := cdcPipe("p-1", 500, 0)
	once, _ := slim.Item(&p, 4<<10, slim.Pipes)
	twice, _ := slim.Item(&once, 4<<10, slim.Pipes)
	if fmt.Sprint(once.Omitted) != fmt.Sprint(twice.Omitted) {
		t.Errorf("omitted once %v, twice %v", once.Omitted, twice.Omitted)
	}
	smaller, _ := slim.Item(&once, 2<<10, slim.Pipes)
	direct, _ := slim.Item(&p, 2<<10, slim.Pipes)
	if fmt.Sprint(smaller.Omitted) != fmt.Sprint(direct.Omitted) {
		t.Errorf("omitted in two steps %v, in one %v", smaller.Omitted, direct.Omitted)
	}
}

func TestDescribe(t *testing.T) {
	got := slim.Describe("pipe", "p-42", map[string]int32{"source.postgres.tableMappings": 3950, "otherFields": 2})
	want := "pipe p-42: 2 otherFields, 3950 source.postgres.tableMappings left out"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if slim.Describe("pipe", "p", nil) != "" {
		t.Error("nothing left out must say nothing")
	}
}

// An item slimmed, then cut to its identity, records what the original cut
// to its identity does: the keeper may slim an item to a cap and the
// status' final check cut it to its identity later.
func TestBareOfASlimmedItemIsTheBareOfTheItem(t *testing.T) {
	p := cdcPipe("p-3", 200, 30)
	once, err := slim.Item(&p, 3<<10, slim.Pipes)
	if err != nil || once.Omitted["source.postgres.tableMappings"] == 0 {
		t.Fatalf("first cut: %v, omitted %v", err, once.Omitted)
	}
	twice, _ := slim.Item(&once, 200, slim.Pipes)
	direct, _ := slim.Item(&p, 200, slim.Pipes)
	if fmt.Sprint(twice.Omitted) != fmt.Sprint(direct.Omitted) || fmt.Sprint(direct.Omitted) != "map[otherFields:1 source:1]" {
		t.Errorf("cut to the identity in two steps %v, in one %v", twice.Omitted, direct.Omitted)
	}
}

// Endpoints and alerts are slimmed by the same rule: an endpoint's DNS
// names cut and counted; an alert whose message alone is too big keeps its
// identity, the message counted as left out whole.
func TestEndpointsAndAlertsToo(t *testing.T) {
	ep := swv1.ReversePrivateEndpoint{ID: ptr.To("e-1"), Description: ptr.To("kafka"), Type: ptr.To("VPC_ENDPOINT_SERVICE"), Status: ptr.To("Ready")}
	for i := range 500 {
		ep.DNSNames = append(ep.DNSNames, fmt.Sprintf("vpce-%04d.eu-west-1.vpce.amazonaws.com", i))
	}
	got, err := slim.Item(&ep, 4<<10, slim.Endpoints)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got.DNSNames); n == 0 || n >= 500 || got.Omitted["dnsNames"] != int32(500-n) || *got.Status != "Ready" {
		t.Errorf("endpoint: %d DNS names kept, omitted %v, status %v", n, got.Omitted, got.Status)
	}
	if c := bound.Charge(&got); c > 4<<10 {
		t.Errorf("endpoint charged %d, over 4 KiB", c)
	}

	alert := swv1.AlertStatus{ID: "a-1", Name: ptr.To("disk full"), State: ptr.To("ALERT"), Message: ptr.To(strings.Repeat("m", 40_000))}
	cut, err := slim.Item(&alert, 1<<10, slim.Alerts)
	if err != nil {
		t.Fatal(err)
	}
	if cut.Message != nil || cut.ID != "a-1" || *cut.Name != "disk full" || *cut.State != "ALERT" || fmt.Sprint(cut.Omitted) != "map[message:1]" {
		t.Errorf("alert: %+v, want its identity, the message counted", cut)
	}
}
