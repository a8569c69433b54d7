package pacing

import (
	"fmt"
	"testing"
	"time"
)

// Waiters of one budget come back one after another at the budget's rate
// after its own wait, each about once, instead of all at the budget's short
// wait; a higher level's line does not wait for a lower one's, and the line
// moves on as the budget admits.
func TestQueueSpacesWaitersAtTheBudgetsRate(t *testing.T) {
	const rate = 0.5 // calls per second: a sync of 2 calls every 4 s
	short := 100 * time.Millisecond
	tests := []struct {
		name  string
		steps func(q *queue[string]) []time.Duration
		want  []time.Duration
	}{
		{"each waiter behind the calls before it", func(q *queue[string]) []time.Duration {
			var waits []time.Duration
			for i := range 4 {
				waits = append(waits, q.Wait("k", fmt.Sprint(i), Waiter{}, User, 2, rate, short, nil))
			}
			return waits
		}, []time.Duration{short, short + 4*time.Second, short + 8*time.Second, short + 12*time.Second}},
		{"asking again keeps the place", func(q *queue[string]) []time.Duration {
			q.Wait("k", "a", Waiter{}, User, 2, rate, short, nil)
			q.Wait("k", "b", Waiter{}, User, 2, rate, short, nil)
			return []time.Duration{q.Wait("k", "b", Waiter{}, User, 2, rate, short, nil), q.Wait("k", "b", Waiter{}, User, 2, rate, short, nil)}
		}, []time.Duration{short + 4*time.Second, short + 4*time.Second}},
		{"the line moves on as the budget admits", func(q *queue[string]) []time.Duration {
			q.Wait("k", "a", Waiter{}, User, 2, rate, short, nil)
			q.Wait("k", "b", Waiter{}, User, 2, rate, short, nil)
			q.Wait("k", "c", Waiter{}, User, 2, rate, short, nil)
			q.Served("k", "a", Waiter{}, User, 2)
			return []time.Duration{q.Wait("k", "b", Waiter{}, User, 2, rate, short, nil), q.Wait("k", "c", Waiter{}, User, 2, rate, short, nil)}
		}, []time.Duration{short, short + 4*time.Second}},
		{"user work does not queue behind periodic refreshes", func(q *queue[string]) []time.Duration {
			for i := range 10 {
				q.Wait("k", fmt.Sprint(i), Waiter{}, Periodic, 2, rate, short, nil)
			}
			return []time.Duration{q.Wait("k", "new", Waiter{}, User, 2, rate, short, nil)}
		}, []time.Duration{short}},
		{"another budget has its own line", func(q *queue[string]) []time.Duration {
			q.Wait("k", "a", Waiter{}, User, 2, rate, short, nil)
			return []time.Duration{q.Wait("other", "b", Waiter{}, User, 2, rate, short, nil)}
		}, []time.Duration{short}},
		{"the calls before it come after the budget's own wait", func(q *queue[string]) []time.Duration {
			q.Wait("k", "a", Waiter{}, User, 2, rate, short, nil)
			return []time.Duration{q.Wait("k", "b", Waiter{}, User, 2, rate, time.Minute, nil)}
		}, []time.Duration{time.Minute + 4*time.Second}},
		{"an unlimited budget keeps its wait", func(q *queue[string]) []time.Duration {
			q.Wait("k", "a", Waiter{}, User, 2, 0, short, nil)
			return []time.Duration{q.Wait("k", "b", Waiter{}, User, 2, 0, short, nil)}
		}, []time.Duration{short}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.steps(newQueue[string]())
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("waits %v, want %v", got, tt.want)
			}
		})
	}
}

// Served and forgotten waiters leave nothing behind.
func TestQueueForgetsEmptyLines(t *testing.T) {
	q := newQueue[string]()
	for i := range 100 {
		q.Wait("k", fmt.Sprint(i), Waiter{}, User, 2, 1, time.Second, nil)
	}
	q.Wait("k2", "x", Waiter{}, Secret, 1, 1, time.Second, nil)
	q.Wait("k2", "x", Waiter{}, User, 1, 1, time.Second, nil) // its work changed: one place only
	for i := range 100 {
		if i%2 == 0 {
			q.Served("k", fmt.Sprint(i), Waiter{}, User, 2)
		} else {
			q.Forget(fmt.Sprint(i))
		}
	}
	q.Forget("x")
	if len(q.budgets) != 0 || len(q.of) != 0 {
		t.Errorf("left: %v, %v", q.budgets, q.of)
	}
}

// Namespaces take turns in a budget's line: a namespace whose 50 watches
// queued first no longer holds another namespace's one watch behind all
// their calls.
func TestQueueNamespacesTakeTurns(t *testing.T) {
	const rate = 0.5 // a sync of 2 calls every 4 s
	short := 100 * time.Millisecond
	big, small := Waiter{Namespace: "big"}, Waiter{Namespace: "small"}
	tests := []struct {
		name  string
		steps func(q *queue[string]) []time.Duration
		want  []time.Duration
	}{
		{"one watch of a second namespace waits for one turn of the first, not for its 50", func(q *queue[string]) []time.Duration {
			for i := range 50 {
				q.Wait("k", fmt.Sprint("big-", i), big, User, 2, rate, short, nil)
			}
			return []time.Duration{q.Wait("k", "small-0", small, User, 2, rate, short, nil)}
		}, []time.Duration{short + 4*time.Second}},
		{"its second watch waits for two turns of the first", func(q *queue[string]) []time.Duration {
			for i := range 50 {
				q.Wait("k", fmt.Sprint("big-", i), big, User, 2, rate, short, nil)
			}
			q.Wait("k", "small-0", small, User, 2, rate, short, nil)
			return []time.Duration{q.Wait("k", "small-1", small, User, 2, rate, short, nil)}
		}, []time.Duration{short + 12*time.Second}},
		{"the first namespace's later watches make room for the other's turns", func(q *queue[string]) []time.Duration {
			for i := range 3 {
				q.Wait("k", fmt.Sprint("big-", i), big, User, 2, rate, short, nil)
			}
			q.Wait("k", "small-0", small, User, 2, rate, short, nil)
			return []time.Duration{q.Wait("k", "big-2", big, User, 2, rate, short, nil)}
		}, []time.Duration{short + 12*time.Second}},
		{"weights: a namespace of weight 3 makes 3 calls to the other's 1", func(q *queue[string]) []time.Duration {
			for i := range 10 {
				q.Wait("k", fmt.Sprint("big-", i), big, User, 1, rate, short, nil)
			}
			return []time.Duration{q.Wait("k", "heavy", Waiter{Namespace: "heavy", Weight: 3}, User, 3, rate, short, nil)}
		}, []time.Duration{short + 2*time.Second}},
		{"a namespace within its share does not wait for the turns of one over its own", func(q *queue[string]) []time.Duration {
			for i := range 50 {
				q.Wait("k", fmt.Sprint("big-", i), big, Periodic, 2, rate, short, nil)
			}
			over := map[string]bool{"big": true}
			return []time.Duration{q.Wait("k", "small-0", small, Periodic, 2, rate, short, over), q.Wait("k", "small-1", small, Periodic, 2, rate, short, over)}
		}, []time.Duration{short, short + 4*time.Second}},
		{"a namespace that leaves the line leaves no turn behind", func(q *queue[string]) []time.Duration {
			for i := range 5 {
				q.Wait("k", fmt.Sprint("big-", i), big, User, 2, rate, short, nil)
			}
			for i := range 5 {
				q.Forget(fmt.Sprint("big-", i))
			}
			return []time.Duration{q.Wait("k", "small-0", small, User, 2, rate, short, nil)}
		}, []time.Duration{short}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.steps(newQueue[string]())
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("waits = %v, want %v", got, tt.want)
			}
		})
	}
}

// A waiter whose turn comes after another's that is due back within a
// call's spacing is told how long until that one is back, when the budget
// has room for it, not a whole spacing: counted from a spacing later, the
// calls before it put it back up to a spacing after its room, and waiters
// of keys started together came back on one instant (see
// TestKeysStartedTogetherKeepTheirOwnGrids).
func TestQueueTurnSaysWhenTheWaiterAheadIsBack(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	const rate = 1 / 1.1 // the management key's default: a call every 1.1 s
	lead := spacingOf(rate)
	tests := []struct {
		name string
		// aheadDue is when the waiter ahead was told to come back, from now.
		aheadDue  time.Duration
		wantMine  bool
		wantFirst time.Duration
	}{
		{"due back in 0.2 s", 200 * time.Millisecond, false, 200 * time.Millisecond},
		{"due back now", 0, false, lead},
		{"late, within the grace", -time.Second, false, lead},
		{"late past the grace: the room is free", -ClaimGrace - time.Millisecond, true, 0},
		{"due back after a spacing: the room is free now", lead + time.Millisecond, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newQueue[string]()
			q.Wait("k", "ahead", Waiter{Namespace: "a"}, User, 2, rate, max(tt.aheadDue, 0), nil)
			q.Due("k", "ahead", User, now.Add(tt.aheadDue))
			mine, first := q.Turn("k", "next", Waiter{Namespace: "a"}, User, 2, now, lead, nil)
			if mine != tt.wantMine || first != tt.wantFirst {
				t.Errorf("Turn = %v, %v; want %v, %v", mine, first, tt.wantMine, tt.wantFirst)
			}
		})
	}
}
