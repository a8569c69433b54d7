package pacing

// The budget's line as it was before issue 30 (one first-come line per
// level, no turns between namespaces, no room kept for a waiter's turn),
// kept here so that BenchmarkSharedKeyLine measures both side by side.

import (
	"sync"
	"time"
)

type oldQueue[K comparable] struct {
	mu      sync.Mutex
	budgets map[string]*[Levels]oldLine[K]
	of      members[K]
}

// line is the waiters of one level on one budget, as counts of calls: a
// waiter's place is the calls queued before it, and served counts the calls
// admitted since the line formed.
type oldLine[K comparable] struct {
	issued, served float64
	place          map[K]float64
}

// newQueue returns an empty book.
func newOldQueue[K comparable]() *oldQueue[K] {
	return &oldQueue[K]{budgets: map[string]*[Levels]oldLine[K]{}, of: members[K]{}}
}

// Wait is how long the watch, told by the budget to wait wait for n calls
// of work at level, should wait: wait, and then as long as the calls before
// it in its line take at rate calls per second. The budget's wait is when it
// has room for the first of them, not now: a budget whose refills are offset
// (see ratebudget's Store.phaseFor) has room up to a spacing later than
// its rate alone says, and a waiter told to come back at its rate from now
// would come back early and ask once more. A rate of 0 (unlimited) leaves
// wait as it is.
func (q *oldQueue[K]) Wait(budget string, key K, level Level, n int, rate float64, wait time.Duration) time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	if prev, ok := q.of.of(key, budget); ok && prev != level {
		q.leaveLocked(budget, key) // its work changed: it queues anew
	}
	return q.waitLocked(budget, key, level, n, rate, wait)
}

func (q *oldQueue[K]) waitLocked(budget string, key K, level Level, n int, rate float64, wait time.Duration) time.Duration {
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
func (q *oldQueue[K]) Served(budget string, key K, level Level, n int) {
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
func (q *oldQueue[K]) Forget(key K) {
	q.mu.Lock()
	defer q.mu.Unlock()
	leaveAll[K, oldLine[K]](q.of, q.budgets, key)
}

// leaveLocked takes the watch out of its line on the budget; a line left
// empty starts over, and a budget with no line goes.
func (q *oldQueue[K]) leaveLocked(budget string, key K) {
	leave[K, oldLine[K]](q.of, q.budgets, budget, key)
}

func (l *oldLine[K]) remove(key K) {
	delete(l.place, key)
	if len(l.place) == 0 {
		*l = oldLine[K]{}
	}
}

func (l *oldLine[K]) empty() bool { return len(l.place) == 0 }

// oldAsk is Pacer.Ask before issue 30, on q.
func (p *Pacer[K, R]) oldAsk(q *oldQueue[K], key K, level Level, b Budget, n int) time.Duration {
	now := p.clock.Now()
	wait, held := p.claims.HeldFor(b.ID, key, level, now)
	if !held {
		if wait = b.Admit(n); wait > 0 {
			wait = q.Wait(b.ID, key, level, n, b.Rate, wait)
		} else {
			q.Served(b.ID, key, level, n)
		}
	}
	if wait > 0 {
		p.claims.Claim(b.ID, key, level, now.Add(wait))
	}
	return wait
}
