package lenient_test

import (
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
)

// A kinesis pipe of the spec's shape. Since issue 28 its source decodes
// itself (so that a status of an earlier manager still decodes), and the
// reader reads such a pipe member by member rather than with the strict
// decode: this is what that costs per pipe. docs/benchmarks.md compares it
// with a build of the commit before.
func BenchmarkReadPipeKinesis(b *testing.B) {
	raw := []byte(`{"id":"d0000000-0000-4000-8000-000000000003","serviceId":"4e2c6a1b-9d8f-4c3b-a2e1-0f9e8d7c6b5a",` +
		`"name":"clicks_kinesis","state":"Running","scaling":{"replicas":1,"concurrency":1,"replicaCpuMillicores":1000,"replicaMemoryGb":4},` +
		`"source":{"kinesis":{"format":"JSONEachRow","streamName":"clicks","region":"eu-west-1","useEnhancedFanOut":false,` +
		`"iteratorType":"AT_TIMESTAMP","timestamp":1767225600,"iamRole":"arn:aws:iam::123456789012:role/kinesis-reader"}},` +
		`"destination":{"database":"default","table":"clicks","managedTable":true,"columns":[{"name":"id","type":"String"},{"name":"at","type":"DateTime"}]},` +
		`"fieldMappings":[{"sourceField":"id","destinationField":"id"},{"sourceField":"at","destinationField":"at"}],` +
		`"createdAt":"2026-03-01T08:00:00Z","updatedAt":"2026-03-01T08:00:00Z"}`)
	strict := lenient.NewStrict()
	var p swv1.Pipe
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := lenient.ReadPipe(strict, raw, &p); err != nil {
			b.Fatal(err)
		}
	}
}
