package pacing

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// listWatch is one watch of simulateList: its interval, when it is created
// (its first sync, asked for by the user), and the alert list it reads at
// a sync that begins at a given instant (0: none).
type listWatch struct {
	every   time.Duration
	created time.Duration
	list    func(at time.Duration) uint64
}

// simulateList runs the watches through the Pacer's front as the
// controller does, each with a service group of its own, each sync telling
// the Pacer its list when it begins (ReadsList, as the controller's
// learnAccess does) and ending took later (Synced), until horizon; it
// returns when each watch's syncs began, as offsets from the start.
func simulateList(ws []listWatch, horizon time.Duration) [][]time.Duration {
	const took = 200 * time.Millisecond
	start := time.Unix(1_800_000_000, 0).Add(123 * time.Millisecond)
	c := &testClock{wall: start}
	p := newTestPacer(c)
	watch := func(i int) Watch[string] {
		return Watch[string]{Key: fmt.Sprintf("w%d", i), Trigger: "t", Every: ws[i].every, Group: GroupOf("service", fmt.Sprint(i))}
	}
	syncs := make([][]time.Duration, len(ws))
	next := make([]time.Duration, len(ws)) // when each is looked at next, or its sync ends
	syncing := make([]bool, len(ws))
	for i, w := range ws {
		next[i] = w.created
	}
	for {
		i := slices.Index(next, slices.Min(next))
		if next[i] > horizon {
			return syncs
		}
		c.advance(start.Add(next[i]).Sub(c.wall))
		w, now := watch(i), next[i]
		switch {
		case syncing[i]:
			level := Periodic
			if len(syncs[i]) == 1 {
				level = User // its creation
			}
			syncing[i] = false
			began := start.Add(syncs[i][len(syncs[i])-1])
			next[i] += p.Synced(w, SyncRecord{Began: began, Every: ws[i].every, Level: level, ReachedCloud: true})
			continue
		case len(syncs[i]) > 0:
			if wait := p.Due(w); wait > 0 {
				next[i] += wait
				continue
			}
		}
		p.ReadsList(w.Key, ws[i].list(now))
		syncs[i] = append(syncs[i], now)
		syncing[i], next[i] = true, now+took
	}
}

// always is a watch's list from its creation on.
func always(list uint64) func(time.Duration) uint64 {
	return func(time.Duration) uint64 { return list }
}

// from is a list read from at on (none before).
func from(at time.Duration, list uint64) func(time.Duration) uint64 {
	return func(t time.Duration) uint64 {
		if t >= at {
			return list
		}
		return 0
	}
}

// until is a list read until at (none after).
func until(at time.Duration, list uint64) func(time.Duration) uint64 {
	return func(t time.Duration) uint64 {
		if t < at {
			return list
		}
		return 0
	}
}

// lastSyncs are the last sync of each of the watches named.
func lastSyncs(syncs [][]time.Duration, watches ...int) []time.Duration {
	out := make([]time.Duration, len(watches))
	for j, i := range watches {
		out[j] = syncs[i][len(syncs[i])-1]
	}
	return out
}

// spreadOf is how far apart the earliest and the latest of at are.
func spreadOf(at []time.Duration) time.Duration { return slices.Max(at) - slices.Min(at) }

// The watches that read one alert list, each of a service of its own,
// sync together, so the one read of the list they share is made just
// before each of their syncs and each sees a change made before it at
// that sync; each keeps its interval. Without a list in common (as before)
// the services' groups keep apart, and a watch synced seconds after the
// read another made sees a change only at a later sync.
func TestWatchesOfOneAlertListConvergeToOnePhase(t *testing.T) {
	const every = 30 * time.Second
	list := GroupOf("alert_list", "https://alerts", "token digest")
	other := GroupOf("alert_list", "https://alerts", "another token")
	six := func(lists func(i int) func(time.Duration) uint64, every func(i int) time.Duration) []listWatch {
		ws := make([]listWatch, 6)
		for i := range ws {
			// Created 2 s apart: their first syncs spread over 10 s.
			ws[i] = listWatch{every: every(i), created: time.Duration(i) * 2 * time.Second, list: lists(i)}
		}
		return ws
	}
	same := func(int) time.Duration { return every }
	tests := []struct {
		name    string
		watches []listWatch
		horizon time.Duration
		// together are the groups of watches whose last syncs must fall
		// at one instant; apart, watches whose last syncs must lie more
		// than MaxMove from those of together[0].
		together [][]int
		apart    []int
	}{
		{"one list: one phase from the first periodic sync on",
			six(func(int) func(time.Duration) uint64 { return always(list) }, same), 3 * every,
			[][]int{{0, 1, 2, 3, 4, 5}}, nil},
		{"no list in common (the services' groups, as before): they stay apart",
			six(func(int) func(time.Duration) uint64 { return always(0) }, same), 3 * every,
			[][]int{{0}}, []int{1, 2, 3, 4, 5}},
		{"two lists: two phases",
			six(func(i int) func(time.Duration) uint64 { return always([]uint64{list, other}[i%2]) }, same), 3 * every,
			[][]int{{0, 2, 4}, {1, 3, 5}}, nil},
		{"a watch that begins to read the list joins its phase at its next sync",
			six(func(i int) func(time.Duration) uint64 {
				if i == 5 {
					return from(2*every, list)
				}
				return always(list)
			}, same), 4 * every,
			[][]int{{0, 1, 2, 3, 4, 5}}, nil},
		{"a watch that stops reading the list leaves it; the others stay together",
			six(func(i int) func(time.Duration) uint64 {
				if i == 5 {
					return until(2*every, list)
				}
				return always(list)
			}, same), 12 * every,
			[][]int{{0, 1, 2, 3, 4}}, []int{5}},
		{"different intervals on one list: each interval's watches align among themselves",
			six(func(int) func(time.Duration) uint64 { return always(list) }, func(i int) time.Duration { return every * time.Duration(1+i%2) }), 6 * every,
			[][]int{{0, 2, 4}, {1, 3, 5}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			syncs := simulateList(tt.watches, tt.horizon)
			for _, group := range tt.together {
				if last := lastSyncs(syncs, group...); spreadOf(last) != 0 {
					t.Errorf("the last syncs of watches %v lie %v apart (%v): want one instant", group, spreadOf(last), last)
				}
				for _, i := range group {
					every := tt.watches[i].every
					if n := len(syncs[i]); n >= 3 && (syncs[i][n-1]-syncs[i][n-2]-every).Abs() > MaxMove(every) {
						t.Errorf("watch %d: its last period is %v, want its interval %v give or take MaxMove (syncs %v)", i, syncs[i][n-1]-syncs[i][n-2], every, syncs[i])
					}
				}
			}
			ref := syncs[tt.together[0][0]][len(syncs[tt.together[0][0]])-1]
			for _, i := range tt.apart {
				last := syncs[i][len(syncs[i])-1]
				if d := (last - ref) % every; min(d, every-d) <= MaxMove(every) && min(-d, every+d) <= MaxMove(every) {
					t.Errorf("watch %d last synced at %v, within MaxMove of watch %d's phase (%v): want it apart", i, last, tt.together[0][0], ref)
				}
			}
		})
	}
}

// The watches of one list, due at one instant, share the management key of
// their services' own reads: the key admits what its burst allows at once
// and the rest at its pace, so the last of them syncs (2 calls each beyond
// the burst) ÷ rate after the first, every round, and each keeps its
// interval; the budgets do not stretch it, since the calls per interval are
// what they were. Spread by service (as before), each found the key's burst
// whole. No call is ever sent beyond the key's budget: each waits to be
// admitted (a client-side budget), so none meets a 429.
func TestWatchesOfOneListDueAtOnceShareTheKeysBurst(t *testing.T) {
	const (
		n     = 10
		every = 30 * time.Second
		took  = 200 * time.Millisecond
	)
	list := GroupOf("alert_list", "https://alerts", "token digest")
	for _, tt := range []struct {
		name string
		list uint64
		// lag bounds how late after a round's first sync its last begins.
		lag time.Duration
	}{
		{"one list: due at once, admitted at the key's pace", list, (2*n - 10) * time.Second},
		{"no list in common (before): spread, each admitted at once", 0, every},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Unix(1_800_000_000, 0).Add(123 * time.Millisecond)
			c := &testClock{wall: start}
			p := newTestPacer(c)
			key := &gcraBudget{c: c, interval: time.Second, burst: 10, tat: start} // 10 calls per 10 s
			watch := func(i int) Watch[string] {
				return Watch[string]{Key: fmt.Sprintf("w%d", i), Trigger: "t", Every: every, Group: GroupOf("service", fmt.Sprint(i))}
			}
			demands := func(i int) []Demand[string] {
				return []Demand[string]{
					{Budget: "key", Allowed: 1, Reads: []string{fmt.Sprintf("pipes %d", i), fmt.Sprintf("endpoints %d", i)}},
					{Budget: "token", Allowed: 100.0 / 60, Reads: []string{"list"}, AcrossGroups: true},
				}
			}
			syncs := make([][]time.Duration, n)
			next := make([]time.Duration, n)
			syncing := make([]bool, n)
			for i := range n {
				next[i] = time.Duration(i) * 3 * time.Second // created 3 s apart
			}
			for {
				i := slices.Index(next, slices.Min(next))
				if next[i] > 6*every-5*time.Second { // the last round whole, the next not begun
					break
				}
				c.advance(start.Add(next[i]).Sub(c.wall))
				w, now := watch(i), next[i]
				if syncing[i] {
					syncing[i] = false
					level := Periodic
					if len(syncs[i]) == 1 {
						level = User
					}
					next[i] += p.Synced(w, SyncRecord{Began: start.Add(syncs[i][len(syncs[i])-1]), Every: every, Level: level, ReachedCloud: true})
					continue
				}
				if len(syncs[i]) > 0 {
					if wait := p.Due(w); wait > 0 {
						next[i] += wait
						continue
					}
				}
				p.ReadsList(w.Key, tt.list)
				if allowed := p.Demand(w, demands(i)); allowed != every {
					t.Fatalf("watch %d: the budgets allow it %v, want its interval %v", i, allowed, every)
				}
				if wait := p.Ask(w.Key, Periodic, key.of("key"), 2); wait > 0 {
					next[i] += wait
					continue
				}
				p.Admitted(w.Key)
				syncs[i] = append(syncs[i], now)
				syncing[i], next[i] = true, now+took
			}
			all := make([]int, n)
			for i := range all {
				all[i] = i
			}
			last := lastSyncs(syncs, all...)
			if spread := spreadOf(last); spread > tt.lag {
				t.Errorf("the last round's syncs spread over %v, want at most %v: %v", spread, tt.lag, last)
			}
			for i := range n {
				m := len(syncs[i])
				if gap := syncs[i][m-1] - syncs[i][m-2]; (gap - every).Abs() > MaxMove(every) {
					t.Errorf("watch %d: its last period is %v, want %v give or take MaxMove (syncs %v)", i, gap, every, syncs[i])
				}
			}
			t.Logf("the last round's syncs: %v", last)
		})
	}
}

// A watch's list is remembered from the sync that learned it until another
// sync tells otherwise (0: none) or the watch goes away.
func TestReadsListIsRememberedUntilToldOrForgotten(t *testing.T) {
	p := newTestPacer(&testClock{wall: time.Unix(1_800_000_000, 0)})
	w := Watch[string]{Key: "w", Every: time.Minute, Group: GroupOf("service")}
	list := GroupOf("alert_list", "https://alerts", "digest")
	for _, step := range []struct {
		name string
		do   func()
		want uint64
	}{
		{"never told: its service's group", func() {}, w.Group},
		{"reads a list: the list's group", func() { p.ReadsList("w", list) }, list},
		{"reads none any more: its service's again", func() { p.ReadsList("w", 0) }, w.Group},
		{"forgotten: its service's", func() { p.ReadsList("w", list); p.Forget("w") }, w.Group},
	} {
		step.do()
		if got := p.lists.groupOf(w); got != step.want {
			t.Errorf("%s: group %d, want %d", step.name, got, step.want)
		}
	}
}
