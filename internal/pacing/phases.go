package pacing

import (
	"slices"
	"sync"
	"time"
)

// Phases spreads the periodic syncs of the watches of one interval evenly
// over it. Watches are grouped by what they read (the controller names the
// group by a hash of the service and the API it is read at), the groups are
// ranked by that hash, and the group of rank i of n syncs at offset
// i×interval/n. Watches of one group sync together, so the reads they share
// are made once; different groups spread out. A random phase per watch (as
// Prometheus offsets scrapes per target) would leave clusters of about √n:
// 200 watches of 30s would put twice the mean load in their busiest second;
// ranks leave at most one sync more than the mean. A phase moves a little
// when groups come and go, which only shifts one slot of each by a fraction
// of the interval.
type Phases[K comparable] struct {
	mu     sync.Mutex
	groups map[time.Duration]*phaseGroup[K]
	member map[K]time.Duration
}

// phaseGroup is the watches of one interval.
type phaseGroup[K comparable] struct {
	ranks []uint64 // the distinct group hashes, sorted
	count map[uint64]int
	of    map[K]uint64
}

// NewPhases returns an empty book.
func NewPhases[K comparable]() *Phases[K] {
	return &Phases[K]{groups: map[time.Duration]*phaseGroup[K]{}, member: map[K]time.Duration{}}
}

// PhaseOf is the offset within every of the watch of the given group.
func (b *Phases[K]) PhaseOf(key K, group uint64, every time.Duration) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if prev, ok := b.member[key]; ok && (prev != every || b.groups[prev].of[key] != group) {
		b.removeLocked(key)
	}
	g := b.groups[every]
	if g == nil {
		g = &phaseGroup[K]{count: map[uint64]int{}, of: map[K]uint64{}}
		b.groups[every] = g
	}
	if _, ok := g.of[key]; !ok {
		if g.count[group] == 0 {
			i, _ := slices.BinarySearch(g.ranks, group)
			g.ranks = slices.Insert(g.ranks, i, group)
		}
		g.count[group]++
		g.of[key] = group
		b.member[key] = every
	}
	rank, _ := slices.BinarySearch(g.ranks, group)
	return time.Duration(int64(every) / int64(len(g.ranks)) * int64(rank))
}

// Forget removes a watch that went away.
func (b *Phases[K]) Forget(key K) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removeLocked(key)
}

func (b *Phases[K]) removeLocked(key K) {
	every, ok := b.member[key]
	if !ok {
		return
	}
	g := b.groups[every]
	h := g.of[key]
	g.count[h]--
	if g.count[h] == 0 {
		delete(g.count, h)
		if i, found := slices.BinarySearch(g.ranks, h); found {
			g.ranks = slices.Delete(g.ranks, i, i+1)
		}
	}
	delete(g.of, key)
	delete(b.member, key)
	if len(g.ranks) == 0 {
		delete(b.groups, every)
	}
}
