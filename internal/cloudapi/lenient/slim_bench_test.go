package lenient

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/cloudapi/slim"
)

// benchPipes are n Postgres pipes of 20 table mappings each (about 2.5 kB of
// JSON, 7 kB decoded), in reverse id order, the order that makes a keeper
// work hardest: every pipe arrives before the cut.
func benchPipes(n int) []swv1.Pipe {
	pipes := make([]swv1.Pipe, n)
	for i := range pipes {
		p := swv1.Pipe{ID: ptr.To(fmt.Sprintf("p-%06d", n-i)), Name: ptr.To(fmt.Sprintf("pipe %d", i)), State: ptr.To("Running"),
			SourceKind: ptr.To("postgres"), Source: &swv1.PipeSource{Postgres: &swv1.PostgresSource{Host: ptr.To("db")}}}
		for m := range 20 {
			p.Source.Postgres.TableMappings = append(p.Source.Postgres.TableMappings, swv1.PostgresTableMapping{
				SourceTable: ptr.To(fmt.Sprintf("table_with_a_name_%03d", m)), TargetTable: ptr.To(fmt.Sprintf("table_with_a_name_%03d", m))})
		}
		pipes[i] = p
	}
	return pipes
}

// The keeper before issue 28 (a prefix of whole items: no WithSlim), after
// (big items slimmed before whole ones go) and with the identity step
// (WithIdentities), side by side on the same pipes and the default status
// budget.
func BenchmarkKeeperPipes(b *testing.B) {
	pipeID := func(p *swv1.Pipe) string { return *p.ID }
	oneBig := benchPipes(51)
	for m := range 4000 { // about 1 MB
		oneBig[25].Source.Postgres.TableMappings = append(oneBig[25].Source.Postgres.TableMappings, swv1.PostgresTableMapping{
			SourceTable: ptr.To(fmt.Sprintf("events_partition_with_a_long_name_%06d", m)), TargetTable: ptr.To(fmt.Sprintf("events_partition_%06d", m))})
	}
	for _, list := range []struct {
		name  string
		pipes []swv1.Pipe
	}{{"50", benchPipes(50)}, {"50+1MB", oneBig}, {"5000", benchPipes(5000)}, {"1500x1.5kB", mediumPipes(1500)}} {
		pipes := list.pipes
		// identities is the keeper as the client builds it since the
		// identity step; slim, the keeper without it, as before.
		for _, mode := range []string{"prefix", "slim", "identities"} {
			b.Run(mode+"/"+list.name, func(b *testing.B) {
				var last []swv1.Pipe
				fastest := time.Duration(math.MaxInt64)
				for b.Loop() {
					start := time.Now()
					k := NewKeeper(pipeID, 800<<10, bound.GoSize[swv1.Pipe], nil)
					switch s := slim.New[swv1.Pipe](slim.Pipes); mode {
					case "slim":
						k.WithSlim(s.Item, nil)
					case "identities":
						k.WithSlim(s.Item, nil).WithIdentities(s.BareCharge, s.IdentityCharge, s.Identity)
					}
					for i := range pipes {
						if err := k.Add(&pipes[i], Report{}); err != nil {
							b.Fatal(err)
						}
					}
					items, err := k.Items()
					if err != nil {
						b.Fatal(err)
					}
					fastest = min(fastest, time.Since(start))
					last = items
				}
				b.ReportMetric(float64(len(last)), "kept")
				// What a slower keeper buys: more of the list shown.
				b.ReportMetric(float64(len(mustJSON(b, last)))/1000, "kept-kB")
				// The fastest run is the one the machine's other load
				// disturbed least.
				b.ReportMetric(float64(fastest.Nanoseconds()), "min-ns/op")
			})
		}
	}
}

func mustJSON(b *testing.B, v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}
