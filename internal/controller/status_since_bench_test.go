package controller

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

// BenchmarkStatusWithTracking is the cost of a status build of 1,000 pipes
// (10 changed since the last sync) with their states followed (since,
// changes, the left-out record) beside the same build without.
//
//	go test ./internal/controller/ -short -run '^$' -bench StatusWithTracking -benchmem -count 5
func BenchmarkStatusWithTracking(b *testing.B) {
	const n = 1000
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	pipes := func(failing bool) []swv1.Pipe {
		out := make([]swv1.Pipe, n)
		for i := range out {
			state := "Running"
			if failing && i%100 == 0 {
				state = "Failed"
			}
			out[i] = swv1.Pipe{ID: ptr.To(fmt.Sprintf("%08d-0000-4000-8000-000000000000", i)), Name: ptr.To(fmt.Sprintf("orders_%d", i)),
				State: ptr.To(state), SourceKind: ptr.To("kafka")}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		at   time.Time
	}{{"tracking-off", time.Time{}}, {"tracking-on", t0.Add(time.Minute)}} {
		b.Run(tc.name, func(b *testing.B) {
			base := testWatch()
			applyResultsAt(base, syncParts(), []partResult{pipesOK(pipes(false)...), endpointsOK(2), alertsFetched(nil)}, DefaultStatusSizeLimit, t0)
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				w := base.DeepCopy()
				read := pipes(true)
				b.StartTimer()
				found := applyResultsAt(w, syncParts(), []partResult{pipesOK(read...), endpointsOK(2), alertsFetched(nil)}, DefaultStatusSizeLimit, tc.at)
				if !tc.at.IsZero() && len(found.changes) != n/100 {
					b.Fatalf("%d changes", len(found.changes))
				}
			}
		})
	}
}
