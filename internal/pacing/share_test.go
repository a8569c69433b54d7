package pacing

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Three namespaces on one key, with 50, 5 and 1 watches at 30 s: together
// they ask 112 calls per 30 s of a key that allows 10 per 11 s. Only the
// namespace over its share is stretched; the small ones keep their
// interval, and an idle namespace leaves its share to the others.
func TestDemandsShareOneKeyBetweenNamespaces(t *testing.T) {
	const allowed = 10.0 / 11
	every := 30 * time.Second
	// note gives the watch's factor and, when it is stretched, its
	// namespace's share and need in calls per minute (the IntervalMet
	// condition's figures).
	note := func(b *demands[types.NamespacedName, read], ns string, i int, weight float64) (float64, string) {
		d := []Demand[read]{{Budget: "key", Label: "key", Allowed: allowed, Reads: serviceReads(ns + fmt.Sprint(i)), Namespace: ns, Weight: weight}}
		f, share := b.NoteShare(types.NamespacedName{Namespace: ns, Name: fmt.Sprint(i)}, every, uint64(len(ns)*1000+i), d)
		if a := (Allowance{Every: Stretched(every, f), Share: share}); a.Stretched(every) {
			return f, fmt.Sprintf("share %.1f calls/min, need %.1f", a.Share.Share*60, a.Share.Need*60)
		}
		return f, ""
	}
	fill := func(b *demands[types.NamespacedName, read], sizes map[string]int, weights map[string]float64) map[string]float64 {
		factors := map[string]float64{}
		for ns, n := range sizes {
			for i := range n {
				note(b, ns, i, weights[ns])
			}
		}
		for ns := range sizes { // each namespace's last look, once all are noted
			factors[ns], _ = note(b, ns, 0, weights[ns])
		}
		return factors
	}
	for _, tc := range []struct {
		name    string
		sizes   map[string]int
		weights map[string]float64
		want    map[string]float64
	}{
		{"50, 5 and 1 watches: the small namespaces fit their shares", map[string]int{"big": 50, "mid": 5, "one": 1}, nil,
			map[string]float64{"big": (100.0 / 30) / (allowed - 12.0/30), "mid": 1, "one": 1}},
		{"the big namespace alone has the whole key", map[string]int{"big": 50}, nil,
			map[string]float64{"big": (100.0 / 30) / allowed}},
		{"two big namespaces: half each", map[string]int{"a": 50, "b": 50, "one": 1}, nil,
			map[string]float64{"a": (100.0 / 30) / ((allowed - 2.0/30) / 2), "b": (100.0 / 30) / ((allowed - 2.0/30) / 2), "one": 1}},
		{"weights 3 to 1", map[string]int{"a": 50, "b": 50}, map[string]float64{"a": 3, "b": 1},
			map[string]float64{"a": (100.0 / 30) / (allowed * 3 / 4), "b": (100.0 / 30) / (allowed / 4)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fill(newDemands[types.NamespacedName, read](), tc.sizes, tc.weights)
			for ns, want := range tc.want {
				if math.Abs(got[ns]-want) > 1e-9 {
					t.Errorf("%s stretched by %.3f, want %.3f", ns, got[ns], want)
				}
			}
		})
	}

	t.Run("the condition says the share and the need", func(t *testing.T) {
		b := newDemands[types.NamespacedName, read]()
		fill(b, map[string]int{"big": 50, "one": 1}, nil)
		_, msg := note(b, "big", 0, 0)
		if want := "share 50.5 calls/min, need 200.0"; msg != want {
			t.Errorf("message = %q, want %q", msg, want)
		}
		if _, msg := note(b, "one", 0, 0); msg != "" {
			t.Errorf("the one-watch namespace is told %q", msg)
		}
	})

	t.Run("a namespace that goes idle leaves its share", func(t *testing.T) {
		b := newDemands[types.NamespacedName, read]()
		fill(b, map[string]int{"a": 50, "b": 50}, nil)
		for i := range 50 {
			b.Forget(types.NamespacedName{Namespace: "b", Name: fmt.Sprint(i)})
		}
		if f, _ := note(b, "a", 0, 0); math.Abs(f-(100.0/30)/allowed) > 1e-9 {
			t.Errorf("a stretched by %.3f once b is gone, want %.3f", f, (100.0/30)/allowed)
		}
		changes := b.TakeChanges()
		if len(changes) != 1 {
			t.Fatalf("changes = %+v, want the key's", changes)
		}
		if shares := changes[0].Namespaces; len(shares) != 1 || shares["a"].Share != allowed {
			t.Errorf("shares after b left: %+v, want a's alone, the whole key", changes[0].Namespaces)
		}
	})
}

// A namespace whose 50 new watches wait for a spent key does not hold back
// another namespace's watch that comes a second later: it is admitted
// within a few of the big namespace's turns, though the big namespace's
// waiters come back on the budget's grid and ask first. Before, it waited
// behind all 50 (100 s at 1 call a second), or, told its turn, found each
// room taken by a big waiter that came back for it at the same instant.
func TestPacerLetsAnotherNamespaceTakeItsTurn(t *testing.T) {
	c := &testClock{wall: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	p := newTestPacer(c)
	start := c.wall
	b := &gcraBudget{c: c, interval: time.Second, burst: 2, tat: start.Add(2 * time.Second)} // spent
	budgetOf := func(key string) Budget {
		budget := b.of("k")
		budget.Waiter = Waiter{Namespace: key[:strings.IndexByte(key, '/')]}
		return budget
	}
	type ask struct {
		at  time.Time
		key string
	}
	var due []ask
	for i := range 50 {
		due = append(due, ask{start, fmt.Sprintf("big/w%02d", i)})
	}
	due = append(due, ask{start.Add(time.Second), "small/w0"}, ask{start.Add(time.Second), "mid/w0"}, ask{start.Add(time.Second), "mid/w1"})
	admitted := map[string]time.Time{}
	for len(due) > 0 {
		slices.SortStableFunc(due, func(a, b ask) int { return a.at.Compare(b.at) })
		next := due[0]
		due = due[1:]
		c.wall = next.at
		if wait := p.Ask(next.key, User, budgetOf(next.key), 2); wait > 0 {
			due = append(due, ask{c.wall.Add(wait), next.key})
			continue
		}
		p.Admitted(next.key)
		admitted[next.key] = c.wall
	}
	for key, within := range map[string]time.Duration{"small/w0": 8 * time.Second, "mid/w0": 8 * time.Second, "mid/w1": 14 * time.Second} {
		if took := admitted[key].Sub(start.Add(time.Second)); took > within {
			t.Errorf("%s admitted %v after it asked, want within %v (a few turns of the big namespace's, not its 50)", key, took, within)
		}
	}
	if last := admitted["big/w49"].Sub(start); last > 110*time.Second {
		t.Errorf("the big namespace's last watch was admitted after %v: the budget was left idle", last)
	}
	if perWatch := float64(b.asks) / 53; perWatch > 2.5 {
		t.Errorf("%.2f asks per watch, want about 2", perWatch)
	}
	t.Logf("small admitted after %v, mid after %v and %v; big's last after %v; %.2f asks per watch",
		admitted["small/w0"].Sub(start), admitted["mid/w0"].Sub(start), admitted["mid/w1"].Sub(start), admitted["big/w49"].Sub(start), float64(b.asks)/53)
}

// A namespace's new watches told to wait for a key claim it for their
// namespace only: another namespace's periodic refresh that asks when the
// key has room gets it. Before, the claim held every periodic refresh on
// the key back (ClaimRecheck, 15 s, over and over for as long as the big
// namespace's new watches waited: 2 minutes for 50 of them).
func TestPacerClaimsHoldTheirOwnNamespaceOnly(t *testing.T) {
	c := &testClock{wall: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	p := newTestPacer(c)
	b := &gcraBudget{c: c, interval: time.Second, burst: 2, tat: c.wall.Add(2 * time.Second)} // spent
	budget := func(ns string) Budget {
		budget := b.of("k")
		budget.Waiter = Waiter{Namespace: ns}
		return budget
	}
	wait := p.Ask("big/new", User, budget("big"), 2)
	if wait <= 0 {
		t.Fatal("the big namespace's new watch was admitted by a spent key")
	}
	c.advance(wait)
	if got := p.Ask("big/old", Periodic, budget("big"), 2); got != ClaimRecheck {
		t.Errorf("a refresh of the claiming namespace waits %v, want %v behind its new watch", got, ClaimRecheck)
	}
	if got := p.Ask("small/old", Periodic, budget("small"), 2); got != 0 {
		t.Errorf("another namespace's refresh waits %v once the key has room, want 0", got)
	}
}
