package readrunner

import (
	"context"
	"fmt"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/servicewatch/servicewatch/internal/egress"
	"github.com/servicewatch/servicewatch/internal/pacing"
)

// Runner runs the reads asked of it in the background, one at most per
// key. It is a manager.Runnable: the reads live in the context the manager
// starts it with, not in the reconcile that asked for them, and end when
// the manager stops.
type Runner[K comparable, R any] struct {
	pool *pool
	// timeout bounds one read, slot waits included.
	timeout time.Duration
	// requests are the reads asked for, which Start runs.
	requests chan queuedRead[K, R]
	// wake tells of a key whose read ended.
	wake chan event.TypedGenericEvent[K]

	mu      sync.Mutex
	running map[K]*inflight
	done    map[K]ended[R]
}

// Request is one read to run in the background.
type Request[K comparable, R any] struct {
	// Key is what the read is for; a key has one read at most.
	Key K
	// Tenant and Level are what the read asks slots as; the host is each
	// call's (Slots.Hold).
	Tenant string
	Level  pacing.Level
	// Read reads, holding each host's slot of slots while it calls that
	// host.
	Read func(ctx context.Context, slots *Slots) R
	// Interrupted is the read's result when Read does not return one: it
	// panicked, or its context ended before it was granted any slot.
	Interrupted R
}

// Ended is a read that ended and waits to be taken.
type Ended[R any] struct {
	// Result is what Read returned, or the request's Interrupted.
	Result R
	// StartedAt is when the read began (its first call then waits for its
	// host's slot only if the host is busy); EndedAt when it ended.
	StartedAt, EndedAt time.Time
}

// ended is an Ended with the level its wake is served at.
type ended[R any] struct {
	Ended[R]
	level pacing.Level
}

// queuedRead is a read asked for, with its entry in Runner.running.
type queuedRead[K comparable, R any] struct {
	Request[K, R]
	inflight *inflight
}

// inflight is a read asked for and not yet ended. A key forgotten meanwhile
// cancels it, so that its goroutine, its connections and the values it holds
// go at once, not at the timeout.
type inflight struct {
	// cancel ends the read's context; nil until the read has begun.
	cancel context.CancelFunc
	// forgotten: the key went away; the read must not begin, and its end is
	// neither recorded nor woken.
	forgotten bool
}

// queued bounds the reads asked for and not yet begun, and the wakes not
// yet taken by the controller, before a caller waits.
const queued = 1024

// New returns a runner whose reads take slots within limits and last at
// most timeout; now stamps them, and slotWait learns how long each read
// waited for each slot.
func New[K comparable, R any](limits SlotLimits, timeout time.Duration, now func() time.Time, slotWait func(pacing.Level, time.Duration)) *Runner[K, R] {
	return &Runner[K, R]{
		pool:     &pool{slots: newSlotQueue(limits), slotWait: slotWait, now: now},
		timeout:  timeout,
		requests: make(chan queuedRead[K, R], queued),
		wake:     make(chan event.TypedGenericEvent[K], queued),
		running:  map[K]*inflight{},
		done:     map[K]ended[R]{},
	}
}

// Wake tells of each key whose read ended, for source.Channel.
func (r *Runner[K, R]) Wake() <-chan event.TypedGenericEvent[K] { return r.wake }

// Take returns the key's ended read, if there is one, and forgets it.
func (r *Runner[K, R]) Take(key K) (Ended[R], bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, ok := r.done[key]
	delete(r.done, key)
	return res.Ended, ok
}

// Busy tells whether a read of the key is under way.
func (r *Runner[K, R]) Busy(key K) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running[key] != nil
}

// Level is the level of the work the key's ended read was for, which its
// wake is served at; pacing.User when none waits, so that a wake is never
// served later than the work it might be for.
func (r *Runner[K, R]) Level(key K) pacing.Level {
	r.mu.Lock()
	defer r.mu.Unlock()
	if res, ok := r.done[key]; ok {
		return res.level
	}
	return pacing.User
}

// Waiting is how many reads of level l wait for a slot.
func (r *Runner[K, R]) Waiting(l pacing.Level) int { return r.pool.slots.Waiting(l) }

// Forget drops what is known of a key that went away: a read under way is
// canceled and ends unheard, one still waiting to begin never does.
func (r *Runner[K, R]) Forget(key K) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.done, key)
	if in := r.running[key]; in != nil {
		in.forgotten = true
		if in.cancel != nil {
			in.cancel()
		}
		delete(r.running, key)
	}
}

// Run asks for req's read to run in the background; reads of a higher level
// get slots first. Until Start runs, the requests wait; ctx (the caller's)
// bounds that wait.
func (r *Runner[K, R]) Run(ctx context.Context, req Request[K, R]) {
	in := &inflight{}
	r.mu.Lock()
	r.running[req.Key] = in
	r.mu.Unlock()
	select {
	case r.requests <- queuedRead[K, R]{Request: req, inflight: in}:
	case <-ctx.Done():
		r.mu.Lock()
		if r.running[req.Key] == in {
			delete(r.running, req.Key)
		}
		r.mu.Unlock()
	}
}

// Start runs the reads asked for until ctx ends; it makes the runner a
// manager.Runnable.
func (r *Runner[K, R]) Start(ctx context.Context) error {
	for {
		select {
		case req := <-r.requests:
			go r.run(ctx, req)
		case <-ctx.Done():
			return nil
		}
	}
}

// run runs one read within ctx and the timeout, and records its end.
func (r *Runner[K, R]) run(ctx context.Context, req queuedRead[K, R]) {
	res := ended[R]{Ended: Ended[R]{Result: req.Interrupted}, level: req.Level}
	readCtx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	in := req.inflight
	r.mu.Lock()
	in.cancel = cancel
	if in.forgotten { // forgotten while it waited to begin
		cancel()
	}
	r.mu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			// A bug in a read must not take the manager down with it: the
			// read ends as interrupted.
			log.FromContext(ctx).Error(nil, "a background read panicked", "panic", p)
			res.Result = req.Interrupted
		}
		res.EndedAt = r.pool.now()
		r.finish(ctx, req.Key, in, res)
	}()
	slots := r.pool.forRead(SlotAsk{Tenant: req.Tenant, Level: req.Level})
	res.StartedAt = r.pool.now()
	result := req.Read(readCtx, slots)
	if readCtx.Err() != nil && !slots.wasGranted() {
		return // no slot before the end: the read ends as interrupted
	}
	res.Result = result
}

// finish records an ended read and wakes its key, unless the manager is
// stopping or the key was forgotten meanwhile.
func (r *Runner[K, R]) finish(ctx context.Context, key K, in *inflight, res ended[R]) {
	r.mu.Lock()
	if in.forgotten {
		r.mu.Unlock()
		return
	}
	delete(r.running, key)
	r.done[key] = res
	r.mu.Unlock()
	select {
	case r.wake <- event.TypedGenericEvent[K]{Object: key}:
	case <-ctx.Done():
	}
}

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
