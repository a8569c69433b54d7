package pacing

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// The window counts what each namespace spent in the last SpendWindow, by
// tenths: calls older than the window are gone, a namespace that spent
// nothing in it is dropped, and a clock that goes back counts into the
// latest slice.
func TestSpendingWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	slice := SpendWindow / spendBuckets
	type spend struct {
		at time.Duration
		ns string
		n  int
	}
	for _, tt := range []struct {
		name   string
		spends []spend
		at     time.Duration
		want   map[string]int
	}{
		{"nothing spent", nil, 0, nil},
		{"two namespaces", []spend{{0, "a", 2}, {time.Second, "a", 2}, {time.Second, "b", 1}}, 2 * time.Second, map[string]int{"a": 4, "b": 1}},
		{"within the window", []spend{{0, "a", 2}, {SpendWindow - slice, "a", 2}}, SpendWindow - time.Nanosecond, map[string]int{"a": 4}},
		{"the oldest slice leaves", []spend{{0, "a", 2}, {SpendWindow - slice, "a", 2}}, SpendWindow, map[string]int{"a": 2}},
		{"all gone after a window", []spend{{0, "a", 2}, {time.Second, "b", 2}}, SpendWindow + 2*slice, nil},
		{"long quiet, then a call", []spend{{0, "a", 5}, {10 * SpendWindow, "a", 1}}, 10 * SpendWindow, map[string]int{"a": 1}},
		{"a clock gone back counts now", []spend{{time.Minute, "a", 2}, {0, "a", 2}}, time.Minute, map[string]int{"a": 4}},
		{"zero calls are not spent", []spend{{0, "a", 0}}, 0, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSpending()
			for _, sp := range tt.spends {
				s.Spent("k", sp.ns, sp.n, t0.Add(sp.at))
			}
			got := map[string]int{}
			for ns, sp := range s.Of("k", t0.Add(tt.at)) {
				got[ns] = sp.Spent
			}
			if tt.want == nil {
				tt.want = map[string]int{}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("spent %v, want %v", got, tt.want)
			}
			if len(tt.want) == 0 && len(s.budgets) != 0 {
				t.Errorf("the book keeps %d budgets with nothing spent", len(s.budgets))
			}
		})
	}
}

// A namespace is over its share of a shared budget by what it spent when it
// spent, in SpendWindow, more than its weight's part of the budget or what
// its watches ask at their intervals (whichever is more), and SpendSlack:
// whatever its intervals say. The management key's default budget, 10
// calls per 11 s, is 18.2 calls in 20 s.
func TestOverBySpend(t *testing.T) {
	const rate = 10.0 / 11
	everyMinute := 2.0 / 60 // one watch of 2 calls per minute
	for _, tt := range []struct {
		name    string
		weights map[string]float64
		needs   map[string]float64 // calls/s at the intervals
		spent   map[string]int
		want    map[string]bool
	}{
		{"alone on the key, never over", map[string]float64{"a": 1}, map[string]float64{"a": everyMinute}, map[string]int{"a": 18}, nil},
		{"requests within its half", map[string]float64{"a": 1, "b": 1}, map[string]float64{"a": everyMinute, "b": everyMinute}, map[string]int{"a": 13, "b": 2}, nil},
		{"requests past its half", map[string]float64{"a": 1, "b": 1}, map[string]float64{"a": everyMinute, "b": everyMinute}, map[string]int{"a": 14, "b": 2}, map[string]bool{"a": true}},
		{"by weight: three quarters", map[string]float64{"a": 3, "b": 1}, map[string]float64{"a": everyMinute, "b": everyMinute}, map[string]int{"a": 17, "b": 2}, nil},
		{"by weight: the light one's quarter", map[string]float64{"a": 3, "b": 1}, map[string]float64{"a": everyMinute, "b": everyMinute}, map[string]int{"a": 2, "b": 9}, map[string]bool{"b": true}},
		{"its intervals ask more than its part", map[string]float64{"a": 1, "b": 1}, map[string]float64{"a": 0.6, "b": everyMinute}, map[string]int{"a": 19, "b": 2}, nil},
		{"past what its intervals ask", map[string]float64{"a": 1, "b": 1}, map[string]float64{"a": 0.6, "b": everyMinute}, map[string]int{"a": 20, "b": 2}, map[string]bool{"a": true}},
		{"over by its intervals, whatever it spent", map[string]float64{"a": 1, "b": 1}, map[string]float64{"a": 2, "b": everyMinute}, nil, map[string]bool{"a": true}},
		// Over already: it stays over while it spends more than its
		// intervals ask (0.8 calls in 20 s) and one sync, below its part
		// (9.1) as well.
		// On a key of 4 calls per 10 s (3.6 calls each in 20 s), the slack
		// is half the part: over past 5.5 calls.
		{"a small key: within its half and slack", map[string]float64{"a": 1, "b": 1, "key:4": 1}, map[string]float64{"a": everyMinute, "b": everyMinute}, map[string]int{"a": 5, "b": 2}, nil},
		{"a small key: past its half and slack", map[string]float64{"a": 1, "b": 1, "key:4": 1}, map[string]float64{"a": everyMinute, "b": everyMinute}, map[string]int{"a": 6, "b": 2}, map[string]bool{"a": true}},
		{"held to the rest, over already", map[string]float64{"a": 1, "b": 1}, map[string]float64{"a": everyMinute, "b": everyMinute}, map[string]int{"a": 4, "b": 2, "was-over:a": 1}, map[string]bool{"a": true}},
		{"back to its intervals, let go", map[string]float64{"a": 1, "b": 1}, map[string]float64{"a": everyMinute, "b": everyMinute}, map[string]int{"a": 2, "b": 2, "was-over:a": 1}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := newDemands[string, string]()
			allowed := rate
			if tt.weights["key:4"] > 0 {
				allowed = 4.0 / 11
				delete(tt.weights, "key:4")
			}
			for ns, weight := range tt.weights {
				// One watch of 1 read at the interval that asks need calls/s.
				every := time.Duration(float64(time.Second) / tt.needs[ns])
				d.Note(ns+"/w", every, 1, []Demand[string]{{API: "management", Budget: "k", Label: "k", Allowed: allowed,
					Reads: []string{ns}, Namespace: ns, Weight: weight}})
			}
			spent := map[string]Spending{}
			for ns, n := range tt.spent {
				if !strings.HasPrefix(ns, "was-over:") {
					spent[ns] = Spending{Spent: n, WasOver: tt.spent["was-over:"+ns] > 0}
				}
			}
			if got := d.Over("k", spent); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("over %v, want %v", got, tt.want)
			}
			for ns := range tt.weights {
				if s := d.SpendingOf("k", ns, spent[ns]); s.Over() != (tt.want[ns] && tt.spent[ns] > 0) && len(tt.weights) > 1 {
					t.Errorf("%s: SpendingOf %+v, over %v", ns, s, s.Over())
				}
			}
		})
	}
}

// Issue 37, on a fake clock: two namespaces on one management key (the
// manager's default, 10 calls per 10 s, kept to over 11 s). Namespace A's
// three watches sit at 24 h and request a sync again as soon as the last
// one ended; namespace B's one watch syncs every 30 s. Each sync is 2
// calls. B keeps its interval (every period within 10 % of 30 s once it
// synced first); A gets the rest of the key, and the key never admits more
// than its budget. Before, A's requested syncs were within A's share by its
// intervals (3 calls a day) and took every call as it came: B waited for
// minutes.
func TestRequestedSyncsLeaveAnotherNamespaceItsInterval(t *testing.T) {
	r := simulateRequests(requestSim{requesters: 3, victimEvery: 30 * time.Second, run: 6 * time.Minute})
	t.Logf("victim: %d syncs, periods %.1f–%.1f s; requester: %d calls; %d calls, at most %d in 10 s",
		r.victimSyncs, r.victimShortest.Seconds(), r.victimLongest.Seconds(), r.requesterCalls, r.calls, r.busiest)
	if r.victimSyncs < 11 || r.victimLongest > 33*time.Second || r.victimShortest < 27*time.Second {
		t.Errorf("the victim synced %d times in 6 min, periods %v to %v: want 12, each within 10 %% of 30 s",
			r.victimSyncs, r.victimShortest, r.victimLongest)
	}
	if r.busiest > 10 {
		t.Errorf("%d calls admitted within 10 s: the key allows 10", r.busiest)
	}
	// The requester takes what the victim leaves: the key stays busy.
	if r.requesterCalls < r.calls-2*r.victimSyncs || r.calls < 280 {
		t.Errorf("the requester made %d of %d calls: want all but the victim's, about what the key allows (327)", r.requesterCalls, r.calls)
	}
}

// A namespace within its share is not held back for requesting: one watch
// of A requests a sync every 20 s, B's watch syncs every 30 s; each of A's
// requested syncs gets its calls at once, or within the time the key takes
// to earn them (two calls' spacing) when B's sync just spent them, and B
// keeps its interval.
func TestRequestsWithinTheShareAreFast(t *testing.T) {
	r := simulateRequests(requestSim{requesters: 1, requestEvery: 20 * time.Second, victimEvery: 30 * time.Second, run: 6 * time.Minute})
	t.Logf("requests waited up to %v; victim periods %.1f–%.1f s", r.requestWaitLongest, r.victimShortest.Seconds(), r.victimLongest.Seconds())
	if earn := callsAt(2, 10.0/11); r.requestWaitLongest > earn {
		t.Errorf("a requested sync waited %v for its calls; the key earns them in %v", r.requestWaitLongest, earn)
	}
	if r.requests < 17 {
		t.Errorf("%d requested syncs in 6 min, want 18", r.requests)
	}
	if r.victimLongest > 33*time.Second || r.victimShortest < 27*time.Second {
		t.Errorf("victim periods %v to %v: want within 10 %% of 30 s", r.victimShortest, r.victimLongest)
	}
}

// requestSim is a scenario: requesters watches of namespace A at 24 h that
// request a sync every requestEvery (0: as soon as the last one ended), one
// watch of namespace B at victimEvery, run for run.
type requestSim struct {
	// key is the key's calls per 10 s; 0: the manager's default, 10.
	key          int
	requesters   int
	requestEvery time.Duration
	victimEvery  time.Duration
	run          time.Duration
}

// requestRun is what a simulation measured.
type requestRun struct {
	// The victim's sync periods, from its first sync on.
	victimSyncs                   int
	victimShortest, victimLongest time.Duration
	// requests counts the requested syncs admitted, requestWaitLongest the
	// longest any waited for its calls.
	requests           int
	requestWaitLongest time.Duration
	// calls are the key's calls admitted, requesterCalls A's, busiest the
	// most in any 10 s.
	calls, requesterCalls, busiest int
}

func simulateRequests(sim requestSim) requestRun {
	c := &testClock{wall: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	start := c.wall
	p := newTestPacer(c)
	const api, url = "management", "https://api.example"
	store := ratebudget.NewStoreAt(map[string]ratebudget.RateLimit{api: {Requests: cmp.Or(sim.key, 10), Per: 10 * time.Second, Burst: 2}}, 0, func() time.Time { return c.wall })
	id := ratebudget.BudgetID(api, url, simCred{})
	type watch struct {
		w         Watch[string]
		ns        string
		requested int    // the requests made, the trigger's value
		began     string // the trigger its sync under way began with
		askedAt   time.Time
		admits    []time.Time
	}
	watches := []*watch{{ns: "b", w: Watch[string]{Key: "b/victim", Trigger: "t", Every: sim.victimEvery, Group: 1, NewSpec: true}}}
	for i := range sim.requesters {
		watches = append(watches, &watch{ns: "a", w: Watch[string]{Key: fmt.Sprintf("a/w%d", i), Trigger: "t", Every: 24 * time.Hour, Group: uint64(i + 2), NewSpec: true}})
	}
	// A watch has one reconcile due at a time (its latest), as a workqueue
	// keeps one item per key; a request tick (tick) is a new requested-at
	// value.
	type event struct {
		at     time.Time
		seq    int
		watch  int
		tick   bool
		record *SyncRecord
	}
	var events []event
	seq := 0
	latest := make([]int, len(watches))
	push := func(e event) {
		seq++
		e.seq = seq
		if !e.tick && e.record == nil {
			latest[e.watch] = seq
		}
		k, _ := slices.BinarySearchFunc(events, e, func(a, b event) int {
			if c := a.at.Compare(b.at); c != 0 {
				return c
			}
			return a.seq - b.seq
		})
		events = slices.Insert(events, k, e)
	}
	busy := make([]bool, len(watches))
	request := func(i int) { // kubectl servicewatch sync: a new requested-at value
		sw := watches[i]
		sw.requested++
		sw.w.Trigger, sw.w.Requested, sw.askedAt = fmt.Sprint("r", sw.requested), true, c.wall
		if !busy[i] { // a read under way: its end looks again
			push(event{at: c.wall, watch: i})
		}
	}
	end := start.Add(sim.run)
	for i := range watches {
		push(event{at: start.Add(time.Duration(i) * 10 * time.Millisecond), watch: i})
		if i > 0 && sim.requestEvery > 0 {
			for at := start.Add(sim.requestEvery); at.Before(end); at = at.Add(sim.requestEvery) {
				push(event{at: at, watch: i, tick: true})
			}
		}
	}
	var r requestRun
	var calls []time.Time
	for len(events) > 0 {
		e := events[0]
		events = events[1:]
		if e.at.After(end) {
			break
		}
		c.advance(e.at.Sub(c.wall))
		sw := watches[e.watch]
		switch {
		case e.tick:
			request(e.watch)
			continue
		case e.record != nil: // the read ended: write and schedule
			busy[e.watch] = false
			sw.w.NewSpec = false
			if sw.w.Trigger == sw.began { // no new value came meanwhile
				sw.w.Requested = false
			}
			next := p.Synced(sw.w, *e.record)
			switch {
			case sw.w.Requested:
				push(event{at: c.wall, watch: e.watch})
			case sw.ns == "a" && sim.requestEvery == 0:
				request(e.watch)
			default:
				push(event{at: c.wall.Add(next), watch: e.watch})
			}
			continue
		case e.seq != latest[e.watch] || busy[e.watch]:
			continue // a reconcile since replaced by a later one
		}
		if wait := p.Due(sw.w); wait > 0 {
			push(event{at: c.wall.Add(wait), watch: e.watch})
			continue
		}
		level := p.Level(sw.w)
		allow := p.Allow(sw.w, []Demand[string]{{API: api, Budget: id, Label: "k", Allowed: store.Allowance(api, id),
			Reads: []string{sw.w.Key + "/pipes", sw.w.Key + "/endpoints"}, Namespace: sw.ns}})
		wait := p.Ask(sw.w.Key, level, Budget{ID: id, Rate: store.Allowance(api, id),
			Admit:  func(n int) time.Duration { return store.Admit(api, url, simCred{}, n) },
			Waiter: Waiter{Namespace: sw.ns}}, 2)
		if wait > 0 {
			push(event{at: c.wall.Add(wait), watch: e.watch})
			continue
		}
		p.Admitted(sw.w.Key)
		busy[e.watch], sw.began = true, sw.w.Trigger
		sw.admits = append(sw.admits, c.wall)
		calls = append(calls, c.wall, c.wall)
		if sw.ns == "a" {
			r.requesterCalls += 2
			if level == User && sw.requested > 0 {
				r.requests++
				r.requestWaitLongest = max(r.requestWaitLongest, c.wall.Sub(sw.askedAt))
			}
		}
		push(event{at: c.wall.Add(simLatency), watch: e.watch, record: &SyncRecord{Began: c.wall, Every: allow.Every, Level: level, ReachedCloud: true}})
	}
	victim := watches[0].admits
	r.victimSyncs = len(victim)
	for i := 1; i < len(victim); i++ {
		period := victim[i].Sub(victim[i-1])
		if i == 1 || period < r.victimShortest {
			r.victimShortest = period
		}
		r.victimLongest = max(r.victimLongest, period)
	}
	r.calls = len(calls)
	for i := range calls {
		j, _ := slices.BinarySearchFunc(calls, calls[i].Add(10*time.Second), func(a, b time.Time) int { return a.Compare(b) })
		r.busiest = max(r.busiest, j-i)
	}
	return r
}

// BenchmarkRequestedSyncsVictim runs the simulation of
// TestRequestedSyncsLeaveAnotherNamespaceItsInterval (three watches of one
// namespace at 24 h requesting syncs in a loop, another namespace's one
// watch at 30 s, the management key's default budget, 6 min): the victim's
// worst period (victim-max-s) and its syncs, the requester's calls of all
// the key's, and the most calls in any 10 s (the key allows 10). ns/op is
// the CPU of the whole simulation. Run on a30ccef for "before".
func BenchmarkRequestedSyncsVictim(b *testing.B) {
	var r requestRun
	for b.Loop() {
		r = simulateRequests(requestSim{requesters: 3, victimEvery: 30 * time.Second, run: 6 * time.Minute})
	}
	longest := r.victimLongest
	if r.victimSyncs < 2 { // it never synced again: its period is the whole run
		longest = 6 * time.Minute
	}
	b.ReportMetric(longest.Seconds(), "victim-max-s")
	b.ReportMetric(float64(r.victimSyncs), "victim-syncs")
	b.ReportMetric(float64(r.requesterCalls), "requester-calls")
	b.ReportMetric(float64(r.calls), "calls")
	b.ReportMetric(float64(r.busiest), "max-calls-10s")
}

// The calls a budget admitted outside Ask (a list's further pages, an
// alert read alone after its list) count as the namespace's spent, and
// leave the window with it.
func TestCallsAdmittedOutsideAskCount(t *testing.T) {
	c := &testClock{wall: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	p := newTestPacer(c)
	p.Spent("budget", "a", 3)
	p.Spent("budget", "a", 2)
	p.Spent("other", "a", 7)
	if got := p.Spending("budget", "a").Spent; got != 5 {
		t.Errorf("a spent %d calls of budget, want 5", got)
	}
	if got := p.Spending("budget", "b").Spent; got != 0 {
		t.Errorf("b spent %d calls of budget, want 0", got)
	}
	c.advance(SpendWindow + time.Second)
	if got := p.Spending("budget", "a").Spent; got != 0 {
		t.Errorf("a spent %d calls of budget a window later, want 0", got)
	}
}
