package controller

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// claimRecheck is how long a periodic refresh held back by a claim waits
// before asking again: long enough that hundreds of held refreshes cost few
// Secret reads, short enough that they follow soon after the claims end.
const claimRecheck = 15 * time.Second

// claimGrace keeps a claim a little past the moment its watch was told to
// come back, so the claim is still there when the watch asks again.
const claimGrace = 2 * time.Second

// budgetClaims let work a user asked for (a new watch, a spec change, a
// requested sync) and a Secret's change get a busy rate budget before
// periodic refreshes. The client-side budget answers whoever asks first when
// it has room; without claims, a refresh of a watch synced minutes ago takes
// the room that a new watch, with no data at all, was told to come back
// for. A watch that was told to wait claims the budget at its work level
// until it comes back; work of a lower level on that budget waits while
// such a claim stands.
type budgetClaims struct {
	mu sync.Mutex
	// byBudget holds, per budget fingerprint, the watches that claim it.
	byBudget map[string]map[types.NamespacedName]budgetClaim
}

type budgetClaim struct {
	level workLevel
	until time.Time
}

func newBudgetClaims() *budgetClaims {
	return &budgetClaims{byBudget: map[string]map[types.NamespacedName]budgetClaim{}}
}

// claim records that the watch, deferred on the budget, comes back at until
// for work of this level. Periodic refreshes claim nothing.
func (c *budgetClaims) claim(budget string, key types.NamespacedName, level workLevel, until time.Time) {
	if level == periodicWork {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	claims := c.byBudget[budget]
	if claims == nil {
		claims = map[types.NamespacedName]budgetClaim{}
		c.byBudget[budget] = claims
	}
	claims[key] = budgetClaim{level: level, until: until.Add(claimGrace)}
}

// release drops the watch's claims: it was admitted, or it is gone.
func (c *budgetClaims) release(key types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for budget, claims := range c.byBudget {
		delete(claims, key)
		if len(claims) == 0 {
			delete(c.byBudget, budget)
		}
	}
}

// heldFor tells whether another watch claims the budget for work of a
// higher level than level at now, and if so how long the asker should wait
// before asking again. Expired claims are dropped on the way.
func (c *budgetClaims) heldFor(budget string, key types.NamespacedName, level workLevel, now time.Time) (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	held := false
	for other, cl := range c.byBudget[budget] {
		if !cl.until.After(now) {
			delete(c.byBudget[budget], other)
			continue
		}
		if other != key && cl.level > level {
			held = true
		}
	}
	if len(c.byBudget[budget]) == 0 {
		delete(c.byBudget, budget)
	}
	if !held {
		return 0, false
	}
	return claimRecheck, true
}
