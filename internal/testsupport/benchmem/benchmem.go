// Package benchmem measures what code keeps on the heap, for the benchmarks
// and memory tests of several packages, so that all measure it alike.
package benchmem

import "runtime"

// Growth is how much more live heap there is after f than before. The heap
// is collected on both sides, so only what f keeps counts, not what it
// allocated and dropped.
func Growth(f func()) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}
