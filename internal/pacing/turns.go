package pacing

import "sync"

// turns remembers where each watch's next batch of reads starts, for a watch
// that has more reads of a budget than the budget admits at once (an alert
// token's burst below the watch's number of alerts): each sync makes the
// next batch, in turn, so every read comes round and none is left out for
// good, and the watch never asks the budget for more than it can admit (a
// standing ask that can never be served would hold back the budget's other
// watches too).
type turns[K comparable] struct {
	mu   sync.Mutex
	next map[K]int
}

// newTurns returns an empty book.
func newTurns[K comparable]() *turns[K] {
	return &turns[K]{next: map[K]int{}}
}

// Next returns the indexes, among n reads, of the watch's next batch of at
// most size: all n when they fit. It does not move the turn (see Took).
func (t *turns[K]) Next(key K, n, size int) []int {
	if size <= 0 || n <= size {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	t.mu.Lock()
	start := t.next[key] % n
	t.mu.Unlock()
	out := make([]int, size)
	for i := range out {
		out[i] = (start + i) % n
	}
	return out
}

// Took records that the watch made the batch Next gave: its next batch
// starts after it.
func (t *turns[K]) Took(key K, n, size int) {
	if size <= 0 || n <= size {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next[key] = (t.next[key]%n + size) % n
}

// Forget drops the turn of a watch that went away.
func (t *turns[K]) Forget(key K) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.next, key)
}
