package lenient_test

import (
	"encoding/json"
	"strings"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
)

// Database pipes as the real services send them, with what the vendor's
// clients type (issue 28): before those fields were typed, each of them was
// a member the types lacked, so the pipe failed the strict decode, was read
// member by member, and its values were flattened into otherFields (16 at
// most, the rest lost). status-B/pipe is the JSON of the pipe as status
// holds it. docs/benchmarks.md compares a build of the commit before.
func BenchmarkReadPipeCDC(b *testing.B) {
	mappings := func(mapping string) string {
		var all []string
		for _, table := range []string{"accounts", "contacts", "orders", "invoices", "payments", "tickets"} {
			all = append(all, strings.ReplaceAll(mapping, "TABLE", table))
		}
		return "[" + strings.Join(all, ",") + "]"
	}
	pipe := func(source string) []byte {
		return []byte(`{"id":"d0000000-0000-4000-8000-000000000004","serviceId":"4e2c6a1b-9d8f-4c3b-a2e1-0f9e8d7c6b5a",` +
			`"name":"cdc","state":"Running","source":` + source + `,` +
			`"destination":{"database":"default","managedTable":true},"createdAt":"2026-03-01T08:00:00Z","updatedAt":"2026-03-01T08:00:00Z"}`)
	}
	pipes := []struct {
		kind string
		raw  []byte
	}{
		{"postgres", pipe(`{"postgres":{"type":"postgres","authentication":"IAM_ROLE","iamRole":"arn:aws:iam::123456789012:role/pg",` +
			`"host":"db.example.invalid","port":5432,"database":"shop","tlsHost":"db.example.invalid",` +
			`"settings":{"replicationMode":"cdc","syncIntervalSeconds":30,"pullBatchSize":10000,"deleteOnMerge":true,"enableFailoverSlots":true},` +
			`"tableMappings":` + mappings(`{"sourceSchemaName":"public","sourceTable":"TABLE","targetTable":"shop_TABLE","useCustomSortingKey":true,`+
			`"sortingKeys":["id"],"tableEngine":"ReplacingMergeTree","partitionKey":"id","partitionByExpr":"toYYYYMM(created_at)"}`) + `}}`)},
		{"mysql", pipe(`{"mysql":{"type":"auroramysql","authentication":"basic","host":"mysql.example.invalid","port":3306,` +
			`"settings":{"replicationMode":"cdc","syncIntervalSeconds":30,"replicationMechanism":"GTID","useCompression":true,"allowNullableColumns":true,"deleteOnMerge":false},` +
			`"tableMappings":` + mappings(`{"sourceSchemaName":"crm","sourceTable":"TABLE","targetTable":"crm_TABLE","useCustomSortingKey":true,`+
			`"sortingKeys":["id"],"tableEngine":"ReplacingMergeTree","partitionKey":"id"}`) + `}}`)},
		{"mongodb", pipe(`{"mongodb":{"uri":"mongodb://app:pw@m1.example.invalid:27017,m2.example.invalid:27017/catalog?replicaSet=rs0",` +
			`"readPreference":"secondaryPreferred","settings":{"replicationMode":"cdc","deleteOnMerge":false,"useJsonNativeFormat":true},` +
			`"tableMappings":` + mappings(`{"sourceDatabaseName":"catalog","sourceCollection":"TABLE","targetTable":"TABLE","tableEngine":"ReplacingMergeTree"}`) + `}}`)},
	}
	for _, tt := range pipes {
		b.Run(tt.kind, func(b *testing.B) {
			strict := lenient.NewStrict()
			var p swv1.Pipe
			b.SetBytes(int64(len(tt.raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := lenient.ReadPipe(strict, tt.raw, &p); err != nil {
					b.Fatal(err)
				}
			}
			shown, err := json.Marshal(p)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(shown)), "status-B/pipe")
		})
	}
}
