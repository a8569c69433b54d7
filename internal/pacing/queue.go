package pacing

import (
	"sync"
	"time"
)

// queue spaces out the asks of the watches that wait for one rate budget.
// A budget that is spent tells every asker the same short wait, until it has
// room for the next few calls; were each waiting watch to come back then,
// every room made would cost a round of asks of all of them, and the waiting
// would cost work in proportion to the waiters. Instead each waiter takes a
// place in its budget's line at its level, and comes back when the calls
// queued before it will have been made at the budget's rate: about once,
// whatever the length of the line. A higher level's line does not wait for
// a lower one's (see claims).
type queue[K comparable] struct {
	mu      sync.Mutex
	budgets map[string]*[Levels]line[K]
	of      members[K]
}

// line is the waiters of one level on one budget, as counts of calls: a
// waiter's place is the calls queued before it, and served counts the calls
// admitted since the line formed.
type line[K comparable] struct {
	issued, served float64
	place          map[K]float64
}

// newQueue returns an empty book.
func newQueue[K comparable]() *queue[K] {
	return &queue[K]{budgets: map[string]*[Levels]line[K]{}, of: members[K]{}}
}

// Wait is how long the watch, told by the budget to wait wait for n calls
// of work at level, should wait: wait, and then as long as the calls before
// it in its line take at rate calls per second. The budget's wait is when it
// has room for the first of them, not now: a budget whose refills are offset
// (see ratebudget's Store.phaseFor) has room up to a spacing later than
// its rate alone says, and a waiter told to come back at its rate from now
// would come back early and ask once more. A rate of 0 (unlimited) leaves
// wait as it is.
func (q *queue[K]) Wait(budget string, key K, level Level, n int, rate float64, wait time.Duration) time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	if prev, ok := q.of.of(key, budget); ok && prev != level {
		q.leaveLocked(budget, key) // its work changed: it queues anew
	}
	return q.waitLocked(budget, key, level, n, rate, wait)
}

func (q *queue[K]) waitLocked(budget string, key K, level Level, n int, rate float64, wait time.Duration) time.Duration {
	l := setOf(q.budgets, budget, level)
	if l.place == nil {
		l.place = map[K]float64{}
	}
	place, ok := l.place[key]
	if !ok {
		place = l.issued
		l.place[key] = place
		l.issued += float64(n)
		q.of.set(key, budget, level)
	}
	if rate <= 0 {
		return wait
	}
	ahead := max(0, place-l.served)
	return wait + time.Duration(ahead/rate*float64(time.Second))
}

// Served records that the budget admitted n calls of the watch at level:
// the line moves on, and the watch leaves it.
func (q *queue[K]) Served(budget string, key K, level Level, n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	lines := q.budgets[budget]
	if lines == nil {
		return
	}
	lines[level].served += float64(n)
	q.leaveLocked(budget, key)
}

// Forget takes a watch that went away out of every line.
func (q *queue[K]) Forget(key K) {
	q.mu.Lock()
	defer q.mu.Unlock()
	leaveAll[K, line[K]](q.of, q.budgets, key)
}

// leaveLocked takes the watch out of its line on the budget; a line left
// empty starts over, and a budget with no line goes.
func (q *queue[K]) leaveLocked(budget string, key K) {
	leave[K, line[K]](q.of, q.budgets, budget, key)
}

func (l *line[K]) remove(key K) {
	delete(l.place, key)
	if len(l.place) == 0 {
		*l = line[K]{}
	}
}

func (l *line[K]) empty() bool { return len(l.place) == 0 }
