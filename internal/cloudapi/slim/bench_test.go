package slim_test

import (
	"fmt"
	"testing"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi/slim"
)

// BenchmarkSlimWork slims a ~1 MB CDC pipe (4000 table mappings) and a
// 7 kB one (20) as the keeper does, and reports the work charged per
// slimming (units/op) beside its time: ns/op ÷ units/op should stay about
// 10, the decode work's unit.
func BenchmarkSlimWork(b *testing.B) {
	for _, tt := range []struct {
		name     string
		mappings int
		target   int
	}{{"1MB_to_256KiB", 4000, 256 << 10}, {"7kB_to_512B", 20, 512}, {"7kB_fits", 20, 64 << 10}} {
		p := cdcPipe("p-1", 0, 0)
		for m := range tt.mappings {
			p.Source.Postgres.TableMappings = append(p.Source.Postgres.TableMappings, swv1.PostgresTableMapping{
				SourceTable: ptr.To(fmt.Sprintf("events_partition_with_a_long_name_%06d", m)), TargetTable: ptr.To(fmt.Sprintf("events_partition_%06d", m))})
		}
		b.Run(tt.name, func(b *testing.B) {
			units := 0
			s := slim.New[swv1.Pipe](slim.Pipes).WithWork(func(n int) error { units += n; return nil })
			for b.Loop() {
				if _, err := s.Item(&p, tt.target); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(units)/float64(b.N), "units/op")
		})
	}
}
