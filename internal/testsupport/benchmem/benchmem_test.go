package benchmem_test

import (
	"runtime"
	"testing"

	"github.com/servicewatch/servicewatch/internal/testsupport/benchmem"
)

// What f keeps counts; what it allocates and drops does not.
func TestGrowthCountsWhatIsKept(t *testing.T) {
	var kept []byte
	grew := benchmem.Growth(func() { kept = make([]byte, 8<<20) })
	if grew < 7<<20 {
		t.Errorf("keeping 8 MiB grew the heap by %d bytes, want about %d", grew, 8<<20)
	}
	runtime.KeepAlive(kept)
	dropped := benchmem.Growth(func() { _ = make([]byte, 8<<20) })
	if dropped > 1<<20 {
		t.Errorf("dropping 8 MiB grew the heap by %d bytes, want under 1 MiB", dropped)
	}
}
