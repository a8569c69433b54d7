package cloudapi_test

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/testsupport/benchmem"
)

// worstMemoryAnswer is the pipes answer of test/scale's memory-worst-60
// (worstPipesEnvelope): as many pipes of empty nested objects as the status
// keeps, then 10,000 pipes with 1.2 KB names. Over the status budget, it
// makes the keeper slim (each of those pipes to its identity, which for the
// named ones is still too big) before it cuts.
func worstMemoryAnswer() hugeList {
	name := strings.Repeat("n", 1200)
	return hugeList{name: "memory-worst-60_answer", write: func(w *bufio.Writer) {
		_, _ = w.WriteString(hugeEnvelope)
		for i := range 10_100 {
			if i > 0 {
				_ = w.WriteByte(',')
			}
			_, _ = fmt.Fprintf(w, `{"id":"a%07d","source":{"postgres":{"settings":{}}},"settings":{}}`, i)
		}
		for i := range 10_000 {
			_, _ = fmt.Fprintf(w, `,{"id":"b%07d","name":"%s-%d","state":"Running"}`, i, name, i)
		}
		_, _ = w.WriteString(`]}`)
	}}
}

// BenchmarkWorstMemoryAnswer is one list call of memory-worst-60's answer
// as the controller makes it (the status budget, charged by decoded size):
// the peak heap growth in-process, what that scenario's 60 watches each
// pay, and its time.
//
//	go test -short -run='^$' -bench=WorstMemoryAnswer -count=5 ./internal/cloudapi/
func BenchmarkWorstMemoryAnswer(b *testing.B) {
	h := worstMemoryAnswer()
	url, size := serveList(b, h)
	c := newClient(cloudapi.Options{})
	b.SetBytes(int64(size))
	var peak uint64
	var kept int
	for b.Loop() {
		peak = max(peak, peakHeapGrowth(func() {
			list, err := c.ListPipes(context.Background(), url, testCreds, orgID, svcID,
				cloudapi.ListOptions[swv1.Pipe]{KeepBytes: statusBudget, Charge: bound.GoSize[swv1.Pipe]})
			if err != nil {
				b.Fatal(err)
			}
			kept = len(list.Items)
		}))
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(kept), "kept-items")
}

// BenchmarkWorstMemoryAnswerHeld is what a read of memory-worst-60's
// answer holds until its status is written, at the 1 MiB status size
// limit: its kept items decoded, as reads held them before issue 39, and
// encoded (ListOptions.KeepEncoded), as the controller's reads hold them
// now, side by side. memory-worst-60's watches each hold one.
//
//	go test -short -run='^$' -bench=WorstMemoryAnswerHeld -count=3 ./internal/cloudapi/
func BenchmarkWorstMemoryAnswerHeld(b *testing.B) {
	url, _ := serveList(b, worstMemoryAnswer())
	c := newClient(cloudapi.Options{})
	for _, encoded := range []bool{false, true} {
		b.Run(fmt.Sprintf("encoded=%v", encoded), func(b *testing.B) {
			var held int64
			var list cloudapi.List[swv1.Pipe]
			for b.Loop() {
				list = cloudapi.List[swv1.Pipe]{}
				held = benchmem.Growth(func() {
					var err error
					list, err = c.ListPipes(context.Background(), url, testCreds, orgID, svcID,
						cloudapi.ListOptions[swv1.Pipe]{KeepBytes: 1 << 20, Charge: bound.GoSize[swv1.Pipe], KeepEncoded: encoded})
					if err != nil {
						b.Fatal(err)
					}
				})
			}
			b.ReportMetric(float64(held)/(1<<20), "held-MiB")
			b.ReportMetric(float64(len(list.Items)+list.Encoded.Len()), "kept-items")
		})
	}
}
