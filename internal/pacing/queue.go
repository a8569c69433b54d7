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
//
// Within a line the namespaces take turns, by weight: a waiter's place is
// the calls queued before it in its own namespace, and as many of each other
// namespace's as they may make meanwhile, turn and turn about. Before, the
// line was one first-come line, and a namespace whose 50 new watches queued
// first held another namespace's one new watch behind all their calls (55 s
// at the management API's 10 calls per 11 s).
type queue[K comparable] struct {
	mu      sync.Mutex
	budgets map[string]*[Levels]line[K]
	of      members[K]
}

// line is the waiters of one level on one budget, by namespace.
type line[K comparable] struct {
	namespaces map[string]*namespaceLine[K]
	namespace  map[K]string
}

// namespaceLine is the waiters of one namespace in a line, as counts of
// calls: a waiter's place is the calls of its namespace queued before it,
// and served counts the namespace's calls admitted since it joined the line.
type namespaceLine[K comparable] struct {
	weight         float64
	issued, served float64
	place          map[K]float64
}

// Waiter is who asks a budget for calls: the watch's namespace, which takes
// turns with the others in the budget's line by its weight (<= 0: 1).
type Waiter struct {
	Namespace string
	Weight    float64
}

// weight is the namespace's weight, 1 when it names none.
func (w Waiter) weight() float64 {
	if !(w.Weight > 0) {
		return 1
	}
	return w.Weight
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
func (q *queue[K]) Wait(budget string, key K, who Waiter, level Level, n int, rate float64, wait time.Duration) time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	if prev, ok := q.of.of(key, budget); ok && prev != level {
		q.leaveLocked(budget, key) // its work changed: it queues anew
	}
	return q.waitLocked(budget, key, who, level, n, rate, wait)
}

func (q *queue[K]) waitLocked(budget string, key K, who Waiter, level Level, n int, rate float64, wait time.Duration) time.Duration {
	l := setOf(q.budgets, budget, level)
	ns := l.join(who)
	place, ok := ns.place[key]
	if !ok {
		place = ns.issued
		ns.place[key] = place
		ns.issued += float64(n)
		l.namespace[key] = who.Namespace
		q.of.set(key, budget, level)
	}
	if rate <= 0 {
		return wait
	}
	ahead := l.ahead(who.Namespace, max(0, place-ns.served), float64(n))
	return wait + time.Duration(ahead/rate*float64(time.Second))
}

// join returns the namespace's part of the line, creating it.
func (l *line[K]) join(who Waiter) *namespaceLine[K] {
	if l.namespaces == nil {
		l.namespaces, l.namespace = map[string]*namespaceLine[K]{}, map[K]string{}
	}
	ns := l.namespaces[who.Namespace]
	if ns == nil {
		ns = &namespaceLine[K]{place: map[K]float64{}}
		l.namespaces[who.Namespace] = ns
	}
	ns.weight = who.weight()
	return ns
}

// ahead is the calls before a waiter of namespace name with own calls of
// its namespace before it and n of its own: those, and of each other
// namespace's waiting calls as many as its weight lets it make while the
// waiter's namespace makes own + n (turn and turn about, by weight). It
// costs one step per namespace waiting.
func (l *line[K]) ahead(name string, own, n float64) float64 {
	perWeight := (own + n) / l.namespaces[name].weight
	ahead := own
	for other, ns := range l.namespaces {
		if other != name {
			ahead += min(max(0, ns.issued-ns.served), perWeight*ns.weight)
		}
	}
	return ahead
}

// Served records that the budget admitted n calls of the watch at level:
// the line moves on, and the watch leaves it.
func (q *queue[K]) Served(budget string, key K, who Waiter, level Level, n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	lines := q.budgets[budget]
	if lines == nil {
		return
	}
	if ns := lines[level].namespaces[who.Namespace]; ns != nil {
		ns.served += float64(n)
	}
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
	name, ok := l.namespace[key]
	if !ok {
		return
	}
	delete(l.namespace, key)
	if ns := l.namespaces[name]; ns != nil {
		delete(ns.place, key)
		if len(ns.place) == 0 {
			delete(l.namespaces, name) // its part of the line starts over
		}
	}
	if len(l.namespace) == 0 {
		*l = line[K]{}
	}
}

func (l *line[K]) empty() bool { return len(l.namespace) == 0 }
