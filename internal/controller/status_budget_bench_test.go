package controller

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/tenancy"
	"github.com/servicewatch/servicewatch/internal/testsupport/benchmem"
)

// BenchmarkNamespaceWorstCase is what one namespace's watches cost in the
// manager's cache when every one of them is answered the worst way for
// memory (worstShapes' first: {"id":"00000000"} × 12,800): n statuses
// written as writeStatus writes them, then decoded from their JSON as the
// cache decodes them. before bounds each watch alone (the status size
// limit); after also books them in a tenancy.StatusLedger with the default
// budgets. retained-MiB is the live heap of the n decoded watches.
//
//	go test -short -run='^$' -bench=NamespaceWorstCase -benchtime=1x ./internal/controller/
func BenchmarkNamespaceWorstCase(b *testing.B) {
	shape := worstShapes()[0]
	for _, n := range []int{10, 40, 70} {
		for _, when := range []string{"before", "after"} {
			b.Run(fmt.Sprintf("watches-%d/%s", n, when), func(b *testing.B) {
				var ledger *tenancy.StatusLedger // nil: no bound, as before
				if when == "after" {
					ledger = tenancy.NewStatusLedger(tenancy.StatusBudget{Bytes: tenancy.DefaultNamespaceStatusBytes}, tenancy.StatusBudget{Bytes: tenancy.DefaultManagerStatusBytes})
				}
				raws := make([][]byte, n)
				for i := range raws {
					w := testWatch()
					w.Name = fmt.Sprintf("w%d", i)
					room := ledger.Room(w.Namespace, w.Name, DefaultStatusSizeLimit, true)
					applyResults(w, syncParts(), shape.results(), room.Bytes)
					room.Kept(func() int { return fixedSize(&w.Status) })
					raw, err := json.Marshal(w)
					if err != nil {
						b.Fatal(err)
					}
					raws[i] = raw
				}
				var retained int64
				for b.Loop() {
					cached := make([]swv1.ServiceWatch, n)
					retained = benchmem.Growth(func() {
						for i, raw := range raws {
							if err := json.Unmarshal(raw, &cached[i]); err != nil {
								b.Fatal(err)
							}
						}
					})
					runtime.KeepAlive(cached)
				}
				b.ReportMetric(float64(retained)/(1<<20), "retained-MiB")
			})
		}
	}
}
