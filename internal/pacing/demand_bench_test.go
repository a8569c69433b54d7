package pacing

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// BenchmarkDemandsKeys notes 10,000 watches, each on a key of its own, then
// forgets them, publishing the demand ratios after each as the controller
// does at every sync start and deleted watch: "every budget" is how it was
// published before issue 17 (the ratio of every budget, recomputed each
// time), "changes" is TakeChanges. create-s and delete-s are the seconds
// each phase takes.
func BenchmarkDemandsKeys(b *testing.B) {
	const keys = 10000
	publish := map[string]func(*demands[types.NamespacedName, read]) int{
		"every budget": func(d *demands[types.NamespacedName, read]) int { return len(ratiosOf(d)) },
		"changes":      func(d *demands[types.NamespacedName, read]) int { return len(d.TakeChanges()) },
	}
	for _, how := range []string{"every budget", "changes"} {
		b.Run(fmt.Sprintf("keys=%d/publish=%s", keys, how), func(b *testing.B) {
			watch := func(i int) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: fmt.Sprint(i)} }
			var create, del time.Duration
			for b.Loop() {
				d := newDemands[types.NamespacedName, read]()
				start := time.Now()
				for i := range keys {
					id := fmt.Sprint("key-", i)
					d.Note(watch(i), time.Minute, uint64(i), []Demand[read]{{API: "management", Budget: id, Label: id, Allowed: 1, Reads: serviceReads(id)}})
					publish[how](d)
				}
				create += time.Since(start)
				start = time.Now()
				for i := range keys {
					d.Forget(watch(i))
					publish[how](d)
				}
				del += time.Since(start)
			}
			b.ReportMetric(create.Seconds()/float64(b.N), "create-s")
			b.ReportMetric(del.Seconds()/float64(b.N), "delete-s")
		})
	}
}
