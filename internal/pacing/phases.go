package pacing

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"time"
)

// phases spreads the periodic syncs of the watches of one interval evenly
// over it, without ever shortening or stretching a period by more than
// MaxMove.
//
// Watches are grouped by what they read (the controller names the group by a
// hash of the service and the API it is read at, or of the alert list the
// watch reads, see listGroups): watches of one group sync together, so the
// reads they share are made once, just before each of their syncs;
// different groups spread out. Each group has a phase, the share of the interval at which it synced
// last (see Synced), and a target for each of its next syncs: the groups
// keep the circular order of their phases, and round after round the
// targets space them evenly over a wider arc, each end of it moving by
// MaxMove, until they cover the whole interval, interval/n apart. Each sync
// moves the group toward its target by at most MaxMove (see Plan.Due), so
// watches created together, whose first syncs bunch wherever the budgets
// admitted them, spread out over a few intervals while every period stays
// within a tenth of the interval.
//
// Keeping the order matters: the first syncs of the watches on one key were
// spaced by the key's budget, and spacing the groups evenly in that order
// only widens the gaps between them (with 20 keys and 10 watches each, 2.2 s
// become 3 s), so the budget never has to hold a moved sync back. Ranking by
// hash, as before, set the watches of a key at random places, closer than
// the budget allows, and reaching those places in one step shortened or
// stretched one period to anything from half to one and a half intervals.
type phases[K comparable] struct {
	mu     sync.Mutex
	books  map[time.Duration]*phaseBook[K]
	member map[K]time.Duration
}

// phaseBook is the watches and groups of one interval.
type phaseBook[K comparable] struct {
	of    map[K]uint64   // each watch's group
	count map[uint64]int // the watches of each group
	// at is the phase of each group that has synced; began when its
	// latest round began, round how many rounds it made since the plan.
	at    map[uint64]float64
	began map[uint64]time.Time
	round map[uint64]int
	// The plan: the groups in circular order from the one after the widest
	// gap (pos is each one's place), and for each round their targets, in
	// that order, as shares counted from the first (so increasing, and
	// past 1 for those that come a whole interval later). Worked out again
	// when a group came or went (stale), at most every plannedEvery.
	order     []uint64
	pos       map[uint64]int
	rounds    [][]float64
	settled   bool // the last round covers the whole interval: no more move
	stale     bool
	plannedAt time.Time
	latest    time.Time // the latest sync the book heard of: its clock
}

// Phase is where a watch's group syncs and where it should: shares of the
// interval, in [0, 1). The zero Phase is none yet (the group has not
// synced): the watch's syncs stay one interval apart.
type Phase struct {
	Known bool
	// At is the share of the interval at which the group synced last.
	At float64
	// Target is where the group's next sync is headed.
	Target float64
}

// newPhases returns an empty book.
func newPhases[K comparable]() *phases[K] {
	return &phases[K]{books: map[time.Duration]*phaseBook[K]{}, member: map[K]time.Duration{}}
}

// PhaseOf is the phase of the watch of the given group among the watches of
// interval every.
func (b *phases[K]) PhaseOf(key K, group uint64, every time.Duration) Phase {
	b.mu.Lock()
	defer b.mu.Unlock()
	book := b.joinLocked(key, group, every)
	at, ok := book.at[group]
	if !ok {
		return Phase{}
	}
	_, planned := book.pos[group]
	if book.stale && (!planned || book.latest.Sub(book.plannedAt) >= plannedEvery(every)) {
		book.plan()
	}
	return Phase{Known: true, At: at, Target: book.target(group, MaxMove(every).Seconds()/every.Seconds())}
}

// plannedEvery bounds how often the plan of a book is worked out again while
// groups come and go (n log n each time): a thirtieth of the interval.
func plannedEvery(every time.Duration) time.Duration { return every / 30 }

// Synced records that the watch of the given group, of interval every,
// began a sync at, repeated every period (its interval as its budgets allow
// it). The group's first sync places it; a periodic one moves it (and,
// when the group's last round began more than half a period ago, begins its
// next round); a sync the user asked for (not periodic) does not move a
// group that is placed: its watch goes back to the group's slot (see Plan).
func (b *phases[K]) Synced(key K, group uint64, every time.Duration, at time.Time, period time.Duration, periodic bool) {
	if period <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	book := b.joinLocked(key, group, every)
	if at.After(book.latest) {
		book.latest = at
	}
	_, placed := book.at[group]
	switch {
	case !placed:
		book.stale = true // a new group: the others make room
	case !periodic:
		return
	case at.Sub(book.began[group]) > period/2:
		book.round[group]++
	default:
		return // another watch of the group, in the same round
	}
	book.at[group] = shareOf(at, period)
	book.began[group] = at
}

// Shift moves every group's phase and targets by a step of the wall clock,
// as schedules.Shift moves the schedules, so that the groups stay where
// their watches' next syncs are.
func (b *phases[K]) Shift(step time.Duration) {
	if step == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for every, book := range b.books {
		by := shareOf(time.Unix(0, 0).Add(step), every)
		for g, at := range book.at {
			book.at[g] = share(at + by)
			book.began[g] = book.began[g].Round(0).Add(step)
		}
		for _, round := range book.rounds {
			for i := range round {
				round[i] += by
			}
		}
		book.latest, book.plannedAt = book.latest.Round(0).Add(step), book.plannedAt.Round(0).Add(step)
	}
}

// shareOf is the share of period at which at falls, counted from the Unix
// epoch, as PeriodicSlot counts.
func shareOf(at time.Time, period time.Duration) float64 {
	off := at.UnixNano() % int64(period)
	if off < 0 {
		off += int64(period)
	}
	return float64(off) / float64(period)
}

// share wraps x into [0, 1).
func share(x float64) float64 {
	x -= math.Floor(x)
	if x >= 1 {
		x = 0
	}
	return x
}

// plan orders the groups by their phases now and spreads them from there
// (round 0); every group starts over at round 0.
func (pb *phaseBook[K]) plan() {
	type placed struct {
		phase float64
		group uint64
	}
	all := make([]placed, 0, len(pb.at))
	for g, at := range pb.at {
		all = append(all, placed{at, g})
	}
	slices.SortFunc(all, func(a, b placed) int {
		if c := cmp.Compare(a.phase, b.phase); c != 0 {
			return c
		}
		return cmp.Compare(a.group, b.group)
	})
	n := len(all)
	cut, widest := 0, 1-all[n-1].phase+all[0].phase
	for i := 1; i < n; i++ {
		if gap := all[i].phase - all[i-1].phase; gap > widest {
			cut, widest = i, gap
		}
	}
	pb.order = make([]uint64, n)
	pb.pos = make(map[uint64]int, n)
	now := make([]float64, n)
	for i := range n {
		p := all[(cut+i)%n]
		pb.order[i], pb.pos[p.group] = p.group, i
		now[i] = p.phase
		if cut+i >= n {
			now[i]++
		}
		pb.round[p.group] = 0
	}
	pb.rounds = [][]float64{now}
	pb.settled = n == 1
	pb.stale = false
	pb.plannedAt = pb.latest
}

// target is where the group's next sync is headed: its round's place,
// working out the rounds up to it.
func (pb *phaseBook[K]) target(group uint64, reach float64) float64 {
	p, ok := pb.pos[group]
	if !ok {
		return pb.at[group] // placed since the plan: it stays where it is
	}
	r := pb.round[group] + 1
	for len(pb.rounds) <= r && !pb.settled {
		pb.rounds = append(pb.rounds, pb.spread(pb.rounds[len(pb.rounds)-1], reach))
	}
	return share(pb.rounds[min(r, len(pb.rounds)-1)][p])
}

// spread is the next round after u: the groups in the same order and about
// the same center (the moves sum to nothing), spaced evenly, as widely as a
// move of at most reach (a share of the interval) at either end allows:
// over the whole interval once they can cover it, until then over the arc
// they cover now widened by reach at each end. Spread over the whole
// interval at once, the groups at either end of the arc would all move by
// the most they may, and arrive as bunched as they started.
func (pb *phaseBook[K]) spread(u []float64, reach float64) []float64 {
	n := len(u)
	step := 1 / float64(n)
	var first float64
	if arc := (u[n-1] - u[0] + 2*reach) / float64(n-1); arc < step {
		step, first = arc, u[0]-reach
	} else {
		pb.settled = true
		sum := 0.0
		for _, x := range u {
			sum += x
		}
		first = sum/float64(n) - step*float64(n-1)/2
	}
	next := make([]float64, n)
	for i := range next {
		next[i] = first + float64(i)*step
	}
	return next
}

// joinLocked makes the watch a member of group at interval every, leaving
// the group it was in, and returns the book of every.
func (b *phases[K]) joinLocked(key K, group uint64, every time.Duration) *phaseBook[K] {
	if prev, ok := b.member[key]; ok && (prev != every || b.books[prev].of[key] != group) {
		b.removeLocked(key)
	}
	book := b.books[every]
	if book == nil {
		book = &phaseBook[K]{of: map[K]uint64{}, count: map[uint64]int{}, at: map[uint64]float64{},
			began: map[uint64]time.Time{}, round: map[uint64]int{}}
		b.books[every] = book
	}
	if _, ok := book.of[key]; !ok {
		book.count[group]++
		book.of[key] = group
		b.member[key] = every
	}
	return book
}

// Forget removes a watch that went away.
func (b *phases[K]) Forget(key K) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removeLocked(key)
}

func (b *phases[K]) removeLocked(key K) {
	every, ok := b.member[key]
	if !ok {
		return
	}
	book := b.books[every]
	group := book.of[key]
	book.count[group]--
	if book.count[group] == 0 {
		delete(book.count, group)
		if _, placed := book.at[group]; placed {
			delete(book.at, group)
			delete(book.began, group)
			delete(book.round, group)
			book.stale = true // the others close the gap
		}
	}
	delete(book.of, key)
	delete(b.member, key)
	if len(book.of) == 0 {
		delete(b.books, every)
	}
}
