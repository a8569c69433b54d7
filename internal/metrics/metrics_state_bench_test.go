package metrics_test

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/testsupport/benchmem"
)

// BenchmarkScrape measures one scrape (gather and text encoding, as the
// metrics endpoint does it) of 1,000 watches with 10 pipes, an endpoint, 2
// alerts and 5 conditions each, with item metrics on and off side by side.
// bytes/scrape is the size of the text exposition.
func BenchmarkScrape(b *testing.B) {
	for _, items := range []bool{true, false} {
		b.Run(fmt.Sprintf("watches=1000/pipes=10/itemMetrics=%v", items), func(b *testing.B) {
			reg := prometheus.NewRegistry()
			c := metrics.NewState(items)
			reg.MustRegister(c)
			for i := range 1000 {
				c.Set(benchWatch(i))
			}
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				scrape(b, reg, &buf)
			}
			b.ReportMetric(float64(buf.Len()), "bytes/scrape")
		})
	}
}

func benchWatch(i int) metrics.Watch {
	w := metrics.Watch{
		Namespace:    fmt.Sprintf("team-%03d", i%100),
		Name:         fmt.Sprintf("warehouse-%04d", i),
		LastSyncTime: time.Unix(1_800_000_000+int64(i), 0),
		Interval:     5 * time.Minute,
		Endpoints:    []metrics.Endpoint{{ID: fmt.Sprintf("5b1c2d3e-0000-4000-8000-%012d", i), Type: "VPC_ENDPOINT_SERVICE", Status: "Ready"}},
		Alerts: []metrics.Alert{
			{ID: fmt.Sprintf("65f1a2b3c4d5e6f7%08d", 2*i), Name: "Ingest lag above 12.25 s", State: "active"},
			{ID: fmt.Sprintf("65f1a2b3c4d5e6f7%08d", 2*i+1), Name: "Error rate", State: "disabled"},
		},
	}
	for _, t := range []string{"PipesSynced", "ReversePrivateEndpointsSynced", "AlertsSynced", "Ready", "Reconciling"} {
		w.Conditions = append(w.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: "Synced"})
	}
	kinds := []string{"kafka", "objectStorage", "kinesis", "postgres"}
	for p := range 10 {
		w.Pipes = append(w.Pipes, metrics.Pipe{
			ID:         fmt.Sprintf("11111111-%04d-4111-8111-%012d", p, i),
			Name:       fmt.Sprintf("events_%d", p),
			State:      "Running",
			SourceKind: kinds[p%len(kinds)],
		})
	}
	return w
}

// BenchmarkWorstCaseWatch is the tenant of issue 17: a watch whose cloud
// lists 10,000 pipes (the most the manager gathered before the bound in
// bytes) with names of 3.6 KB, once without a bound in bytes (before) and
// once with the default bound (after), side by side. retained-B/watch is
// the heap the collector keeps for the watch between scrapes; B/op is one
// scrape of that watch (gather and text encoding).
func BenchmarkWorstCaseWatch(b *testing.B) {
	// The pipes are made afresh for each Set, as a sync's are, so that the
	// heap the collector retains is only what it keeps of them.
	worstPipes := func() []metrics.Pipe {
		long := strings.Repeat("n", 3600)
		pipes := make([]metrics.Pipe, 10_000)
		for i := range pipes {
			pipes[i] = metrics.Pipe{ID: fmt.Sprintf("11111111-0000-4111-8111-%012d", i), Name: long + strconv.Itoa(i), State: "Running", SourceKind: "kafka"}
		}
		return pipes
	}
	for _, bound := range []struct {
		name  string
		bytes int
	}{{"before-unbounded", math.MaxInt}, {"after-default", metrics.DefaultMaxItemBytes}} {
		b.Run(bound.name, func(b *testing.B) {
			reg := prometheus.NewRegistry()
			c := metrics.NewState(true, metrics.WithMaxItemBytes(bound.bytes))
			reg.MustRegister(c)
			retained := benchmem.Growth(func() { c.Set(metrics.Watch{Namespace: "ns", Name: "w", Pipes: worstPipes()}) })
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				scrape(b, reg, &buf)
			}
			b.ReportMetric(float64(retained), "retained-B/watch")
			b.ReportMetric(float64(buf.Len()), "bytes/scrape")
		})
	}
}

// scrape writes what a scrape of reg serves into buf, as the metrics
// endpoint does: every family, in the text format.
func scrape(b *testing.B, reg *prometheus.Registry, buf *bytes.Buffer) {
	buf.Reset()
	families, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	enc := expfmt.NewEncoder(buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			b.Fatal(err)
		}
	}
}
