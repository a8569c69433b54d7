package controller

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

func TestBudgetClaims(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	newWatch := types.NamespacedName{Namespace: "a", Name: "new"}
	old := types.NamespacedName{Namespace: "a", Name: "old"}
	rotated := types.NamespacedName{Namespace: "a", Name: "rotated"}
	type ask struct {
		key   types.NamespacedName
		level workLevel
		at    time.Duration // after t0
	}
	tests := []struct {
		name   string
		claims func(c *budgetClaims)
		ask    ask
		budget string
		held   bool
	}{
		{"no claim: nothing held", func(*budgetClaims) {}, ask{old, periodicWork, 0}, "k1", false},
		{"a new watch told to wait holds periodic refreshes back",
			func(c *budgetClaims) { c.claim("k1", newWatch, userWork, t0.Add(5*time.Second)) }, ask{old, periodicWork, time.Second}, "k1", true},
		{"and a Secret's change",
			func(c *budgetClaims) { c.claim("k1", newWatch, userWork, t0.Add(5*time.Second)) }, ask{rotated, secretWork, time.Second}, "k1", true},
		{"but not other user work: that is first come, first served",
			func(c *budgetClaims) { c.claim("k1", newWatch, userWork, t0.Add(5*time.Second)) }, ask{old, userWork, time.Second}, "k1", false},
		{"nor the claimant itself",
			func(c *budgetClaims) { c.claim("k1", newWatch, userWork, t0.Add(5*time.Second)) }, ask{newWatch, userWork, 6 * time.Second}, "k1", false},
		{"nor another budget",
			func(c *budgetClaims) { c.claim("k1", newWatch, userWork, t0.Add(5*time.Second)) }, ask{old, periodicWork, time.Second}, "k2", false},
		{"a claim outlives its return by the grace only",
			func(c *budgetClaims) { c.claim("k1", newWatch, userWork, t0.Add(5*time.Second)) }, ask{old, periodicWork, 5*time.Second + claimGrace}, "k1", false},
		{"a released claim holds nothing",
			func(c *budgetClaims) {
				c.claim("k1", newWatch, userWork, t0.Add(5*time.Second))
				c.release(newWatch)
			}, ask{old, periodicWork, time.Second}, "k1", false},
		{"a periodic refresh told to wait claims nothing",
			func(c *budgetClaims) { c.claim("k1", old, periodicWork, t0.Add(5*time.Second)) }, ask{rotated, periodicWork, time.Second}, "k1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newBudgetClaims()
			tt.claims(c)
			wait, held := c.heldFor(tt.budget, tt.ask.key, tt.ask.level, t0.Add(tt.ask.at))
			if held != tt.held {
				t.Fatalf("held = %v, want %v", held, tt.held)
			}
			if held && wait != claimRecheck {
				t.Errorf("wait %s, want %s", wait, claimRecheck)
			}
		})
	}
}

// Expired and released claims leave nothing behind, however many watches
// came and went.
func TestBudgetClaimsForgetEndedClaims(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	c := newBudgetClaims()
	for i := range 100 {
		c.claim("k1", types.NamespacedName{Namespace: "a", Name: string(rune('a' + i%26))}, userWork, t0)
	}
	c.claim("k2", types.NamespacedName{Namespace: "b", Name: "x"}, userWork, t0.Add(time.Hour))
	c.heldFor("k1", types.NamespacedName{Name: "asker"}, periodicWork, t0.Add(time.Minute))
	c.release(types.NamespacedName{Namespace: "b", Name: "x"})
	if len(c.byBudget) != 0 {
		t.Errorf("claims left: %v", c.byBudget)
	}
}

// The scenario the claims exist for: a key's budget is spent, a new watch is
// told to come back in 5 s; when the budget has room again, a periodic
// refresh of another watch asks first and is held back, and the new watch
// gets the room.
func TestAskServesANewWatchBeforeARefresh(t *testing.T) {
	clock := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	metrics, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	cloud := &budgetCloud{refuse: true}
	r := &ServiceWatchReconciler{Cloud: cloud, Metrics: metrics, claims: newBudgetClaims(), now: func() time.Time { return clock }}
	creds := cloudapi.NewBasicCredentials("key", "secret")
	newWatch := types.NamespacedName{Namespace: "a", Name: "new"}
	old := types.NamespacedName{Namespace: "a", Name: "old"}

	if wait := r.ask(newWatch, userWork, cloudapi.APIManagement, "https://api.example.com", creds, 2); wait != 5*time.Second {
		t.Fatalf("the new watch waits %s, want the budget's 5s", wait)
	}
	cloud.refuse = false
	clock = clock.Add(5 * time.Second)
	if wait := r.ask(old, periodicWork, cloudapi.APIManagement, "https://api.example.com", creds, 2); wait != claimRecheck {
		t.Fatalf("the refresh waits %s, want %s behind the new watch's claim", wait, claimRecheck)
	}
	if cloud.admits != 1 {
		t.Fatalf("the held refresh asked the budget (%d admissions): it would take the new watch's room", cloud.admits)
	}
	if wait := r.ask(newWatch, userWork, cloudapi.APIManagement, "https://api.example.com", creds, 2); wait != 0 {
		t.Fatalf("the new watch waits %s once the budget has room", wait)
	}
	r.claims.release(newWatch) // as admit does once every budget said yes
	if wait := r.ask(old, periodicWork, cloudapi.APIManagement, "https://api.example.com", creds, 2); wait != 0 {
		t.Fatalf("the refresh still waits %s after the new watch was served", wait)
	}
}
