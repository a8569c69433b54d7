package readrunner

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/servicewatch/servicewatch/internal/egress"
	"github.com/servicewatch/servicewatch/internal/pacing"
)

// pool is what the slots of every read share.
type pool struct {
	slots *slotQueue
	// slotWait learns how long each read waited for each of its slots.
	slotWait func(pacing.Level, time.Duration)
	now      func() time.Time
}

// forRead returns the slots of one read, which asks as ask.
func (p *pool) forRead(ask SlotAsk) *Slots {
	return &Slots{pool: p, ask: ask, hosts: map[string]*hostHold{}}
}

// Slots are the slots of one read: it holds a host's slot while it calls
// that host, and only then. Its calls to one host at once share one slot,
// so that the slots count reads calling a host; when its last call to a
// host ends, the slot goes back, and the read never holds one while it
// waits for another host (issue 17: three watches whose alert API hung held
// the shared management host's slots for the whole sync timeout).
type Slots struct {
	pool *pool
	// ask is the read's tenant and level; the host is each call's.
	ask SlotAsk

	mu      sync.Mutex
	hosts   map[string]*hostHold
	granted bool
}

// hostHold is a read's slot of one host, shared by its calls to the host.
type hostHold struct {
	users int
	// ready is closed when the slot is granted or refused (err).
	ready   chan struct{}
	err     error
	release func()
}

// Hold takes the slot of baseURL's host for a call, or shares the one the
// read holds for it already, waiting until ctx ends. The returned function
// ends the call's share.
func (s *Slots) Hold(ctx context.Context, baseURL string) (func(), error) {
	// Slots count hosts as budgets and the egress guard do: one host
	// however its URL spells it (API.example.com:443, api.example.com).
	host := egress.HostKeyFromURL(baseURL)
	s.mu.Lock()
	h := s.hosts[host]
	first := h == nil
	if first {
		h = &hostHold{ready: make(chan struct{})}
		s.hosts[host] = h
	}
	h.users++
	s.mu.Unlock()

	if first {
		s.acquire(ctx, host, h)
	}
	select {
	case <-h.ready:
	case <-ctx.Done():
		s.leave(host, h)
		return nil, fmt.Errorf("waiting for a read slot of %s: %w", host, ctx.Err())
	}
	if h.err != nil {
		s.leave(host, h)
		return nil, fmt.Errorf("waiting for a read slot of %s: %w", host, h.err)
	}
	return func() { s.leave(host, h) }, nil
}

// acquire asks the pool's slots for the host's slot, and tells h's users.
func (s *Slots) acquire(ctx context.Context, host string, h *hostHold) {
	ask := s.ask
	ask.Host = host
	asked := s.pool.now()
	release, err := s.pool.slots.Acquire(ctx, ask)
	if err == nil {
		s.pool.slotWait(ask.Level, s.pool.now().Sub(asked))
	}
	s.mu.Lock()
	h.release, h.err = release, err
	if err == nil {
		s.granted = true
	} else if s.hosts[host] == h {
		delete(s.hosts, host) // a later call asks anew
	}
	s.mu.Unlock()
	close(h.ready)
}

// leave ends a call's share of h; the last one gives the slot back.
func (s *Slots) leave(host string, h *hostHold) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h.users--
	if h.users > 0 {
		return
	}
	if s.hosts[host] == h {
		delete(s.hosts, host)
	}
	if h.release != nil {
		h.release()
	}
}

// wasGranted tells whether the read held a slot at all.
func (s *Slots) wasGranted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.granted
}
