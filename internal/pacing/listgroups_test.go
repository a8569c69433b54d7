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
