package controller

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/alerts"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/testsupport/benchmem"
)

// BenchmarkAlertListHeap is the heap one sync of a watch naming one alert
// keeps after it read its host's list through the controller's read
// (readAlerts, the list shared for the watches of the host as the manager
// shares it), for the two worst answers of issue 37: one 16 MiB answer of
// the tiniest alerts, and a list of 11 pages of 1,000 alerts of 16 KiB.
//
//	go test -short -run='^$' -bench=AlertListHeap -benchtime=1x -count=3 ./internal/controller/
func BenchmarkAlertListHeap(b *testing.B) {
	note := strings.Repeat("n", 16<<10-64)
	for _, bb := range []struct {
		name  string
		write func(w *bufio.Writer, offset int)
	}{
		{"worst-answer", func(w *bufio.Writer, _ int) {
			_, _ = w.WriteString(`{"data":[`)
			for i, n := 0, 0; n < 16<<20-64; i++ {
				if i > 0 {
					_ = w.WriteByte(',')
				}
				k, _ := fmt.Fprintf(w, `{"id":"%d"}`, i)
				n += k + 1
			}
			_, _ = w.WriteString(`]}`)
		}},
		{"11-pages", func(w *bufio.Writer, offset int) {
			const total = 11_000
			_, _ = w.WriteString(`{"data":[`)
			for i := offset; i < min(total, offset+cloudapi.MaxAlertPageLimit); i++ {
				if i > offset {
					_ = w.WriteByte(',')
				}
				_, _ = fmt.Fprintf(w, `{"id":"%d","name":"alert %d","note":"%s%d"}`, i, i, note, i)
			}
			_, _ = fmt.Fprintf(w, `],"meta":{"total":%d,"offset":%d}}`, total, offset)
		}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
				w.Header().Set("Content-Type", "application/json")
				bw := bufio.NewWriterSize(w, 64<<10)
				bb.write(bw, offset)
				_ = bw.Flush()
			}))
			defer srv.Close()
			cloud := cloudapi.New(cloudapi.Options{Timeout: 10 * time.Minute})
			var kept int64
			for b.Loop() {
				w := testWatch()
				w.Spec.AlertIDs = []string{"7"}
				in := &syncScope{watch: w, budgets: &budgetCloud{}, shared: newSharedReads(sharedFreshness, time.Now),
					alerts: newAlertAccess(srv.URL, cloudapi.NewBearerToken("t")), alertsByList: true,
					routes: alerts.NewRoutes(time.Now, time.Minute), keepBytes: DefaultStatusSizeLimit}
				var res partResult
				kept = max(kept, benchmem.Growth(func() { res = readAlerts(context.Background(), cloud, in) }))
				if res.failure != nil && !strings.Contains(res.failure.message, "more than") {
					b.Fatal(res.failure.message)
				}
				runtime.KeepAlive(in) // the shared read holds the list for most of the interval
			}
			b.ReportMetric(float64(kept)/(1<<20), "kept-MiB")
		})
	}
}
