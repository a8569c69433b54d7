package pacing

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestNextSync(t *testing.T) {
	every := time.Minute
	ended := time.Date(2026, 11, 23, 12, 0, 3, 0, time.UTC)
	began := ended.Add(-3 * time.Second)
	unknown := Phase{}
	// The group syncs at 0:17 of each minute and is headed for 0:50: one
	// interval after the sync began (0:00) is 10 s past it, further than a
	// period may shrink.
	headed := Phase{Known: true, At: 17.0 / 60, Target: 50.0 / 60}
	tests := []struct {
		name     string
		sync     Sync
		phase    Phase
		want     time.Time
		periodic bool
	}{
		{"success waits one interval from the sync's beginning", Sync{}, unknown, began.Add(every), true},
		{"the jitter is added", Sync{Jitter: 400 * time.Millisecond}, unknown, began.Add(every + 400*time.Millisecond), true},
		{"a move toward the target is at most MaxMove", Sync{}, Phase{Known: true, Target: 50.0 / 60}, began.Add(every - MaxMove(every)), true},
		{"a move the other way round is as short", Sync{}, Phase{Known: true, Target: 59.0 / 60}, began.Add(every - time.Second), true},
		{"a watch off its group's slot goes back to it, then moves", Sync{}, headed, began.Add(every + 17*time.Second - MaxMove(every)), true},
		{"stalled waits for the period, not a tight loop", Sync{Failures: 1, Outcome: Outcome{Failed: true}}, unknown, began.Add(every), true},
		{"a Retry-After past the period is waited for", Sync{Failures: 1, Outcome: Outcome{Failed: true, RetryAfter: 2 * every}}, unknown, ended.Add(2 * every), true},
		{"first transient failure", Sync{Failures: 1, Outcome: Outcome{Failed: true, Transient: true}}, headed, ended.Add(5 * time.Second), false},
		{"third transient failure doubles twice", Sync{Failures: 3, Outcome: Outcome{Failed: true, Transient: true}}, unknown, ended.Add(20 * time.Second), false},
		{"backoff never passes the interval", Sync{Failures: 30, Outcome: Outcome{Failed: true, Transient: true}}, unknown, ended.Add(every), false},
		{"429 waits as asked", Sync{Failures: 1, Outcome: Outcome{Failed: true, Transient: true, RetryAfter: 40 * time.Second}}, unknown, ended.Add(40 * time.Second), false},
		{"429 waits as asked even past the interval", Sync{Failures: 1, Outcome: Outcome{Failed: true, Transient: true, RetryAfter: time.Hour}}, unknown, ended.Add(time.Hour), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.sync
			s.Began, s.Ended, s.Every = began, ended, every
			got, plan := NextSync(s, tt.phase)
			if !got.Equal(tt.want) {
				t.Errorf("NextSync = %v, want %v", got, tt.want)
			}
			if (plan != nil) != tt.periodic {
				t.Errorf("plan %+v after a sync with outcome %+v: a periodic sync is planned unless a transient failure backs off", plan, s.Outcome)
			}
			if plan != nil && !plan.Due(tt.phase).Equal(got) {
				t.Errorf("the plan places the sync at %v, not %v", plan.Due(tt.phase), got)
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

// Watches created together sync first wherever their budgets admit them:
// each key's watches one sync (two calls) per 2.2 s, the default limit of 10
// calls per 11 s. From then on
// their syncs are placed by NextSync and the phase book alone, on an
// injected clock, each watch looked at again at its rechecks as the
// controller does. Over the 2.5 intervals after all were first synced (the
// window of bench-scale's spread-200 row), cloud calls per 1-s bin stay
// within 1.5 times the mean, every period within a tenth of the interval,
// and two syncs of one key never come much closer than the budget spaced
// them.
//
// Before, the phases were ranked by hash and reached in one step: the
// second period of each watch fell anywhere from half to one and a half
// intervals (15 - 45 s of 30 s, as bench-scale measured), and the syncs of
// one key came closer than their budget allows, so the budget bunched them
// on its grid again.
//
// The second syncs fall within the first ones' span (about 20 s) widened by
// MaxMove at each end, so that span and MaxMove set the busiest second; on
// a busy manager each sync begins a little late, at random, and a second
// may catch a sync or two more than its share. The "late" cases replay
// that over 20 draws each. Seconds above 1.5 times the mean, in how many
// draws of 20, with each sync up to 0.2 s / 0.3 s late:
//
//	all keys on one refill grid, MaxMove a fifteenth (before)   16 / 17
//	all keys on one refill grid, MaxMove a twelfth               6 / 11
//	each key on a grid of its own, MaxMove a fifteenth           0 /  5
//	each key on a grid of its own, MaxMove a twelfth (now)       0 /  2
//
// (ratebudget offsets the grids of budgets created together; the first wave
// then spreads over about 2 s more, and the second with it.)
func TestPhasesSpreadWatchesCreatedTogether(t *testing.T) {
	const took = 150 * time.Millisecond // a sync's reads
	grid := 2200 * time.Millisecond     // a key's budget: 2 calls per 2.2 s
	sharedGrid := func(i, keys int) time.Duration {
		return time.Duration(i/keys)*grid + time.Duration(i%keys)*5*time.Millisecond
	}
	// ownGrids is what ratebudget's budgets do: each key's syncs on its
	// budget's grid, offset by the budget's phase (the k-th key of those
	// started together: k times the golden ratio, modulo 1).
	ownGrids := func(i, keys int) time.Duration {
		_, phase := math.Modf(float64(i%keys) * 0.6180339887498949)
		return time.Duration(i/keys)*grid + time.Duration(phase*float64(grid))
	}
	tests := []struct {
		name  string
		n     int
		keys  int
		every time.Duration
		// first is when watch i of key i%keys first synced.
		first func(i, keys int) time.Duration
		// late bounds how late, at random, each periodic sync begins; each
		// case with a lateness is replayed over 20 draws, of which at most
		// over may see a second above 1.5 times the mean.
		late time.Duration
		over int
	}{
		{"20 keys on one refill grid", 200, 20, 30 * time.Second, sharedGrid, 0, 0},
		{"20 keys on grids of their own", 200, 20, 30 * time.Second, ownGrids, 0, 0},
		{"20 keys on one refill grid, each sync up to 0.3 s late on a busy manager", 200, 20, 30 * time.Second,
			func(i, keys int) time.Duration {
				return time.Duration(i/keys)*grid + time.Duration(i*7919%300)*time.Millisecond
			}, 0, 0},
		{"20 keys on grids of their own, each periodic sync up to 0.2 s late", 200, 20, 30 * time.Second, ownGrids, 200 * time.Millisecond, 1},
		// With MaxMove a fifteenth, 5 of 20.
		{"20 keys on grids of their own, each periodic sync up to 0.3 s late", 200, 20, 30 * time.Second, ownGrids, 300 * time.Millisecond, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.late == 0 {
				created := time.Unix(1_800_000_000, 0).Add(123 * time.Millisecond)
				syncs := simulateSyncs(tt.n, tt.every, took, 4*tt.every, 0, 0, func(i int) time.Time { return created.Add(tt.first(i, tt.keys)) })
				if ratio, bins := checkSpread(t, syncs, tt.keys, tt.every, took, grid); ratio > 1.5 {
					t.Errorf("calls per second after all were first synced: peak %.2f times the mean (bins %v)", ratio, bins)
				}
				return
			}
			// A busy manager's lateness is noise: a draw may still catch a
			// sync more than its share in one second, but rarely.
			const draws = 20
			var ratios []float64
			for seed := range uint64(draws) {
				created := time.Unix(1_800_000_000, 0).Add(time.Duration(seed) * 37 * time.Millisecond)
				syncs := simulateSyncs(tt.n, tt.every, took, 4*tt.every, tt.late, seed, func(i int) time.Time { return created.Add(tt.first(i, tt.keys)) })
				ratio, _ := checkSpread(t, syncs, tt.keys, tt.every, took, grid)
				ratios = append(ratios, ratio)
			}
			if n := len(slices.DeleteFunc(slices.Clone(ratios), func(r float64) bool { return r <= 1.5 })); n > tt.over {
				t.Errorf("peak ÷ mean above 1.5 in %d of %d draws, want at most %d: %.2f", n, draws, tt.over, ratios)
			}
		})
	}
}

// checkSpread checks the syncs of watches created together over the 2.5
// intervals after all were first synced: periods, and the syncs of one key
// (watch i is of key i%keys); it returns the calls in the busiest second
// over the mean, and the calls of each second.
func checkSpread(t *testing.T, syncs [][]time.Time, keys int, every, took, grid time.Duration) (ratio float64, bins []int) {
	t.Helper()
	ready := syncs[0][0]
	for i := range syncs {
		if end := syncs[i][0].Add(took); end.After(ready) {
			ready = end
		}
	}
	span := 5 * every / 2
	bins = make([]int, int(span/time.Second))
	total := 0
	for i := range syncs {
		for _, at := range syncs[i] {
			if d := at.Sub(ready); d >= 0 && d < span {
				bins[d/time.Second] += 2 // a sync's two calls
				total += 2
			}
		}
	}
	peak := slices.Max(bins)
	mean := float64(total) / float64(len(bins))
	shortest, longest := every, every
	for i := range syncs {
		for k := 1; k < len(syncs[i]); k++ {
			if d := syncs[i][k].Sub(ready); d < 0 || d >= span {
				continue
			}
			gap := syncs[i][k].Sub(syncs[i][k-1])
			shortest, longest = min(shortest, gap), max(longest, gap)
		}
	}
	if shortest < every*9/10 || longest > every*11/10 {
		t.Errorf("periods of %v to %v for an interval of %v", shortest, longest, every)
	}
	closest := closestOfOneKey(syncs, keys, ready.Add(span))
	if closest < grid*2/3 {
		t.Errorf("two syncs of one key %v apart: the budget would hold the later one back by more than a third of its spacing", closest)
	}
	ratio = float64(peak) / mean
	t.Logf("peak ÷ mean %.2f (peak %d/s, mean %.1f/s); periods %v - %v; syncs of one key at least %v apart", ratio, peak, mean, shortest, longest, closest)
	return ratio, bins
}

// simulateSyncs runs n watches of services of their own at interval every,
// watch i first synced at first(i), each sync taking took and each periodic
// one beginning up to late after it was due (drawn from seed), until
// horizon after the first sync, and returns the times each watch's syncs
// began. Each watch is looked at when the controller would: at its
// rechecks and when due.
func simulateSyncs(n int, every, took, horizon, late time.Duration, seed uint64, first func(int) time.Time) [][]time.Time {
	book := newPhases[int]()
	random := rand.New(rand.NewPCG(1+seed, 2))
	syncs := make([][]time.Time, n)
	plans := make([]*Plan, n)
	next := make([]time.Time, n)
	for i := range n {
		next[i] = first(i)
	}
	end := slices.MinFunc(next, time.Time.Compare).Add(horizon)
	for {
		i := 0
		for j := range next {
			if next[j].Before(next[i]) {
				i = j
			}
		}
		now := next[i]
		if now.After(end) {
			return syncs
		}
		if plans[i] != nil {
			if due := plans[i].Due(book.PhaseOf(i, serviceHash(i), every)); due.After(now) {
				next[i] = now.Add(RecheckWithin(due.Sub(now), plans[i].Jitter, every))
				continue
			}
			if late > 0 { // a busy manager
				now = now.Add(time.Duration(random.Int64N(int64(late) + 1)))
			}
		}
		syncs[i] = append(syncs[i], now)
		book.Synced(i, serviceHash(i), every, now, every, plans[i] != nil)
		ended := now.Add(took)
		// A random jitter, as the controller draws it.
		jitter := time.Duration(random.Int64N(int64(JitterOf(every)) + 1))
		due, plan := NextSync(Sync{Began: now, Ended: ended, Every: every, Jitter: jitter}, book.PhaseOf(i, serviceHash(i), every))
		plans[i] = plan
		next[i] = ended.Add(RecheckWithin(due.Sub(ended), plan.Jitter, every))
	}
}

// closestOfOneKey is the shortest time between two syncs, before until, of
// the watches of one key (watch i is of key i%keys).
func closestOfOneKey(syncs [][]time.Time, keys int, until time.Time) time.Duration {
	closest := time.Duration(math.MaxInt64)
	for k := range keys {
		var all []time.Time
		for i := k; i < len(syncs); i += keys {
			for _, at := range syncs[i] {
				if at.Before(until) {
					all = append(all, at)
				}
			}
		}
		slices.SortFunc(all, time.Time.Compare)
		for j := 1; j < len(all); j++ {
			closest = min(closest, all[j].Sub(all[j-1]))
		}
	}
	return closest
}

// A sync placed again with the book as it stands when the watch is looked
// at moves by at most MaxMove, however far the target moved since it was
// planned, for a watch on its group's slot.
func TestReplacedPhasesMoveAPeriodAtMostMaxMove(t *testing.T) {
	every := 30 * time.Second
	for _, began := range []time.Time{time.Unix(1_800_000_000, 0), time.Unix(1_800_000_007, 123456789)} {
		plan := &Plan{After: began, Every: every}
		for target := 0.0; target < 1; target += 0.01 {
			due := plan.Due(Phase{Known: true, At: shareOf(began, every), Target: target})
			if gap := due.Sub(began); gap < every-MaxMove(every) || gap > every+MaxMove(every) {
				t.Fatalf("began %v, headed for %.2f: period %v", began, target, gap)
			}
		}
	}
}

// A plan with a Stretch (a reserved sync's) is stretched by at most that,
// and still shortened by up to MaxMove.
func TestPlanStretchBoundsOnlyTheStretch(t *testing.T) {
	every := 30 * time.Second
	began := time.Unix(1_800_000_000, 0)
	plan := &Plan{After: began, Every: every, Stretch: 1400 * time.Millisecond}
	var longest, shortest time.Duration = 0, every
	for target := 0.0; target < 1; target += 0.01 {
		gap := plan.Due(Phase{Known: true, At: shareOf(began, every), Target: target}).Sub(began)
		longest, shortest = max(longest, gap), min(shortest, gap)
	}
	if longest != every+plan.Stretch || shortest != every-MaxMove(every) {
		t.Errorf("periods %v to %v, want %v to %v", shortest, longest, every-MaxMove(every), every+plan.Stretch)
	}
}

// phases follow the watches: watches of one service share a phase, a deleted
// watch leaves its group, one whose interval changed moves to the new group;
// groups are spaced evenly in the order they synced in.
func TestPhaseBookFollowsWatches(t *testing.T) {
	book := newPhases[types.NamespacedName]()
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }
	base := time.Unix(1_800_000_000, 0).Truncate(time.Minute)
	if p := book.PhaseOf(key("a"), 1, time.Minute); p.Known {
		t.Fatalf("a group that never synced has a phase: %+v", p)
	}
	book.Synced(key("a"), 1, time.Minute, base.Add(10*time.Second), time.Minute, false)
	book.Synced(key("b"), 2, time.Minute, base.Add(12*time.Second), time.Minute, false)
	pa, pb := book.PhaseOf(key("a"), 1, time.Minute), book.PhaseOf(key("b"), 2, time.Minute)
	// Two groups 2 s apart spread to 12 s apart, each end moving by
	// MaxMove (5 s of 1 m).
	if !near(pa.Target, 5.0/60) || !near(pb.Target, 17.0/60) || !near(pa.At, 10.0/60) {
		t.Fatalf("phases %+v and %+v of two services synced at 0:10 and 0:12", pa, pb)
	}
	book.Synced(key("a2"), 1, time.Minute, base.Add(50*time.Second), time.Minute, false)
	if same := book.PhaseOf(key("a2"), 1, time.Minute); same != pa {
		t.Errorf("a watch that rejoins its service's group has phase %+v, not the group's %+v", same, pa)
	}
	book.Synced(key("a2"), 1, time.Minute, base.Add(65*time.Second), time.Minute, true)
	book.Synced(key("a"), 1, time.Minute, base.Add(66*time.Second), time.Minute, true)
	// The group moved to 0:05 and is headed for 0:00 (the arc widens to
	// 22 s).
	if moved := book.PhaseOf(key("a"), 1, time.Minute); !near(moved.At, 5.0/60) || !near(moved.Target, 0) {
		t.Errorf("after the group's second sync at 0:05 (and a watch's a second later): %+v", moved)
	}
	book.Forget(key("a"))
	book.Forget(key("a2"))
	if got := book.PhaseOf(key("b"), 2, time.Minute); !near(got.Target, got.At) {
		t.Errorf("alone in its interval, b is headed elsewhere: %+v", got)
	}
	book.PhaseOf(key("b"), 2, 2*time.Minute)
	if p := book.PhaseOf(key("b"), 2, 2*time.Minute); p.Known {
		t.Errorf("b keeps its phase of 1m at 2m: %+v", p)
	}
	if len(book.books) != 1 || book.books[2*time.Minute] == nil {
		t.Errorf("b did not move to the 2m book: %v", book.books)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

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

// The watches of a group begin their syncs within a second of each other
// on a busy manager, and the group's target moves while they wait (another
// group came or went). Each watch looks at its phase again at its rechecks
// and when due; whenever the target moves, the group's next syncs still
// come together, within the jitter, so the reads they share are made once.
// (A move within MaxMove of the slot itself may still split the group: those
// whose slot came first have synced.)
func TestAGroupSyncsTogetherWhenItsPhaseMoves(t *testing.T) {
	const n = 10
	every := 30 * time.Second
	base := time.Unix(1_800_000_000, 0).Truncate(every)
	for _, targets := range [][2]float64{{10.0 / 30, 5.0 / 30}, {5.0 / 30, 10.0 / 30}, {10.0 / 30, 25.0 / 30}, {1.0 / 30, 29.0 / 30}} {
		testPhaseMove(t, n, every, base, targets[0], targets[1])
	}
}

func testPhaseMove(t *testing.T, n int, every time.Duration, base time.Time, before, after float64) {
	t.Helper()
	const began = 100 * time.Millisecond // apart, watch after watch
	for move := 15 * time.Second; move < 45*time.Second; move += 100 * time.Millisecond {
		if slot := base.Add(every + time.Second); !base.Add(move).Before(slot.Add(-MaxMove(every))) && base.Add(move).Before(slot.Add(MaxMove(every)+MaxJitter)) {
			continue // within a move of the slot: some of the group have synced
		}
		phaseAt := func(at time.Time) Phase {
			if at.Before(base.Add(move)) {
				return Phase{Known: true, At: 1.0 / 30, Target: before}
			}
			return Phase{Known: true, At: 1.0 / 30, Target: after}
		}
		var first, last time.Time
		for i := range n {
			start := base.Add(time.Second + time.Duration(i)*began)
			jitter := time.Duration(i) * 20 * time.Millisecond
			ended := start.Add(2 * time.Second)
			next, plan := NextSync(Sync{Began: start, Ended: ended, Every: every, Jitter: jitter}, phaseAt(ended))
			at := ended.Add(RecheckWithin(next.Sub(ended), plan.Jitter, every))
			for {
				due := plan.Due(phaseAt(at))
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
			t.Errorf("target moved from %.2f to %.2f at %v: the group's syncs spread over %v", before, after, move, spread)
		}
	}
}

// A step of the wall clock moves the groups' phases and targets with the
// schedules, so that a watch is still on its group's phase after the step.
func TestPhasesShiftedByAClockStep(t *testing.T) {
	every := 30 * time.Second
	base := time.Unix(1_800_000_000, 0).Truncate(every)
	book := newPhases[int]()
	book.Synced(1, 1, every, base.Add(3*time.Second), every, false)
	book.Synced(2, 2, every, base.Add(4*time.Second), every, false)
	before := book.PhaseOf(1, 1, every)
	book.Shift(-7 * time.Second)
	after := book.PhaseOf(1, 1, every)
	if !near(after.At, share(before.At-7.0/30)) || !near(after.Target, share(before.Target-7.0/30)) {
		t.Errorf("after a step of -7 s: %+v, before %+v", after, before)
	}
}
