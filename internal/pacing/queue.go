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
// and served counts the namespace's calls admitted. Both count from the
// line's virtual start when the namespace joined (the least served per
// weight of the namespaces already in it, see join), so that a namespace
// that joins late takes turns from then on, not all the turns it missed.
type namespaceLine[K comparable] struct {
	weight         float64
	issued, served float64
	place          map[K]float64
	// due is when each waiter was told to come back, and finish where its
	// last call stands in the turns, per weight (see Turn).
	due    map[K]time.Time
	finish map[K]float64
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
// wait as it is. The waiters of the namespaces in skip (over their share,
// when who is within its own: see reservations) are not before it.
func (q *queue[K]) Wait(budget string, key K, who Waiter, level Level, n int, rate float64, wait time.Duration, skip map[string]bool) time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	if prev, ok := q.of.of(key, budget); ok && prev != level {
		q.leaveLocked(budget, key) // its work changed: it queues anew
	}
	return q.waitLocked(budget, key, who, level, n, rate, wait, skip)
}

func (q *queue[K]) waitLocked(budget string, key K, who Waiter, level Level, n int, rate float64, wait time.Duration, skip map[string]bool) time.Duration {
	l := setOf(q.budgets, budget, level)
	ns := l.join(who)
	place, ok := ns.place[key]
	if !ok {
		place = ns.issued
		ns.place[key] = place
		ns.issued += float64(n)
		ns.finish[key] = ns.issued / ns.weight
		l.namespace[key] = who.Namespace
		q.of.set(key, budget, level)
	}
	if rate <= 0 {
		return wait
	}
	ahead := l.ahead(who.Namespace, place, float64(n), skip)
	return wait + time.Duration(ahead/rate*float64(time.Second))
}

// Due records when the watch, told to wait, comes back for its turn.
func (q *queue[K]) Due(budget string, key K, level Level, at time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	lines := q.budgets[budget]
	if lines == nil {
		return
	}
	l := &lines[level]
	if ns := l.namespaces[l.namespace[key]]; ns != nil && ns.place != nil {
		if _, waiting := ns.place[key]; waiting {
			ns.due[key] = at
		}
	}
}

// Turn tells whether the watch, of who's namespace, may take the budget's
// room for n calls at level now. It may not when another waiter whose turn
// comes first (its last call's place per weight is before the watch's) is
// due back within lead of now (a call's spacing) and not more than
// ClaimGrace past its time: the room is that waiter's. Without this,
// waiters told their turns come back when the budget has room and whoever
// asks first takes it: a namespace's many waiters, each placed on the
// budget's grid, took every room as another namespace's waiter came back
// for it, and a waiter that lost its room once lost it again to the next
// on the grid. A waiter that does not come back holds the room at most
// ClaimGrace. The waiters of the namespaces in skip do not count (see
// Wait). It costs a look at each waiter of the budget's line.
//
// When it may not, first is how long until the earliest of those waiters
// is back (lead when all of them are late: they may still come), when the
// budget has room for it: the wait that Wait counts the calls before the
// watch from. Counting them
// from a whole spacing later instead told the watch to come back up to a
// spacing after its room, and on a cold start the keys whose first room
// came within a spacing all came back on one instant: their refills, which
// the budgets offset (ratebudget's Store.phaseFor), bunched again, and so
// did the syncs that followed them.
func (q *queue[K]) Turn(budget string, key K, who Waiter, level Level, n int, now time.Time, lead time.Duration, skip map[string]bool) (mine bool, first time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	lines := q.budgets[budget]
	if lines == nil {
		return true, 0
	}
	l := &lines[level]
	mine, first = true, lead
	finish := l.finishOf(key, who, n)
	for name, ns := range l.namespaces {
		if skip[name] {
			continue
		}
		for other, at := range ns.due {
			if other != key && ns.finish[other] < finish && !at.Before(now.Add(-ClaimGrace)) && !at.After(now.Add(lead)) {
				mine = false
				if at.After(now) {
					first = min(first, at.Sub(now))
				}
			}
		}
	}
	if mine {
		return true, 0
	}
	return false, first
}

// finishOf is where the last of the watch's n calls stands in the turns,
// per weight: its place's when it waits in the line, else where it would
// join.
func (l *line[K]) finishOf(key K, who Waiter, n int) float64 {
	ns := l.namespaces[who.Namespace]
	if ns == nil {
		return l.start() + float64(n)/who.weight()
	}
	if f, ok := ns.finish[key]; ok {
		return f
	}
	return (ns.issued + float64(n)) / ns.weight
}

// start is the line's virtual start: the least served per weight of the
// namespaces in it, 0 when none is.
func (l *line[K]) start() float64 {
	least, found := 0.0, false
	for _, ns := range l.namespaces {
		if v := ns.served / ns.weight; !found || v < least {
			least, found = v, true
		}
	}
	return least
}

// join returns the namespace's part of the line, creating it.
func (l *line[K]) join(who Waiter) *namespaceLine[K] {
	if l.namespaces == nil {
		l.namespaces, l.namespace = map[string]*namespaceLine[K]{}, map[K]string{}
	}
	ns := l.namespaces[who.Namespace]
	if ns == nil {
		start := l.start() * who.weight()
		ns = &namespaceLine[K]{issued: start, served: start, place: map[K]float64{}, due: map[K]time.Time{}, finish: map[K]float64{}}
		l.namespaces[who.Namespace] = ns
	}
	ns.weight = who.weight()
	return ns
}

// ahead is the calls before a waiter of namespace name at place with n
// calls of its own: its namespace's calls before it not yet served, and of
// each other namespace's waiting calls those whose turn (per weight) comes
// before the waiter's last call's, turn and turn about; none of those in
// skip. It costs one step per namespace waiting.
func (l *line[K]) ahead(name string, place, n float64, skip map[string]bool) float64 {
	mine := l.namespaces[name]
	finish := (place + n) / mine.weight
	ahead := max(0, place-mine.served)
	for other, ns := range l.namespaces {
		if other != name && !skip[other] {
			ahead += min(max(0, ns.issued-ns.served), max(0, finish*ns.weight-ns.served))
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
		delete(ns.due, key)
		delete(ns.finish, key)
		if len(ns.place) == 0 {
			delete(l.namespaces, name) // its part of the line starts over
		}
	}
	if len(l.namespace) == 0 {
		*l = line[K]{}
	}
}

func (l *line[K]) empty() bool { return len(l.namespace) == 0 }
