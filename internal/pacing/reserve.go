package pacing

import (
	"sync"
	"time"
)

// reservations keep a rate budget's room for the syncs of the namespaces
// within their share of it (tenancy), against the namespaces over theirs.
// A namespace over its share takes everything the others leave
// (work-conserving), so the budget is always spent; without reservations,
// a watch of a namespace within its share that came due found it spent and
// waited its turn behind the big namespace's waiters, up to 15 s at the
// management key's 10 calls per 11 s, and its interval came out anywhere
// from 27.5 to 53 s instead of 30 (docs/benchmarks.md, "One key, three
// namespaces").
//
// The books know when each such watch is next due (its schedule), and a
// waiter that was told to wait when it comes back: each reserves its calls
// on each of its budgets for then. A namespace over its share may not take
// the budget's room within the time the budget takes to earn a reserved
// sync's calls before it is due (its calls at the budget's rate): the room
// it leaves builds up as the budget's burst, and the reserved sync spends
// it, so the budget makes as many calls as before and the namespace over
// its share gets all of them but those of the reserved syncs. A reservation
// whose watch does not come (it reused another's reads, or went away) is
// dropped ClaimGrace after its time.
type reservations[K comparable] struct {
	mu       sync.Mutex
	byBudget map[string]map[K]reservation
	of       map[K]map[string]bool
}

// reservation is the calls of one watch's sync on one budget.
type reservation struct {
	namespace string
	at        time.Time
	calls     int
}

// newReservations returns an empty book.
func newReservations[K comparable]() *reservations[K] {
	return &reservations[K]{byBudget: map[string]map[K]reservation{}, of: map[K]map[string]bool{}}
}

// Reserve holds calls of the budget for the watch, of namespace, at at,
// replacing what it reserved there before.
func (r *reservations[K]) Reserve(budget string, key K, namespace string, calls int, at time.Time) {
	if calls <= 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byBudget[budget] == nil {
		r.byBudget[budget] = map[K]reservation{}
	}
	r.byBudget[budget][key] = reservation{namespace: namespace, at: at, calls: calls}
	if r.of[key] == nil {
		r.of[key] = map[string]bool{}
	}
	r.of[key][budget] = true
}

// Move puts every reservation of the watch at at: its schedule moved.
func (r *reservations[K]) Move(key K, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for budget := range r.of[key] {
		res := r.byBudget[budget][key]
		res.at = at
		r.byBudget[budget][key] = res
	}
}

// Drop takes the watch's reservation of the budget back: it was admitted.
func (r *reservations[K]) Drop(budget string, key K) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropLocked(budget, key)
}

// Release takes back every reservation of the watch.
func (r *reservations[K]) Release(key K) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for budget := range r.of[key] {
		r.dropLocked(budget, key)
	}
}

func (r *reservations[K]) dropLocked(budget string, key K) {
	delete(r.byBudget[budget], key)
	if len(r.byBudget[budget]) == 0 {
		delete(r.byBudget, budget)
	}
	delete(r.of[key], budget)
	if len(r.of[key]) == 0 {
		delete(r.of, key)
	}
}

// HoldFor is how long a watch of namespace, over its share of the budget,
// must wait at now before it may take the budget's room, earned at rate
// calls per second: until the reserved syncs of the other namespaces within
// their share (those not in over) that the budget, spent now, could not
// earn the calls of by their times (less slack) have had them. 0 when none
// is. Reservations past their time by more than ClaimGrace are dropped on
// the way. It costs a look at each reservation of the budget.
//
// Each reservation is weighed alone: weighing syncs due close together as
// one, so that the budget earns all their calls ahead of the first, left
// it idle the longer and made 1 % fewer calls, for no fewer late syncs
// (TestSharedKeyKeepsSmallNamespacesOnTime).
func (r *reservations[K]) HoldFor(budget, namespace string, over map[string]bool, now time.Time, rate float64) time.Duration {
	if rate <= 0 {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var hold time.Duration
	for key, res := range r.byBudget[budget] {
		switch {
		case res.at.Add(ClaimGrace).Before(now):
			r.dropLocked(budget, key)
		case res.namespace == namespace || over[res.namespace]:
		default:
			earn := callsAt(res.calls, rate)
			if until := max(0, res.at.Sub(now)); until < earn-slack(rate) {
				hold = max(hold, until+earn)
			}
		}
	}
	return hold
}

// callsAt is how long the budget takes to earn calls at rate.
func callsAt(calls int, rate float64) time.Duration {
	return time.Duration(float64(calls) / rate * float64(time.Second))
}

// slack is how late a reserved sync may get its calls so that the budget
// wastes none of its room: a call's spacing. A reservation that left the
// budget its whole time to earn the calls would, between two reserved syncs
// closer than twice that, leave the budget full and idle, its refills lost.
func slack(rate float64) time.Duration { return callsAt(1, rate) }
