package cloudapi_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// statusBudget is the controller's default status size limit, the KeepBytes
// it passes.
const statusBudget = 800 << 10

// hugeList is a list response that would cost the operator its memory limit
// if it were decoded whole. It is written as it is served, so that the test
// process does not hold it: only the client's memory is measured, and the
// garbage collector's pace is not set by a body the operator never holds.
type hugeList struct {
	name     string
	write    func(w *bufio.Writer)
	maxBytes int64 // Options.MaxResponseBytes needed to accept it
}

const hugeEnvelope = `{"status":200,"requestId":"9b2f4c1e-7a3d-4e5f-8a6b-1c2d3e4f5a6b","result":[`

// hugeLists are the two worst cases: the largest body the default cap
// accepts, made of the smallest items ({} costs a whole swv1.Pipe to
// decode); and 1.5 million tiny items with distinct ids in scrambled order,
// which fill the set of seen ids and keep the heap of kept items busy.
func hugeLists() []hugeList {
	empties := (cloudapi.DefaultMaxResponseBytes - len(hugeEnvelope) - len(`]}`) + 1) / len(`{},`)
	const ids = 1_500_000
	return []hugeList{
		{
			name:     fmt.Sprintf("16MiB_of_empty_objects_%d_items", empties),
			maxBytes: cloudapi.DefaultMaxResponseBytes,
			write: func(w *bufio.Writer) {
				writeList(w, empties, func(w *bufio.Writer, _ int) { _, _ = w.WriteString("{}") })
			},
		},
		{
			name:     fmt.Sprintf("%d_tiny_items_with_distinct_ids", ids),
			maxBytes: 32 << 20,
			write: func(w *bufio.Writer) {
				var scratch []byte
				writeList(w, ids, func(w *bufio.Writer, i int) {
					// Multiplying by an odd number permutes 24-bit values:
					// distinct ids, in no order.
					scratch = fmt.Appendf(scratch[:0], `{"id":"%06x"}`, (uint32(i)*2654435761)&0xffffff)
					_, _ = w.Write(scratch)
				})
			},
		},
	}
}

// writeList writes the envelope around n items written by item. A
// bufio.Writer keeps its first error for Flush, so the writes' own errors
// are not checked here.
func writeList(w *bufio.Writer, n int, item func(w *bufio.Writer, i int)) {
	_, _ = w.WriteString(hugeEnvelope)
	for i := range n {
		if i > 0 {
			_ = w.WriteByte(',')
		}
		item(w, i)
	}
	_, _ = w.WriteString(`]}`)
}

// serveList serves h as the answer to every request and returns the URL and
// the size of the body.
func serveList(tb testing.TB, h hugeList) (url string, size int) {
	var counted sizeCount
	cw := bufio.NewWriter(&counted)
	h.write(cw)
	if err := cw.Flush(); err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		bw := bufio.NewWriterSize(w, 64<<10)
		h.write(bw)
		_ = bw.Flush() // the client may hang up early: reading less is what is tested
	}))
	tb.Cleanup(srv.Close)
	return srv.URL, int(counted)
}

// sizeCount is an io.Writer that counts.
type sizeCount int

func (c *sizeCount) Write(p []byte) (int, error) { *c += sizeCount(len(p)); return len(p), nil }

// peakHeapGrowth runs f and returns by how much the heap's objects (live, or
// dead and not yet swept) grew at most while it ran, sampled every 100µs.
func peakHeapGrowth(f func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	base := read()
	peak := base
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			peak = max(peak, read())
			select {
			case <-done:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	return max(peak, read()) - base
}

// listHuge makes one ListPipes call against url and fails tb on error.
func listHuge(tb testing.TB, c *cloudapi.Client, url string) cloudapi.List[swv1.Pipe] {
	list, err := c.ListPipes(context.Background(), url, testCreds, orgID, svcID, pipeOptions{KeepBytes: statusBudget})
	if err != nil {
		tb.Fatal(err)
	}
	return list
}

// The operator's memory limit is 256 MiB; one list call, whatever the size of
// the response, must cost a small part of it.
func TestListMemoryIsBoundedByKeepBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes 40 MiB of responses")
	}
	// Measured at about 50 MiB; decoding such a body whole took 1.9 GiB.
	const bound = 80 << 20
	for _, h := range hugeLists() {
		t.Run(h.name, func(t *testing.T) {
			url, size := serveList(t, h)
			// Memory is measured on the whole answer: the decode work budget,
			// which stops the costliest of these early by default, is the
			// bound of CPU, not of memory (TestListOverTheDecodeWorkBudgetFails).
			c := newClient(cloudapi.Options{MaxResponseBytes: h.maxBytes, MaxDecodeWork: 1 << 40})
			var list cloudapi.List[swv1.Pipe]
			growth := peakHeapGrowth(func() { list = listHuge(t, c, url) })
			t.Logf("%.1f MiB body: peak heap growth %.1f MiB; kept %d of %d items",
				float64(size)/(1<<20), float64(growth)/(1<<20), len(list.Items), list.Total)
			if growth > bound {
				t.Errorf("heap grew by %d MiB during one list call, want at most %d MiB", growth>>20, bound>>20)
			}
			if len(list.Items) == 0 || len(list.Items) >= list.Total {
				t.Errorf("kept %d of %d items, want a non-empty part", len(list.Items), list.Total)
			}
		})
	}
}

// BenchmarkListPeakHeap reports the peak heap growth of one list call of a
// huge response, with the controller's default status budget.
func BenchmarkListPeakHeap(b *testing.B) {
	for _, h := range hugeLists() {
		b.Run(h.name, func(b *testing.B) {
			url, size := serveList(b, h)
			c := newClient(cloudapi.Options{MaxResponseBytes: h.maxBytes})
			b.SetBytes(int64(size))
			var peak uint64
			var kept int
			for b.Loop() {
				peak = max(peak, peakHeapGrowth(func() { kept = len(listHuge(b, c, url).Items) }))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(kept), "kept-items")
		})
	}
}
