package pacing

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestClaims(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	newWatch := types.NamespacedName{Namespace: "a", Name: "new"}
	old := types.NamespacedName{Namespace: "a", Name: "old"}
	rotated := types.NamespacedName{Namespace: "a", Name: "rotated"}
	type ask struct {
		key   types.NamespacedName
		level Level
		at    time.Duration // after t0
	}
	tests := []struct {
		name   string
		claims func(c *claims[types.NamespacedName])
		ask    ask
		budget string
		held   bool
	}{
		{"no claim: nothing held", func(*claims[types.NamespacedName]) {}, ask{old, Periodic, 0}, "k1", false},
		{"a new watch told to wait holds periodic refreshes back",
			func(c *claims[types.NamespacedName]) { c.Claim("k1", newWatch, User, t0.Add(5*time.Second)) }, ask{old, Periodic, time.Second}, "k1", true},
		{"and a Secret's change",
			func(c *claims[types.NamespacedName]) { c.Claim("k1", newWatch, User, t0.Add(5*time.Second)) }, ask{rotated, Secret, time.Second}, "k1", true},
		{"but not other user work: that is first come, first served",
			func(c *claims[types.NamespacedName]) { c.Claim("k1", newWatch, User, t0.Add(5*time.Second)) }, ask{old, User, time.Second}, "k1", false},
		{"nor the claimant itself",
			func(c *claims[types.NamespacedName]) { c.Claim("k1", newWatch, User, t0.Add(5*time.Second)) }, ask{newWatch, User, 6 * time.Second}, "k1", false},
		{"nor another budget",
			func(c *claims[types.NamespacedName]) { c.Claim("k1", newWatch, User, t0.Add(5*time.Second)) }, ask{old, Periodic, time.Second}, "k2", false},
		{"a claim outlives its return by the grace only",
			func(c *claims[types.NamespacedName]) { c.Claim("k1", newWatch, User, t0.Add(5*time.Second)) }, ask{old, Periodic, 5*time.Second + ClaimGrace}, "k1", false},
		{"a released claim holds nothing",
			func(c *claims[types.NamespacedName]) {
				c.Claim("k1", newWatch, User, t0.Add(5*time.Second))
				c.Release(newWatch)
			}, ask{old, Periodic, time.Second}, "k1", false},
		{"a periodic refresh told to wait claims nothing",
			func(c *claims[types.NamespacedName]) { c.Claim("k1", old, Periodic, t0.Add(5*time.Second)) }, ask{rotated, Periodic, time.Second}, "k1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClaims[types.NamespacedName]()
			tt.claims(c)
			wait, held := c.HeldFor(tt.budget, tt.ask.key, tt.ask.level, t0.Add(tt.ask.at))
			if held != tt.held {
				t.Fatalf("held = %v, want %v", held, tt.held)
			}
			if held && wait != ClaimRecheck {
				t.Errorf("wait %s, want %s", wait, ClaimRecheck)
			}
		})
	}
}

// Expired and released claims leave nothing behind, however many watches
// came and went.
func TestClaimsForgetEndedClaims(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	c := newClaims[types.NamespacedName]()
	for i := range 100 {
		c.Claim("k1", types.NamespacedName{Namespace: "a", Name: string(rune('a' + i%26))}, User, t0)
	}
	c.Claim("k2", types.NamespacedName{Namespace: "b", Name: "x"}, User, t0.Add(time.Hour))
	c.HeldFor("k1", types.NamespacedName{Name: "asker"}, Periodic, t0.Add(time.Minute))
	c.Release(types.NamespacedName{Namespace: "b", Name: "x"})
	if len(c.byBudget) != 0 || len(c.of) != 0 {
		t.Errorf("claims left: %v, %v", c.byBudget, c.of)
	}
}
