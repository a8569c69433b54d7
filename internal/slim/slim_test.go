package slim_test

import (
	"fmt"
	"testing"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/slim"
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

func TestItem(t *testing.T) {
	tests := map[string]struct {
		pipe    swv1.Pipe
		target  int
		omitted map[string]int32
		tables  int // table mappings kept; -1: no source at all
	}{
		"fits: unchanged": {
			pipe: cdcPipe("p-1", 3, 1), target: 1 << 20, omitted: nil, tables: 3,
		},
		"big: mappings cut and counted, identity kept": {
			pipe: cdcPipe("p-42", 4000, 0), target: 8 << 10, // 54 mappings fit
			omitted: map[string]int32{"source.postgres.tableMappings": 4000 - 54}, tables: 54,
		},
		"every list cut to the same length, otherFields too": {
			pipe: cdcPipe("p-7", 100, 40), target: 4 << 10,
			omitted: map[string]int32{"source.postgres.tableMappings": 100 - 21, "otherFields": 40 - 21}, tables: 21,
		},
		"only the identity fits: each other member counted whole": {
			pipe: cdcPipe("p-9", 100, 0), target: 200,
			omitted: map[string]int32{"source": 1}, tables: -1,
		},
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
			if fmt.Sprint(got.Omitted) != fmt.Sprint(tt.omitted) {
				t.Errorf("omitted = %v, want %v", got.Omitted, tt.omitted)
			}
			tables := -1
			if got.Source != nil {
				tables = len(got.Source.Postgres.TableMappings)
			}
			if tables != tt.tables {
				t.Errorf("table mappings kept = %d, want %d", tables, tt.tables)
			}
			if c := bound.Charge(&got); tt.tables >= 0 && c > tt.target {
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
