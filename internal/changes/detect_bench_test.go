package changes_test

import (
	"fmt"
	"testing"

	"github.com/servicewatch/servicewatch/internal/changes"
)

// BenchmarkDetect is the cost of following the states of one list of 1,000
// items at a sync (10 of them changed, 100 recorded as left out), beside
// not following them: the items as the controller hands them in either way.
//
//	go test ./internal/changes/ -run '^$' -bench Detect -benchmem -count 5
func BenchmarkDetect(b *testing.B) {
	const n = 1000
	baseline, read := make([]changes.Item, n), make([]changes.Item, n)
	left := changes.LeftOut{}
	for i := range n {
		id := fmt.Sprintf("%08d-0000-4000-8000-000000000000", i)
		baseline[i] = changes.Item{ID: id, Name: "pipe-" + id[:8], State: "Running", Since: t0}
		read[i] = changes.Item{ID: id, Name: baseline[i].Name, State: "Running"}
		if i%100 == 0 {
			read[i].State = "Failed"
		}
		if i%10 == 0 {
			left.Add(changes.KindPipe, id, "Running", t0)
		}
	}
	b.Run("tracking-off", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = read
		}
	})
	b.Run("tracking-on", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res := changes.Detect(changes.Input{Watch: watch, Kind: changes.KindPipe, Now: now, Baseline: baseline, LeftOut: left, Read: read})
			if len(res.Changes) != n/100 {
				b.Fatalf("%d changes", len(res.Changes))
			}
		}
	})
	b.Run("left-out-record", func(b *testing.B) {
		b.ReportAllocs()
		entries := left.Entries()
		for b.Loop() {
			back := changes.ParseLeftOut(entries)
			_ = back.Entries()
		}
	})
}
