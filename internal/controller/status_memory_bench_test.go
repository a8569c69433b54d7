package controller

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/testsupport/benchmem"
)

// BenchmarkWorstCaseStatus is what one watch's status costs in the manager's
// cache at the worst case (issue 17): its lists at the default status size
// limit, made of the tiniest items a cloud can send (worstShapes: as many as
// the client keeps), decoded from the JSON the API server holds, as the cache
// decodes it. before is the status the operator wrote while it charged only
// JSON (the longest prefix whose JSON fits the limit); after, the status
// applyResults writes now. retained-B is
// the live heap of the decoded watch; json-B the size of its status.
//
//	go test -short -run='^$' -bench=WorstCaseStatus -benchtime=3x ./internal/controller/
func BenchmarkWorstCaseStatus(b *testing.B) {
	const limit = DefaultStatusSizeLimit
	shapes := worstShapes()
	for _, shape := range shapes {
		for _, when := range []string{"before", "after"} {
			b.Run(strings.ReplaceAll(shape.name, " ", "-")+"/"+when, func(b *testing.B) {
				w := testWatch()
				if when == "after" {
					applyResults(w, syncParts(), shape.results(), limit)
				} else {
					applyResults(w, syncParts(), shape.results(), 0) // no cut: cut below as before
					jsonOnlyTruncate(&w.Status, limit)
				}
				raw, err := json.Marshal(w)
				if err != nil {
					b.Fatal(err)
				}
				var retained int64
				for b.Loop() {
					var cached swv1.ServiceWatch
					retained = benchmem.Growth(func() {
						if err := json.Unmarshal(raw, &cached); err != nil {
							b.Fatal(err)
						}
					})
					runtime.KeepAlive(&cached)
				}
				b.ReportMetric(float64(retained), "retained-B")
				b.ReportMetric(float64(jsonBytes(b, &w.Status)), "json-B")
			})
		}
	}
}

// jsonOnlyTruncate cuts the lists as truncate did before it charged decoded
// sizes: the longest prefixes, endpoints first, whose JSON fits limit.
func jsonOnlyTruncate(s *swv1.ServiceWatchStatus, limit int) {
	budget := limit - truncatedConditionBytes - 200 // the bare status and the lists' keys
	cut := func(n int, size func(i int) int) int {
		for i := range n {
			if budget -= size(i); budget < 0 {
				return i
			}
		}
		return n
	}
	s.ReversePrivateEndpoints = s.ReversePrivateEndpoints[:cut(len(s.ReversePrivateEndpoints), func(i int) int {
		return itemJSONSize(&s.ReversePrivateEndpoints[i])
	})]
	s.Pipes = s.Pipes[:cut(len(s.Pipes), func(i int) int { return itemJSONSize(&s.Pipes[i]) })]
}

// itemJSONSize is an item's JSON size plus its comma; an item that cannot be
// encoded is never kept.
func itemJSONSize[T any](item *T) int {
	raw, err := json.Marshal(item)
	if err != nil {
		return DefaultStatusSizeLimit
	}
	return len(raw) + 1
}
