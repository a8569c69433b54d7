package controller

import (
	"context"
	"slices"
	"sync"
)

// slots is a counting semaphore whose waiters are served by work level,
// highest first, and in arrival order within a level: work a user asked for
// before a Secret's change, both before periodic refreshes. It bounds how
// many cloud reads run at once.
type slots struct {
	mu      sync.Mutex
	free    int
	waiting [workLevels][]chan struct{}
}

func newSlots(n int) *slots { return &slots{free: max(1, n)} }

// acquire takes a slot, waiting behind the waiters of its level and the
// levels above, until ctx ends.
func (s *slots) acquire(ctx context.Context, level workLevel) error {
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
			s.release()
		}
		return ctx.Err()
	}
}

// waitersFrom tells whether anyone waits at level or above.
func (s *slots) waitersFrom(level workLevel) bool {
	for l := level; l < workLevels; l++ {
		if len(s.waiting[l]) > 0 {
			return true
		}
	}
	return false
}

// release frees a slot, handing it to the first waiter of the highest level
// that has one.
func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := workLevels - 1; l >= 0; l-- {
		if q := s.waiting[l]; len(q) > 0 {
			close(q[0])
			s.waiting[l] = q[1:]
			return
		}
	}
	s.free++
}

// remove drops a waiter that gave up; false when it was not waiting any more.
func (s *slots) remove(ch chan struct{}) bool {
	for l := range s.waiting {
		if i := slices.Index(s.waiting[l], ch); i >= 0 {
			s.waiting[l] = slices.Delete(s.waiting[l], i, i+1)
			return true
		}
	}
	return false
}

// hostSlots bounds the cloud reads in flight per API host and in all, so
// that a host that hangs can hold at most its own share: reads of other hosts
// still find slots.
type hostSlots struct {
	perHost int
	all     *slots
	mu      sync.Mutex
	hosts   map[string]*hostEntry
}

type hostEntry struct {
	slots *slots
	users int // acquirers holding or waiting: the entry goes when none is left
}

func newHostSlots(perHost, all int) *hostSlots {
	return &hostSlots{perHost: max(1, perHost), all: newSlots(all), hosts: map[string]*hostEntry{}}
}

// acquire takes a slot of each host (in a fixed order, so two reads of the
// same hosts never wait on each other) and then one of the total. The
// returned function releases them all.
func (h *hostSlots) acquire(ctx context.Context, hosts []string, level workLevel) (func(), error) {
	hosts = slices.Compact(slices.Sorted(slices.Values(hosts)))
	var held []string
	releaseHosts := func() {
		for _, host := range held {
			h.put(host)
		}
	}
	for _, host := range hosts {
		if err := h.get(host).acquire(ctx, level); err != nil {
			h.drop(host)
			releaseHosts()
			return nil, err
		}
		held = append(held, host)
	}
	if err := h.all.acquire(ctx, level); err != nil {
		releaseHosts()
		return nil, err
	}
	return func() {
		h.all.release()
		releaseHosts()
	}, nil
}

// get returns the host's slots, counting one more user.
func (h *hostSlots) get(host string) *slots {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.hosts[host]
	if e == nil {
		e = &hostEntry{slots: newSlots(h.perHost)}
		h.hosts[host] = e
	}
	e.users++
	return e.slots
}

// put releases a held slot of the host.
func (h *hostSlots) put(host string) {
	h.mu.Lock()
	e := h.hosts[host]
	h.mu.Unlock()
	e.slots.release()
	h.drop(host)
}

// drop counts one user less, forgetting the host when it has none.
func (h *hostSlots) drop(host string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e := h.hosts[host]; e != nil {
		e.users--
		if e.users == 0 {
			delete(h.hosts, host)
		}
	}
}
