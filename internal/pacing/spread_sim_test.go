package pacing

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// fleetSim is a fleet of watches driven through the Pacer as the
// controller drives it (Due, Level, Allow, Ask, Admitted, and Synced when
// the reads end), each namespace on a management key of its own or several
// on one, on the client's own ratebudget.Store at the default limit (10
// calls per 10 s, kept to over 11 s, bursts of 2), each sync 2 calls.
type fleetSim struct {
	// keys[k] lists the namespaces on key k and their watches: keys[k][i]
	// watches in namespace "k<k>-<i>".
	keys  [][]int
	every time.Duration
	run   time.Duration
	// late bounds how long after it asked a reconcile runs (a busy
	// manager's workers), drawn at random; took is how long a sync's reads
	// take at least, and tookMore at most on top, drawn at random.
	late, took, tookMore time.Duration
	seed                 uint64
}

// fleetRun is what a fleet simulation saw.
type fleetRun struct {
	start, allSynced time.Time
	calls            []time.Time
	// admits[ns] are each watch's admissions, by namespace.
	admits map[string][][]time.Time
}

// simKey is the credential of key k of a simulation.
type simKey int

func (k simKey) Digest() [32]byte { return [32]byte{byte(k) + 1, byte(k>>8) + 1} }

func simulateFleet(sim fleetSim) fleetRun {
	c := &testClock{wall: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	start := c.wall
	p := newTestPacer(c)
	random := rand.New(rand.NewPCG(sim.seed+1, 7))
	draw := func(upTo time.Duration) time.Duration {
		if upTo <= 0 {
			return 0
		}
		return time.Duration(random.Int64N(int64(upTo) + 1))
	}
	const api, url = "management", "https://api.example"
	store := ratebudget.NewStoreAt(map[string]ratebudget.RateLimit{api: {Requests: 10, Per: 10 * time.Second, Burst: 2}}, 0, func() time.Time { return c.wall })
	type member struct {
		w   Watch[string]
		key simKey
		ns  string
	}
	var watches []*member
	for k, namespaces := range sim.keys {
		for i, n := range namespaces {
			for j := range n {
				key := fmt.Sprintf("k%d-%d/w%03d", k, i, j)
				watches = append(watches, &member{key: simKey(k), ns: fmt.Sprintf("k%d-%d", k, i),
					w: Watch[string]{Key: key, Trigger: "t", Every: sim.every, Group: uint64(len(watches) + 1), NewSpec: true}})
			}
		}
	}
	var events []simEvent
	seq := 0
	push := func(at time.Time, i int, rec *SyncRecord) {
		seq++
		e := simEvent{at: at, seq: seq, watch: i, record: rec}
		k, _ := slices.BinarySearchFunc(events, e, simEvent.before)
		events = slices.Insert(events, k, e)
	}
	// A reconcile asked for after wait runs a busy manager's latency later.
	requeue := func(wait time.Duration, i int) { push(c.wall.Add(wait+draw(sim.late)), i, nil) }
	for i := range watches {
		push(start.Add(time.Duration(i)*time.Millisecond), i, nil) // a start finds them all
	}
	r := fleetRun{start: start, admits: map[string][][]time.Time{}}
	admits := make([][]time.Time, len(watches))
	end := start.Add(sim.run)
	for len(events) > 0 {
		e := events[0]
		events = events[1:]
		if e.at.After(end) {
			break
		}
		c.advance(e.at.Sub(c.wall))
		m := watches[e.watch]
		if e.record != nil {
			m.w.NewSpec = false
			requeue(p.Synced(m.w, *e.record), e.watch)
			continue
		}
		if wait := p.Due(m.w); wait > 0 {
			requeue(wait, e.watch)
			continue
		}
		id := ratebudget.BudgetID(api, url, m.key)
		level := p.Level(m.w)
		allow := p.Allow(m.w, []Demand[string]{{API: api, Budget: id, Label: "k", Allowed: store.Allowance(api, id),
			Reads: []string{m.w.Key + "/pipes", m.w.Key + "/endpoints"}, Namespace: m.ns}})
		wait := p.Ask(m.w.Key, level, Budget{ID: id, Rate: store.Allowance(api, id),
			Admit:  func(n int) time.Duration { return store.Admit(api, url, m.key, n) },
			Waiter: Waiter{Namespace: m.ns}}, 2)
		if wait > 0 {
			requeue(wait, e.watch)
			continue
		}
		p.Admitted(m.w.Key)
		admits[e.watch] = append(admits[e.watch], c.wall)
		r.calls = append(r.calls, c.wall, c.wall)
		push(c.wall.Add(sim.took+draw(sim.tookMore)), e.watch, &SyncRecord{Began: c.wall, Every: allow.Every, Level: level, ReachedCloud: true})
	}
	r.allSynced = start
	for i, m := range watches {
		if len(admits[i]) == 0 {
			r.allSynced = end
		} else {
			r.allSynced = maxTime(r.allSynced, admits[i][0].Add(sim.took))
		}
		r.admits[m.ns] = append(r.admits[m.ns], admits[i])
	}
	slices.SortFunc(r.calls, time.Time.Compare)
	return r
}

// spread is the calls per second over span from from, as test/scale's
// spread-200 counts them: the busiest second over the mean.
func (r fleetRun) spread(from time.Time, span time.Duration) (ratio float64, peak int, mean float64) {
	bins := make([]int, int(span/time.Second))
	total := 0
	for _, at := range r.calls {
		if d := at.Sub(from); d >= 0 && d < span {
			bins[d/time.Second]++
			total++
		}
	}
	mean = float64(total) / float64(len(bins))
	peak = slices.Max(bins)
	return float64(peak) / mean, peak, mean
}

// periods sums up the periods of the namespace's watches that ended in
// [from, until).
func (r fleetRun) periods(ns string, every time.Duration, from, until time.Time) periodStats {
	var s periodStats
	for _, admits := range r.admits[ns] {
		for i := 1; i < len(admits); i++ {
			if !admits[i].Before(from) && admits[i].Before(until) {
				s.add(admits[i].Sub(admits[i-1]), every)
			}
		}
	}
	return s
}

// spread200 is test/scale's spread-200: 200 watches at 30 s created
// together, 20 keys of 10 watches, each key a namespace's.
func spread200(seed uint64, late, tookMore time.Duration) fleetSim {
	keys := make([][]int, 20)
	for k := range keys {
		keys[k] = []int{10}
	}
	return fleetSim{keys: keys, every: 30 * time.Second, run: 4 * time.Minute, late: late, took: 100 * time.Millisecond, tookMore: tookMore, seed: seed}
}

// The watches of test/scale's spread-200 started together (a start finds
// 200 watches of 20 keys) are admitted on their keys' own refill grids,
// which the budgets offset from one another (ratebudget's Store.phaseFor):
// each key admits one sync a spacing (2.2 s) after the other, and no
// second of the first syncs sees more calls than the 20 keys' rate (18.2
// calls/s, so at most 20 in a second). Before, a watch that found another's
// turn coming was told to come back a whole spacing after that turn,
// however soon it came: the second watches of the keys whose first room
// came within the first spacing all came back together, 3.3 s after they
// first asked, and for the rest of the first wave 9 to 12 keys admitted
// within 0.25 s of each other (24 calls in one second), which the phases
// could not spread within MaxMove (peak ÷ mean 1.42).
func TestKeysStartedTogetherKeepTheirOwnGrids(t *testing.T) {
	sim := spread200(0, 0, 200*time.Millisecond)
	r := simulateFleet(sim)
	var firsts []time.Time
	for k := range sim.keys {
		var own []time.Time
		for _, admits := range r.admits[fmt.Sprintf("k%d-0", k)] {
			own = append(own, admits[0])
		}
		slices.SortFunc(own, time.Time.Compare)
		for i := 1; i < len(own); i++ {
			if gap := own[i].Sub(own[i-1]); gap > 2310*time.Millisecond {
				t.Errorf("key %d: first syncs %v and %v apart: want one spacing of its budget, 2.2 s", k, own[i-1].Sub(r.start), gap)
			}
		}
		firsts = append(firsts, own...)
	}
	slices.SortFunc(firsts, time.Time.Compare)
	most := 0
	for i := range firsts {
		j, _ := slices.BinarySearchFunc(firsts, firsts[i].Add(time.Second/2), time.Time.Compare)
		most = max(most, j-i)
	}
	t.Logf("at most %d first syncs within 0.5 s", most)
	if most > 6 {
		t.Errorf("%d first syncs within 0.5 s: the 20 keys' grids, offset, admit 4.5", most)
	}
}

// spread-200 on a fake clock: calls per second over the 75 s after every
// watch's first sync ended, the busiest second over the mean, as the scale
// benchmark counts them; each sync 2 calls, its reads 0.1 to 0.3 s. With
// every reconcile on time, 1.27 (1.42 before the first syncs kept their
// grids); with each up to 0.3 s late (a busy manager's workers), at most
// 1.5 in every draw of 10; every period within 10 % of 30 s.
func TestFleetStartedTogetherSpreadsOut(t *testing.T) {
	for _, tt := range []struct {
		late  time.Duration
		draws uint64
		most  float64
	}{{0, 1, 1.35}, {300 * time.Millisecond, 10, 1.5}} {
		for seed := range tt.draws {
			sim := spread200(seed, tt.late, 200*time.Millisecond)
			r := simulateFleet(sim)
			span := 5 * sim.every / 2
			ratio, peak, mean := r.spread(r.allSynced, span)
			t.Logf("late up to %v, draw %d: first syncs over after %v; peak ÷ mean %.2f (%d/s, mean %.1f/s)", tt.late, seed, r.allSynced.Sub(r.start), ratio, peak, mean)
			if ratio > tt.most {
				t.Errorf("late up to %v, draw %d: peak ÷ mean %.2f, want at most %.2f", tt.late, seed, ratio, tt.most)
			}
			for ns := range r.admits {
				if p := r.periods(ns, sim.every, r.allSynced, r.allSynced.Add(span)); p.within != p.count {
					t.Errorf("late up to %v, draw %d, %s: periods %v, want all within 10 %% of 30 s", tt.late, seed, ns, p)
				}
			}
		}
	}
}
