package pacing

import (
	"context"
	"slices"
	"sync"
)

// Slots is a counting semaphore whose waiters are served by work level,
// highest first, and in arrival order within a level: work a user asked for
// before a Secret's change, both before periodic refreshes. It bounds how
// many cloud reads run at once.
type Slots struct {
	mu      sync.Mutex
	free    int
	waiting [Levels][]chan struct{}
}

// NewSlots returns n slots (at least one).
func NewSlots(n int) *Slots { return &Slots{free: max(1, n)} }

// Acquire takes a slot, waiting behind the waiters of its level and the
// levels above, until ctx ends.
func (s *Slots) Acquire(ctx context.Context, level Level) error {
	s.mu.Lock()
	if s.free > 0 && !s.waitersFrom(level) {
		s.free--
		s.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	s.waiting[level] = append(s.waiting[level], ch)
	s.mu.Unlock()

	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		waiting := s.remove(ch)
		s.mu.Unlock()
		if !waiting { // granted meanwhile: hand the slot on
			s.Release()
		}
		return ctx.Err()
	}
}

// waitersFrom tells whether anyone waits at level or above.
func (s *Slots) waitersFrom(level Level) bool {
	for l := level; l < Levels; l++ {
		if len(s.waiting[l]) > 0 {
			return true
		}
	}
	return false
}

// Release frees a slot, handing it to the first waiter of the highest level
// that has one.
func (s *Slots) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := Levels - 1; l >= 0; l-- {
		if q := s.waiting[l]; len(q) > 0 {
			close(q[0])
			s.waiting[l] = q[1:]
			return
		}
	}
	s.free++
}

// remove drops a waiter that gave up; false when it was not waiting any more.
func (s *Slots) remove(ch chan struct{}) bool {
	for l := range s.waiting {
		if i := slices.Index(s.waiting[l], ch); i >= 0 {
			s.waiting[l] = slices.Delete(s.waiting[l], i, i+1)
			return true
		}
	}
	return false
}

// HostSlots bounds the cloud reads in flight per API host and in all, so
// that a host that hangs can hold at most its own share: reads of other hosts
// still find slots.
type HostSlots struct {
	perHost int
	all     *Slots
	mu      sync.Mutex
	hosts   map[string]*hostEntry
}

type hostEntry struct {
	slots *Slots
	users int // acquirers holding or waiting: the entry goes when none is left
}

// NewHostSlots bounds the reads to perHost per host and all in all.
func NewHostSlots(perHost, all int) *HostSlots {
	return &HostSlots{perHost: max(1, perHost), all: NewSlots(all), hosts: map[string]*hostEntry{}}
}

// Acquire takes a slot of each host (in a fixed order, so two reads of the
// same hosts never wait on each other) and then one of the total. The
// returned function releases them all.
func (h *HostSlots) Acquire(ctx context.Context, hosts []string, level Level) (func(), error) {
	hosts = slices.Compact(slices.Sorted(slices.Values(hosts)))
	var held []string
	releaseHosts := func() {
		for _, host := range held {
			h.put(host)
		}
	}
	for _, host := range hosts {
		if err := h.get(host).Acquire(ctx, level); err != nil {
			h.drop(host)
			releaseHosts()
			return nil, err
		}
		held = append(held, host)
	}
	if err := h.all.Acquire(ctx, level); err != nil {
		releaseHosts()
		return nil, err
	}
	return func() {
		h.all.Release()
		releaseHosts()
	}, nil
}

// get returns the host's slots, counting one more user.
func (h *HostSlots) get(host string) *Slots {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.hosts[host]
	if e == nil {
		e = &hostEntry{slots: NewSlots(h.perHost)}
		h.hosts[host] = e
	}
	e.users++
	return e.slots
}

// put releases a held slot of the host.
func (h *HostSlots) put(host string) {
	h.mu.Lock()
	e := h.hosts[host]
	h.mu.Unlock()
	e.slots.Release()
	h.drop(host)
}

// drop counts one user less, forgetting the host when it has none.
func (h *HostSlots) drop(host string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e := h.hosts[host]; e != nil {
		e.users--
		if e.users == 0 {
			delete(h.hosts, host)
		}
	}
}

// Waiting counts the reads waiting at level, for a host's slots or the
// total's.
func (h *HostSlots) Waiting(level Level) int {
	h.mu.Lock()
	entries := make([]*Slots, 0, len(h.hosts)+1)
	for _, e := range h.hosts {
		entries = append(entries, e.slots)
	}
	h.mu.Unlock()
	n := 0
	for _, s := range append(entries, h.all) {
		s.mu.Lock()
		n += len(s.waiting[level])
		s.mu.Unlock()
	}
	return n
}
