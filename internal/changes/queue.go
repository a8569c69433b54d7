package changes

import (
	"sync"
	"time"
)

// queued is a change waiting to be sent, with when it was offered (its
// retries end RetryFor after that).
type queued struct {
	change  Change
	offered time.Time
}

// queue is a bounded FIFO of changes. push never waits: what does not fit
// is refused and counted by the caller. Its memory is bounded by its
// capacity: the backing array holds at most about twice as many changes,
// and is let go when the queue empties.
type queue struct {
	mu       sync.Mutex
	items    []queued
	head     int
	capacity int
	// inFlight are the changes workers took and have not finished with.
	inFlight int
	closed   bool
	// ready holds a token while changes may be waiting: a worker takes it
	// and passes it on if it leaves some.
	ready chan struct{}
}

func newQueue(capacity int) *queue {
	return &queue{capacity: capacity, ready: make(chan struct{}, 1)}
}

// push appends what fits of changes and returns how many it accepted; once
// the queue is closed it accepts none.
func (q *queue) push(changes []Change, offered time.Time) (accepted int) {
	q.mu.Lock()
	if !q.closed {
		accepted = min(len(changes), q.capacity-(len(q.items)-q.head))
		for _, c := range changes[:accepted] {
			q.items = append(q.items, queued{change: c, offered: offered})
		}
	}
	q.mu.Unlock()
	if accepted > 0 {
		q.signal()
	}
	return accepted
}

// pop takes the oldest change, counted in flight until done is called.
func (q *queue) pop() (queued, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.head == len(q.items) {
		return queued{}, false
	}
	item := q.items[q.head]
	q.items[q.head] = queued{} // let the strings go
	q.head++
	q.inFlight++
	switch {
	case q.head == len(q.items):
		q.head = 0
		if cap(q.items) > 1024 {
			q.items = nil
		} else {
			q.items = q.items[:0]
		}
	case q.head >= 1024 && 2*q.head >= len(q.items):
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	if q.head < len(q.items) {
		q.signal()
	}
	return item, true
}

// done ends the flight of a change pop returned.
func (q *queue) done() {
	q.mu.Lock()
	q.inFlight--
	q.mu.Unlock()
}

// close refuses further pushes and returns the changes still waiting, which
// it lets go.
func (q *queue) close() (left int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	left = len(q.items) - q.head
	q.items, q.head = nil, 0
	return left
}

// len is the changes waiting and in flight.
func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head + q.inFlight
}

func (q *queue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}
