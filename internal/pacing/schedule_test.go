package pacing

import (
	"fmt"
	"hash/fnv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestNextSync(t *testing.T) {
	every := time.Minute
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	const phase = 17 * time.Second
	slot := PeriodicSlot(now, every, phase)
	tests := []struct {
		name     string
		failures int
		outcome  Outcome
		jitter   time.Duration
		want     time.Time
	}{
		{"success waits for the watch's next slot", 0, Outcome{}, 0, slot},
		{"the jitter is added to the slot", 0, Outcome{}, 400 * time.Millisecond, slot.Add(400 * time.Millisecond)},
		{"stalled waits for the slot, not a tight loop", 1, Outcome{Failed: true}, 0, slot},
		{"first transient failure", 1, Outcome{Failed: true, Transient: true}, 0, now.Add(5 * time.Second)},
		{"third transient failure doubles twice", 3, Outcome{Failed: true, Transient: true}, 0, now.Add(20 * time.Second)},
		{"backoff never passes the interval", 30, Outcome{Failed: true, Transient: true}, 0, now.Add(every)},
		{"429 waits as asked", 1, Outcome{Failed: true, Transient: true, RetryAfter: 40 * time.Second}, 0, now.Add(40 * time.Second)},
		{"429 waits as asked even past the interval", 1, Outcome{Failed: true, Transient: true, RetryAfter: time.Hour}, 0, now.Add(time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, plan := NextSync(now, every, tt.failures, tt.outcome, phase, every, tt.jitter)
			if !got.Equal(tt.want) {
				t.Errorf("nextSync = %v, want %v", got, tt.want)
			}
			if (plan == nil) != tt.outcome.Transient {
				t.Errorf("plan %+v after a sync with outcome %+v: a periodic sync is planned unless a transient failure backs off", plan, tt.outcome)
			}
			if plan != nil && !plan.Due(phase, every).Equal(got) {
				t.Errorf("the plan places the sync at %v, not %v", plan.Due(phase, every), got)
			}
		})
	}
}

// A slot is more than half an interval and at most one and a half intervals
// after the last sync, at the watch's phase; from one slot, the next is
// exactly one interval later.
func TestPeriodicSlot(t *testing.T) {
	every := 5 * time.Minute
	for _, phase := range []time.Duration{0, time.Second, every / 2, every - time.Nanosecond} {
		for _, last := range []time.Time{time.Unix(0, 0), time.Unix(1_800_000_000, 123), time.Unix(1_800_000_150, 0)} {
			slot := PeriodicSlot(last, every, phase)
			if gap := slot.Sub(last); gap <= every/2 || gap > every*3/2 {
				t.Errorf("phase %v, last %v: slot %v is %v later", phase, last, slot, gap)
			}
			if off := time.Duration(slot.UnixNano() % int64(every)); off != phase {
				t.Errorf("phase %v: slot at offset %v", phase, off)
			}
			if next := PeriodicSlot(slot, every, phase); next.Sub(slot) != every {
				t.Errorf("phase %v: a synced-on-phase watch waits %v, not one interval", phase, next.Sub(slot))
			}
		}
	}
}

// 200 watches created in the same second sync at their own phases from the
// second sync on: the busiest second of an interval has at most 1.5 times
// the mean load (the goal for cloud calls per second).
func TestPhasesSpreadWatchesCreatedTogether(t *testing.T) {
	const n = 200
	every := 30 * time.Second
	created := time.Unix(1_800_000_000, 0)
	book := NewPhases[types.NamespacedName]()
	phaseOf := func(i int) time.Duration {
		return book.PhaseOf(types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("w-%d", i)}, serviceHash(i), every)
	}
	for i := range n {
		phaseOf(i) // every watch is seen before the first periodic slot
	}
	perSecond := make(map[int64]int)
	for i := range n {
		slot := PeriodicSlot(created, every, phaseOf(i))
		perSecond[slot.Unix()]++
	}
	peak := 0
	for _, c := range perSecond {
		peak = max(peak, c)
	}
	mean := float64(n) / float64(every/time.Second)
	if ratio := float64(peak) / mean; ratio > 1.5 {
		t.Errorf("busiest second has %d syncs, %.2f times the mean of %.1f", peak, ratio, mean)
	}
	if len(perSecond) < 30 {
		t.Errorf("syncs fall into only %d seconds of an interval of 30", len(perSecond))
	}
}

// Watches created together are first reconciled one by one, so each plans
// its second sync while the phase book knows only the watches seen before
// it. Placed with those phases the second syncs bunch up; placed again with
// the settled phases when the watch is next looked at (at the latest half an
// interval later, recheckWithin), they spread as evenly as the phases.
func TestPeriodicSyncsArePlacedWithSettledPhases(t *testing.T) {
	const n = 200
	every := 30 * time.Second
	created := time.Unix(1_800_000_000, 0)
	book := NewPhases[types.NamespacedName]()
	watch := func(i int) (types.NamespacedName, uint64) {
		return types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("w-%d", i)}, serviceHash(i)
	}
	plans := make([]*Plan, n)
	stale := make([]time.Time, n)
	for i := range n {
		key, hash := watch(i)
		ended := created.Add(time.Duration(i) * 10 * time.Millisecond)
		phase := book.PhaseOf(key, hash, every)
		stale[i], plans[i] = NextSync(ended, every, 0, Outcome{}, phase, every, 0)
		if recheck := RecheckWithin(stale[i].Sub(ended), plans[i].Jitter, every); recheck > every/2 {
			t.Fatalf("watch %d is looked at again after %v, past half its interval", i, recheck)
		}
	}
	settled := make([]time.Time, n)
	for i := range n {
		key, hash := watch(i)
		settled[i] = plans[i].Due(book.PhaseOf(key, hash, every), every)
	}
	mean := float64(n) / every.Seconds()
	if ratio := peakPerSecond(stale) / mean; ratio <= 1.5 {
		t.Fatalf("the phases known while the watches arrive already spread them (peak ÷ mean %.2f): the test shows nothing", ratio)
	}
	if ratio := peakPerSecond(settled) / mean; ratio > 1.5 {
		t.Errorf("second syncs placed with the settled phases: busiest second has %.2f times the mean", ratio)
	}
}

// peakPerSecond is the most syncs that fall into one second.
func peakPerSecond(syncs []time.Time) float64 {
	perSecond := map[int64]int{}
	peak := 0
	for _, s := range syncs {
		perSecond[s.Unix()]++
		peak = max(peak, perSecond[s.Unix()])
	}
	return float64(peak)
}

// Phases follow the watches: watches of one service share a phase, a deleted
// watch leaves its group, one whose interval changed moves to the new group.
func TestPhaseBookFollowsWatches(t *testing.T) {
	book := NewPhases[types.NamespacedName]()
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }
	pa := book.PhaseOf(key("a"), 1, time.Minute)
	pb := book.PhaseOf(key("b"), 2, time.Minute)
	if pa == pb || pa < 0 || pa >= time.Minute || pb < 0 || pb >= time.Minute {
		t.Fatalf("phases %v and %v of two services at 1m", pa, pb)
	}
	if same := book.PhaseOf(key("a2"), 1, time.Minute); same != pa {
		t.Errorf("two watches of one service have phases %v and %v", pa, same)
	}
	if again := book.PhaseOf(key("a"), 1, time.Minute); again != pa {
		t.Errorf("a phase moved without any change: %v then %v", pa, again)
	}
	book.Forget(key("a"))
	book.Forget(key("a2"))
	if got := book.PhaseOf(key("b"), 2, time.Minute); got != 0 {
		t.Errorf("alone in its group, b has phase %v, want 0", got)
	}
	book.PhaseOf(key("b"), 2, 2*time.Minute)
	if len(book.groups) != 1 || book.groups[2*time.Minute] == nil {
		t.Errorf("b did not move to the 2m group: %v", book.groups)
	}
}

// serviceHash is the group of a watch of a service of its own, hashed as
// the controller hashes what a watch reads.
func serviceHash(i int) uint64 {
	h := fnv.New64a()
	for _, part := range []string{"https://api.example.com", "org", fmt.Sprintf("6f1c%04d-1111-4222-8333-%012d", i, i*7919)} {
		_, _ = h.Write([]byte(part))
		_, _ = h.Write([]byte{0})
	}
	return h.Sum64()
}

// The watches of a group end their syncs seconds apart on a busy manager,
// and another group's coming or going moves their phase while they wait.
// Each watch looks at the phase again at its rechecks (RecheckWithin) and
// when its slot is due; whenever the phase moves, the group's next syncs
// still come together, within the jitter, so the reads they share are made
// once. (A move within the jitter of the slot itself still splits the
// group: those whose jittered slot came first have synced.)
func TestAGroupSyncsTogetherWhenItsPhaseMoves(t *testing.T) {
	const n = 10
	every := 30 * time.Second
	base := time.Unix(1_800_000_000, 0).Truncate(every)
	for _, phases := range [][2]time.Duration{{10 * time.Second, 5 * time.Second}, {5 * time.Second, 10 * time.Second}, {10 * time.Second, 25 * time.Second}} {
		testPhaseMove(t, n, every, base, phases[0], phases[1])
	}
}

func testPhaseMove(t *testing.T, n int, every time.Duration, base time.Time, before, after time.Duration) {
	t.Helper()
	for move := 15 * time.Second; move < 45*time.Second; move += 100 * time.Millisecond {
		if slot := base.Add(every + before); !base.Add(move).Before(slot) && base.Add(move).Before(slot.Add(MaxJitter)) {
			continue // within the jitter of the slot
		}
		phaseAt := func(at time.Time) time.Duration {
			if at.Before(base.Add(move)) {
				return before
			}
			return after
		}
		var first, last time.Time
		for i := range n {
			ended := base.Add(time.Second + time.Duration(i)*400*time.Millisecond)
			jitter := time.Duration(i) * 20 * time.Millisecond
			next, plan := NextSync(ended, every, 0, Outcome{}, phaseAt(ended), every, jitter)
			at := ended.Add(RecheckWithin(next.Sub(ended), plan.Jitter, every))
			for {
				due := plan.Due(phaseAt(at), every)
				if !due.After(at) {
					break
				}
				at = at.Add(RecheckWithin(due.Sub(at), plan.Jitter, every))
			}
			if i == 0 || at.Before(first) {
				first = at
			}
			if at.After(last) {
				last = at
			}
		}
		if spread := last.Sub(first); spread > MaxJitter {
			t.Errorf("phase moved from %v to %v at %v: the group's syncs spread over %v", before, after, move, spread)
		}
	}
}
