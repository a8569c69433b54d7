package pacing

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// The shares-3ns scenario of test/scale (issue 30) on a fake clock: three
// namespaces on one management key, with 50, 5 and 1 watches of services
// of their own at 30 s, each sync 2 calls (pipes and endpoints), the
// manager's default limit of the key (10 calls per 10 s, bursts of 2, kept
// to over 11 s), driven through the Pacer as the controller drives it: Due,
// Level, Allow, Ask, Admitted, and Synced a read's latency later. Every
// steady period of the 1- and 5-watch namespaces (begun once every watch
// had synced once) and every one that ended from 2 min on stays within
// 10 % of 30 s, and the key never admits more than its budget:
// at most 10 calls in any 10 s. The 50-watch namespace takes what the
// others leave: stretched, not starved, and the key as busy as before.
//
// Before (askBeforeReserve), the big namespace's new watches claimed the
// key for 2 minutes, and then the small namespaces' syncs waited their
// turns behind the big one's: periods of 27.5 to 53 s. Before issue 39,
// those from 2 min on reached 33.3 s: a reserved sync, up to a call's
// spacing late, was stretched by the phases' whole MaxMove besides.
func TestSharedKeyKeepsSmallNamespacesOnTime(t *testing.T) {
	r := simulateShares(shareSim{sizes: []int{50, 5, 1}, every: 30 * time.Second, run: 6 * time.Minute})
	for _, ns := range r.namespaces {
		t.Logf("%s", ns)
	}
	t.Logf("every watch synced once after %v; %d calls, at most %d in 10 s", r.allSynced, r.calls, r.busiest)
	if r.busiest > 10 {
		t.Errorf("%d calls admitted within 10 s: the key allows 10", r.busiest)
	}
	for _, ns := range r.namespaces[1:] {
		if ns.every != 30*time.Second {
			t.Errorf("%d-watch namespace allowed every %v: told it is stretched", ns.watches, ns.every)
		}
		if p := ns.steady; p.count == 0 || p.within != p.count {
			t.Errorf("%d-watch namespace, steady: %v, want all within 10 %% of 30 s", ns.watches, p)
		}
		if p := ns.late; p.count == 0 || p.within != p.count {
			t.Errorf("%d-watch namespace, from 2 min: %v, want all within 10 %% of 30 s", ns.watches, p)
		}
	}
	// The big namespace takes what the others leave: stretched (and told
	// so: its IntervalMet says the interval it is allowed), not starved.
	if big := r.namespaces[0]; big.every <= 30*time.Second || big.late.count == 0 || big.late.longest > big.every*3/2 {
		t.Errorf("the 50-watch namespace, allowed every %v: %v from 2 min on", big.every, big.late)
	}
	if r.calls < 280 {
		t.Errorf("%d calls in 6 min, want about what the key allows (327)", r.calls)
	}
}

// shareSim is a scenario: namespaces of sizes[i] watches each, all of
// interval every, created at once and run for run.
type shareSim struct {
	sizes []int
	every time.Duration
	run   time.Duration
	// before asks as before reservations (askBeforeReserve).
	before bool
}

// sharesRun is what a simulation measured.
type sharesRun struct {
	namespaces []nsPeriods
	allSynced  time.Duration
	// busiest is the most calls admitted in any 10 s; calls all of them.
	busiest, calls int
	// asks counts the budget's asks: the reconciles that waiting cost.
	asks int
}

// nsPeriods are one namespace's sync periods: all of them, and the steady
// ones.
type nsPeriods struct {
	watches int
	// all are every period; late those that ended 2 min or more after the
	// watches were created (the first syncs' backlog over, as test/scale
	// counts them); steady those that began once every watch had synced once.
	all, late, steady periodStats
	// every is the interval its watches were last allowed.
	every time.Duration
}

func (n nsPeriods) String() string {
	return fmt.Sprintf("%d watches (allowed every %v): periods %v; from 2 min %v; steady %v", n.watches, n.every, n.all, n.late, n.steady)
}

// periodStats sums up sync periods against an interval.
type periodStats struct {
	count, within     int
	shortest, longest time.Duration
}

func (s periodStats) String() string {
	if s.count == 0 {
		return "none"
	}
	return fmt.Sprintf("%d of %d within 10 %% (%.1f–%.1f s)", s.within, s.count, s.shortest.Seconds(), s.longest.Seconds())
}

func (s *periodStats) add(period, every time.Duration) {
	if s.count == 0 || period < s.shortest {
		s.shortest = period
	}
	s.longest = max(s.longest, period)
	s.count++
	if diff := period - every; diff <= every/10 && diff >= -every/10 {
		s.within++
	}
}

// simWatch is one watch of a simulation.
type simWatch struct {
	w      Watch[string]
	ns     int
	admits []time.Time
}

// simEvent is a reconcile of a watch due at at, or the end of its read.
type simEvent struct {
	at     time.Time
	seq    int
	watch  int
	record *SyncRecord
}

// before orders the events by time, then by when they were made.
func (e simEvent) before(o simEvent) int {
	if c := e.at.Compare(o.at); c != 0 {
		return c
	}
	return e.seq - o.seq
}

// simLatency is how long a sync's reads take, from admission to the write.
const simLatency = 300 * time.Millisecond

// simCred is the one key of a simulation.
type simCred struct{}

func (simCred) Digest() [32]byte { return [32]byte{1} }

func simulateShares(sim shareSim) sharesRun {
	c := &testClock{wall: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	start := c.wall
	p := newTestPacer(c)
	const api, url = "management", "https://api.example"
	store := ratebudget.NewStoreAt(map[string]ratebudget.RateLimit{api: {Requests: 10, Per: 10 * time.Second, Burst: 2}}, 0, func() time.Time { return c.wall })
	id := ratebudget.BudgetID(api, url, simCred{})
	var watches []*simWatch
	for ns, n := range sim.sizes {
		for i := range n {
			key := fmt.Sprintf("ns%d/w%02d", ns, i)
			watches = append(watches, &simWatch{ns: ns, w: Watch[string]{Key: key, Trigger: "t", Every: sim.every, Group: uint64(len(watches) + 1), NewSpec: true}})
		}
	}
	var events []simEvent // by time
	seq := 0
	push := func(at time.Time, i int, rec *SyncRecord) {
		seq++
		e := simEvent{at: at, seq: seq, watch: i, record: rec}
		k, _ := slices.BinarySearchFunc(events, e, simEvent.before)
		events = slices.Insert(events, k, e)
	}
	for i := range watches {
		push(start.Add(time.Duration(i)*10*time.Millisecond), i, nil) // the creates, one after another
	}
	allowed := make([]time.Duration, len(sim.sizes))
	var calls []time.Time
	asks := 0
	end := start.Add(sim.run)
	for len(events) > 0 {
		e := events[0]
		events = events[1:]
		if e.at.After(end) {
			break
		}
		c.advance(e.at.Sub(c.wall))
		sw := watches[e.watch]
		if e.record != nil { // the read ended: write and schedule
			sw.w.NewSpec = false
			push(c.wall.Add(p.Synced(sw.w, *e.record)), e.watch, nil)
			continue
		}
		if wait := p.Due(sw.w); wait > 0 {
			push(c.wall.Add(wait), e.watch, nil)
			continue
		}
		level := p.Level(sw.w)
		allow := p.Allow(sw.w, []Demand[string]{{API: api, Budget: id, Label: "k", Allowed: store.Allowance(api, id),
			Reads: []string{sw.w.Key + "/pipes", sw.w.Key + "/endpoints"}, Namespace: fmt.Sprint(sw.ns)}})
		allowed[sw.ns] = allow.Every
		asks++
		ask := p.Ask
		if sim.before {
			ask = p.askBeforeReserve
		}
		wait := ask(sw.w.Key, level, Budget{ID: id, Rate: store.Allowance(api, id),
			Admit:  func(n int) time.Duration { return store.Admit(api, url, simCred{}, n) },
			Waiter: Waiter{Namespace: fmt.Sprint(sw.ns)}}, 2)
		if wait > 0 {
			push(c.wall.Add(wait), e.watch, nil)
			continue
		}
		p.Admitted(sw.w.Key)
		sw.admits = append(sw.admits, c.wall)
		calls = append(calls, c.wall, c.wall)
		push(c.wall.Add(simLatency), e.watch, &SyncRecord{Began: c.wall, Every: allow.Every, Level: level, ReachedCloud: true})
	}
	var r sharesRun
	firstSynced := start
	for _, sw := range watches {
		if len(sw.admits) == 0 {
			firstSynced = end
			break
		}
		firstSynced = maxTime(firstSynced, sw.admits[0])
	}
	r.allSynced = firstSynced.Sub(start)
	r.namespaces = make([]nsPeriods, len(sim.sizes))
	for ns, n := range sim.sizes {
		r.namespaces[ns].watches, r.namespaces[ns].every = n, allowed[ns]
	}
	for _, sw := range watches {
		ns := &r.namespaces[sw.ns]
		for i := 1; i < len(sw.admits); i++ {
			period := sw.admits[i].Sub(sw.admits[i-1])
			ns.all.add(period, sim.every)
			if sw.admits[i].Sub(start) >= 2*time.Minute {
				ns.late.add(period, sim.every)
			}
			if !sw.admits[i-1].Before(firstSynced) {
				ns.steady.add(period, sim.every)
			}
		}
	}
	r.calls, r.asks = len(calls), asks
	slices.SortFunc(calls, func(a, b time.Time) int { return a.Compare(b) })
	for i := range calls {
		j, _ := slices.BinarySearchFunc(calls, calls[i].Add(10*time.Second), func(a, b time.Time) int { return a.Compare(b) })
		r.busiest = max(r.busiest, j-i)
	}
	return r
}

// The same namespaces on a busy manager, driven as the controller drives
// the Pacer: each reconcile runs up to 0.3 s after it was asked for and
// each sync's reads take 0.1 to 0.4 s, over 10 draws. The small
// namespaces' periods from 2 min on stay within 10 % of 30 s but for at
// most 1 % of them (3 of 471 today: 33.4 s, a small namespace's syncs
// due closer than the key's spacing), and the 2-watch namespace beside a
// 25-watch one (issue 39's case) keeps all of its periods within 10 %.
// Before, 26 of 478 went past 10 % (up to 33.9 s): a reserved sync may get
// its calls up to a call's spacing (1.1 s) after its slot, and the phases
// stretched its period by up to MaxMove (2.5 s) besides; they now stretch
// it by MaxMove less that spacing (stretchBeside).
func TestSmallNamespacesKeepTheirIntervalOnABusyManager(t *testing.T) {
	for _, tt := range []struct {
		sizes []int
		most  float64 // the share of periods that may be past 10 %
	}{{[]int{50, 5, 1}, 0.01}, {[]int{25, 2}, 0}} {
		outside, count := 0, 0
		var longest time.Duration
		for seed := range uint64(10) {
			sim := fleetSim{keys: [][]int{tt.sizes}, every: 30 * time.Second, run: 6 * time.Minute,
				late: 300 * time.Millisecond, took: 100 * time.Millisecond, tookMore: 300 * time.Millisecond, seed: seed}
			r := simulateFleet(sim)
			for i := 1; i < len(tt.sizes); i++ {
				p := r.periods(fmt.Sprintf("k0-%d", i), sim.every, r.start.Add(2*time.Minute), r.start.Add(sim.run))
				outside, count = outside+p.count-p.within, count+p.count
				longest = max(longest, p.longest)
			}
		}
		t.Logf("%v: %d of %d periods of the small namespaces past 10 %% of 30 s, the longest %v", tt.sizes, outside, count, longest)
		if count == 0 || float64(outside) > tt.most*float64(count) {
			t.Errorf("%v: %d of %d periods of the small namespaces past 10 %% of 30 s (longest %v), want at most %.0f %%", tt.sizes, outside, count, longest, 100*tt.most)
		}
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// BenchmarkSharedKeyPeriods runs the simulation of
// TestSharedKeyKeepsSmallNamespacesOnTime before reservations
// (askBeforeReserve) and now, side by side: the small namespaces' periods
// (shortest, longest, and the share within 10 % of 30 s, from 2 min on and
// steady), the big namespace's longest period from 2 min on, when every
// watch had synced once, and the calls the key made in 6 min (it allows
// 327). ns/op is the CPU of the whole simulation.
func BenchmarkSharedKeyPeriods(b *testing.B) {
	for _, how := range []string{"before", "after"} {
		b.Run(how, func(b *testing.B) {
			var r sharesRun
			for b.Loop() {
				r = simulateShares(shareSim{sizes: []int{50, 5, 1}, every: 30 * time.Second, run: 6 * time.Minute, before: how == "before"})
			}
			for _, ns := range r.namespaces[1:] {
				b.ReportMetric(ns.late.shortest.Seconds(), fmt.Sprintf("ns%d-min-s", ns.watches))
				b.ReportMetric(ns.late.longest.Seconds(), fmt.Sprintf("ns%d-max-s", ns.watches))
				b.ReportMetric(float64(ns.late.within)/float64(max(1, ns.late.count)), fmt.Sprintf("ns%d-within", ns.watches))
				b.ReportMetric(float64(ns.steady.within)/float64(max(1, ns.steady.count)), fmt.Sprintf("ns%d-steady-within", ns.watches))
			}
			b.ReportMetric(r.namespaces[0].late.longest.Seconds(), "ns50-max-s")
			b.ReportMetric(r.allSynced.Seconds(), "all-synced-s")
			b.ReportMetric(float64(r.calls), "calls")
			b.ReportMetric(float64(r.asks), "asks")
		})
	}
}
