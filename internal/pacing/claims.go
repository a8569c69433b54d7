package pacing

import (
	"sync"
	"time"
)

// ClaimRecheck is how long a periodic refresh held back by a claim waits
// before asking again: long enough that hundreds of held refreshes cost few
// reconciles, short enough that they follow soon after the claims end.
const ClaimRecheck = 15 * time.Second

// ClaimGrace keeps a claim a little past the moment its watch was told to
// come back, so the claim is still there when the watch asks again.
const ClaimGrace = 2 * time.Second

// claims let work a user asked for (a new watch, a spec change, a requested
// sync) and a Secret's change get a busy rate budget before periodic
// refreshes. A rate budget answers whoever asks first when it has room;
// without claims, a refresh of a watch synced minutes ago takes the room
// that a new watch, with no data at all, was told to come back for. A watch
// that was told to wait claims the budget at its work level until it comes
// back; work of a lower level on that budget waits while such a claim
// stands.
//
// The Pacer books them per namespace of a budget (see Pacer.Ask): one
// namespace's 50 new watches held every periodic refresh on a shared key
// back for 2 minutes, another namespace's too, though that one asked no
// more than its share.
//
// Asking costs the same however many watches wait: each level of a budget
// keeps the latest end of its claims, and a level whose latest claim has
// ended is dropped whole.
type claims[K comparable] struct {
	mu sync.Mutex
	// byBudget holds, per budget fingerprint, the claims of each level.
	byBudget map[string]*[Levels]claimSet[K]
	// of holds the budgets each watch claims, at their levels.
	of members[K]
}

// claimSet is the claims of one level on one budget.
type claimSet[K comparable] struct {
	until map[K]time.Time
	// latest is the latest until of the set.
	latest time.Time
}

// newClaims returns an empty book.
func newClaims[K comparable]() *claims[K] {
	return &claims[K]{byBudget: map[string]*[Levels]claimSet[K]{}, of: members[K]{}}
}

// Claim records that the watch, deferred on the budget, comes back at until
// for work of this level. Periodic refreshes claim nothing.
func (c *claims[K]) Claim(budget string, key K, level Level, until time.Time) {
	if level == Periodic {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	leave[K, claimSet[K]](c.of, c.byBudget, budget, key)
	s := setOf(c.byBudget, budget, level)
	if s.until == nil {
		s.until = map[K]time.Time{}
	}
	until = until.Add(ClaimGrace)
	s.until[key] = until
	if until.After(s.latest) {
		s.latest = until
	}
	c.of.set(key, budget, level)
}

// Release drops the watch's claims: it was admitted, or it is gone.
func (c *claims[K]) Release(key K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	leaveAll[K, claimSet[K]](c.of, c.byBudget, key)
}

func (s *claimSet[K]) remove(key K) {
	delete(s.until, key)
	if len(s.until) == 0 {
		*s = claimSet[K]{}
	}
}

func (s *claimSet[K]) empty() bool { return len(s.until) == 0 }

// HeldFor tells whether another watch claims the budget for work of a
// higher level than level at now, and if so how long the asker should wait
// before asking again. Levels whose claims have all ended are dropped on
// the way.
func (c *claims[K]) HeldFor(budget string, key K, level Level, now time.Time) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sets := c.byBudget[budget]
	if sets == nil {
		return 0, false
	}
	held := false
	for l := level + 1; l < Levels && !held; l++ {
		held = c.heldAtLocked(budget, &sets[l], key, now)
	}
	dropIfEmpty[K, claimSet[K]](c.byBudget, budget)
	if !held {
		return 0, false
	}
	return ClaimRecheck, true
}

// heldAtLocked tells whether a watch other than key holds a claim of s at
// now. It looks at each claim only when key's own claim is the latest of
// several, which a watch that asks at a lower level than it claimed at
// seldom makes.
func (c *claims[K]) heldAtLocked(budget string, s *claimSet[K], key K, now time.Time) bool {
	if len(s.until) == 0 {
		return false
	}
	if !s.latest.After(now) { // every claim of the level has ended
		for k := range s.until {
			c.of.drop(k, budget)
		}
		*s = claimSet[K]{}
		return false
	}
	own, mine := s.until[key]
	switch {
	case !mine:
		return true // the latest claim is another's, and stands
	case len(s.until) == 1:
		return false
	case own.Before(s.latest):
		return true
	}
	for k, until := range s.until {
		if k != key && until.After(now) {
			return true
		}
	}
	return false
}
