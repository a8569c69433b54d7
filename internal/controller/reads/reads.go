package reads

import (
	"context"
	"errors"
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

// NewRunner returns a runner whose reads take slots within limits and last at
// most timeout; now stamps them, and slotWait learns how long each read
// waited for each slot.
func NewRunner[K comparable, R any](limits SlotLimits, timeout time.Duration, now func() time.Time, slotWait func(pacing.Level, time.Duration)) *Runner[K, R] {
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

// ExpectFor is how long a read admitted for one caller holds back the
// others that would make it too: it begins within moments, unless it waits
// for something else or never comes; the others then make a call of their
// own.
const ExpectFor = time.Second

// Shared are the calls of the last few moments, by key. The zero value is
// not usable: see NewShared. A nil *Shared shares nothing.
type Shared[K comparable] struct {
	freshness time.Duration
	now       func() time.Time
	// answered tells whether a failure is the source's answer (see NewShared).
	answered func(error) bool

	mu    sync.Mutex
	calls map[K]*call
	// expected are the reads admitted that have not begun yet (see
	// Expecting), by when they were admitted.
	expected map[K]time.Time
	// swept is when finished calls were last evicted.
	swept time.Time
}

// call is one call that several reads may wait for.
type call struct {
	// done closes when the call ends; value and err are set before.
	done  chan struct{}
	value any
	err   error

	// Guarded by Shared.mu.
	ended    bool
	endedAt  time.Time
	reusable bool
	// joined counts the reads that joined the call under way.
	joined int
	// keepFor is the longest maxAge a read of the call asked for (see
	// DoWithin): the sweep keeps it that long.
	keepFor time.Duration
}

// NewShared returns reads that reuse a finished call for freshness, by the clock
// now. answered tells whether a failure is the source's own answer to the
// call, which is reused like a result (asking again within seconds would
// only get the same answer); a failure of the caller's own making (a refused
// admission, say) is not. The end of the leader's context and a panic are
// never reused, whatever answered says.
func NewShared[K comparable](freshness time.Duration, now func() time.Time, answered func(error) bool) *Shared[K] {
	return &Shared[K]{freshness: freshness, now: now, answered: answered, calls: map[K]*call{}, expected: map[K]time.Time{}}
}

// PanicError is a panic of a shared read, as an error for every read that
// waited for it: a bug that one answer triggers fails those reads, it must
// neither stop the process nor leave them waiting.
type PanicError struct {
	// Value is what the read panicked with.
	Value any
}

// Error says what the read panicked with.
func (p *PanicError) Error() string {
	return fmt.Sprintf("a shared read panicked: %v", p.Value)
}

// Do returns what fetch returns for key, calling it only when no other read
// of key is under way and, unless fresh, none ended within the freshness
// window. The call runs in the caller that starts it, under its ctx; the
// others wait for its end or their own ctx. A panic in fetch is a
// *PanicError for all of them. A nil s shares nothing.
//
// Every read of one key must ask for the same T: a call made for one type
// reads as the zero T to a caller of another.
func Do[K comparable, T any](ctx context.Context, s *Shared[K], key K, fresh bool, fetch func(context.Context) (T, error)) (T, error) {
	maxAge := time.Duration(0)
	if fresh {
		maxAge = -1
	}
	return DoWithin(ctx, s, key, maxAge, fetch)
}

// DoWithin is Do for a read whose finished call may be reused while it is
// younger than maxAge, when that is longer than the freshness window: a
// list that watches on one host and credential read at their intervals, so
// that a hundred of them spread over their interval cost one call per
// interval, not one per freshness window. A negative maxAge is Do's fresh:
// only a call under way is joined. The call stays reusable as long as the
// longest maxAge any read of it asked for.
func DoWithin[K comparable, T any](ctx context.Context, s *Shared[K], key K, maxAge time.Duration, fetch func(context.Context) (T, error)) (T, error) {
	var zero T
	if s == nil {
		return fetch(ctx)
	}
	c, lead := s.join(key, maxAge)
	if lead {
		value, err := recovered(ctx, fetch)
		s.finish(key, c, value, err, s.isReusable(ctx, err))
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return zero, fmt.Errorf("waiting for a read shared with other watches: %w", ctx.Err())
	}
	if c.err != nil {
		return zero, c.err
	}
	value, _ := c.value.(T) // a kind of read always has the same type
	return value, nil
}

// recovered runs fetch, turning a panic into a *PanicError.
func recovered[T any](ctx context.Context, fetch func(context.Context) (T, error)) (value any, err error) {
	defer func() {
		if p := recover(); p != nil {
			value, err = nil, &PanicError{Value: p}
		}
	}()
	return fetch(ctx)
}

// isReusable tells whether a finished call is the source's answer, which
// other reads may reuse within the freshness window.
func (s *Shared[K]) isReusable(ctx context.Context, err error) bool {
	if err == nil {
		return true
	}
	_, panicked := errors.AsType[*PanicError](err)
	return ctx.Err() == nil && !panicked && s.answered(err)
}

// join returns the call a read of key waits for, and whether the caller must
// make it (lead).
func (s *Shared[K]) join(key K, maxAge time.Duration) (*call, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.sweepLocked(now)
	if c := s.calls[key]; c != nil && (!c.ended || (maxAge >= 0 && s.youngerLocked(c, now, maxAge))) {
		if !c.ended {
			c.joined++
		}
		c.keepFor = max(c.keepFor, maxAge)
		return c, false
	}
	c := &call{done: make(chan struct{}), keepFor: maxAge}
	s.calls[key] = c
	delete(s.expected, key)
	return c, true
}

// Expect records that a read of key was admitted (its call reserved) and
// is about to begin.
func (s *Shared[K]) Expect(key K) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expected[key] = s.now()
}

// Expecting tells whether a read of key was admitted within ExpectFor and
// has not begun yet (callers ask when Covers is false). Callers due
// together are served side by side: without it, the second one admitted
// before the first one's read had begun saw nothing to share, asked its
// budget for the same call, and was refused or made it twice; refused, it
// waited its place in the budget's line, came back after the first one's
// answer was stale, and from then on its group's reads went out twice each
// round.
func (s *Shared[K]) Expecting(key K) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.expected[key]
	// The read that begins deletes its expectation (see join).
	return ok && s.now().Sub(at) < ExpectFor
}

// Covers tells whether a read of key made now would be answered without a
// call of its own, by a read under way or one fresh enough: an admission
// need reserve nothing for it.
func (s *Shared[K]) Covers(key K) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls[key]
	return c != nil && (!c.ended || s.freshLocked(c, s.now()))
}

// CoversWithin is Covers for a read that DoWithin makes with maxAge.
func (s *Shared[K]) CoversWithin(key K, maxAge time.Duration) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls[key]
	return c != nil && (!c.ended || s.youngerLocked(c, s.now(), maxAge))
}

// finish records the end of c, which the caller led, and wakes the reads
// that wait for it.
func (s *Shared[K]) finish(key K, c *call, value any, err error, reusable bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.value, c.err = value, err
	c.ended, c.endedAt, c.reusable = true, s.now(), reusable
	if !reusable && s.calls[key] == c {
		delete(s.calls, key)
	}
	close(c.done)
}

func (s *Shared[K]) freshLocked(c *call, now time.Time) bool {
	return s.youngerLocked(c, now, 0)
}

// youngerLocked tells whether c ended reusable less than the freshness
// window, or maxAge when longer, ago. A failure is reused for the freshness
// window only: the retry of a watch that got it must call again.
func (s *Shared[K]) youngerLocked(c *call, now time.Time, maxAge time.Duration) bool {
	if c.err != nil {
		maxAge = 0
	}
	return c.ended && c.reusable && now.Sub(c.endedAt) < max(s.freshness, maxAge)
}

// sweepLocked evicts the finished calls that can no longer be reused, at
// most once per freshness window, so the map holds only the reads of the
// last few seconds, however many callers come and go.
func (s *Shared[K]) sweepLocked(now time.Time) {
	if now.Sub(s.swept) < s.freshness {
		return
	}
	for key, c := range s.calls {
		if c.ended && !s.youngerLocked(c, now, c.keepFor) {
			delete(s.calls, key)
		}
	}
	for key, at := range s.expected {
		if now.Sub(at) >= ExpectFor {
			delete(s.expected, key)
		}
	}
	s.swept = now
}
