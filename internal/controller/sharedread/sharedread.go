package sharedread

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ExpectFor is how long a read admitted for one caller holds back the
// others that would make it too: it begins within moments, unless it waits
// for something else or never comes; the others then make a call of their
// own.
const ExpectFor = time.Second

// Reads are the calls of the last few moments, by key. The zero value is
// not usable: see New. A nil *Reads shares nothing.
type Reads[K comparable] struct {
	freshness time.Duration
	now       func() time.Time
	// answered tells whether a failure is the source's answer (see New).
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

	// Guarded by Reads.mu.
	ended    bool
	endedAt  time.Time
	reusable bool
	// joined counts the reads that joined the call under way.
	joined int
	// keepFor is the longest maxAge a read of the call asked for (see
	// DoWithin): the sweep keeps it that long.
	keepFor time.Duration
}

// New returns reads that reuse a finished call for freshness, by the clock
// now. answered tells whether a failure is the source's own answer to the
// call, which is reused like a result (asking again within seconds would
// only get the same answer); a failure of the caller's own making (a refused
// admission, say) is not. The end of the leader's context and a panic are
// never reused, whatever answered says.
func New[K comparable](freshness time.Duration, now func() time.Time, answered func(error) bool) *Reads[K] {
	return &Reads[K]{freshness: freshness, now: now, answered: answered, calls: map[K]*call{}, expected: map[K]time.Time{}}
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
func Do[K comparable, T any](ctx context.Context, s *Reads[K], key K, fresh bool, fetch func(context.Context) (T, error)) (T, error) {
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
func DoWithin[K comparable, T any](ctx context.Context, s *Reads[K], key K, maxAge time.Duration, fetch func(context.Context) (T, error)) (T, error) {
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
func (s *Reads[K]) isReusable(ctx context.Context, err error) bool {
	if err == nil {
		return true
	}
	_, panicked := errors.AsType[*PanicError](err)
	return ctx.Err() == nil && !panicked && s.answered(err)
}

// join returns the call a read of key waits for, and whether the caller must
// make it (lead).
func (s *Reads[K]) join(key K, maxAge time.Duration) (*call, bool) {
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
func (s *Reads[K]) Expect(key K) {
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
func (s *Reads[K]) Expecting(key K) bool {
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
func (s *Reads[K]) Covers(key K) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls[key]
	return c != nil && (!c.ended || s.freshLocked(c, s.now()))
}

// CoversWithin is Covers for a read that DoWithin makes with maxAge.
func (s *Reads[K]) CoversWithin(key K, maxAge time.Duration) bool {
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
func (s *Reads[K]) finish(key K, c *call, value any, err error, reusable bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.value, c.err = value, err
	c.ended, c.endedAt, c.reusable = true, s.now(), reusable
	if !reusable && s.calls[key] == c {
		delete(s.calls, key)
	}
	close(c.done)
}

func (s *Reads[K]) freshLocked(c *call, now time.Time) bool {
	return s.youngerLocked(c, now, 0)
}

// youngerLocked tells whether c ended reusable less than the freshness
// window, or maxAge when longer, ago. A failure is reused for the freshness
// window only: the retry of a watch that got it must call again.
func (s *Reads[K]) youngerLocked(c *call, now time.Time, maxAge time.Duration) bool {
	if c.err != nil {
		maxAge = 0
	}
	return c.ended && c.reusable && now.Sub(c.endedAt) < max(s.freshness, maxAge)
}

// sweepLocked evicts the finished calls that can no longer be reused, at
// most once per freshness window, so the map holds only the reads of the
// last few seconds, however many callers come and go.
func (s *Reads[K]) sweepLocked(now time.Time) {
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
