package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// sharedFreshness is how long a finished read is reused by the other watches
// that read the same thing. Watches of one service sync at the same phase
// (phaseBook), so the reads of a group start within the jitter (at most 1 s)
// plus the time the workers take to reach each of them: 3 s covers that.
// It stays under backoffBase, so the retry after a transient failure always
// calls again, and at a tenth of the shortest interval (minInterval), so a
// shared result is never much older than a watch's own read would have been.
const sharedFreshness = 3 * time.Second

// readKey names one read exactly. Two reads share a call only when every
// input of the call is equal, the credential included by its full digest: a
// tenant must never see data read with another tenant's credential, and
// truncation must not depend on who read first.
type readKey struct {
	// kind is what is read (pipesReadKind...).
	kind string
	// url is the API's base URL as the watch names it, unnormalized.
	url            string
	credential     cloudapi.CredentialDigest
	organizationID string
	serviceID      string
	alertID        string
	// keepBytes is the list's size bound, for the lists.
	keepBytes int
}

// The kinds of reads.
const (
	pipesReadKind     = "pipes"
	endpointsReadKind = "reverse_private_endpoints"
	alertReadKind     = "alert"
)

// sharedReads lets the watches that read the same thing at about the same
// time share one call: a read under way is joined, and a finished one is
// reused for a short while (freshness). It is the reconciler's: every read
// it holds was made with a credential the watches that share it hold too.
type sharedReads struct {
	freshness time.Duration
	now       func() time.Time

	mu    sync.Mutex
	calls map[readKey]*sharedCall
	// expected are the reads admitted for a watch that have not begun yet
	// (see expecting), by when they were admitted.
	expected map[readKey]time.Time
	// swept is when finished calls were last evicted.
	swept time.Time
}

// expectFor is how long a read admitted for one watch holds back the others
// that would make it too: it begins within moments (the watch reads its
// Secrets from the cache, then starts its reads), unless it waits for a
// read slot or never comes; the others then ask for a call of their own.
const expectFor = time.Second

// expectRetry is how soon a watch whose read another watch was just admitted
// for looks again: by then that read has begun, and the watch joins it.
const expectRetry = 100 * time.Millisecond

// sharedCall is one call that several reads may wait for.
type sharedCall struct {
	// done closes when the call ends; value and err are set before.
	done  chan struct{}
	value any
	err   error

	// Guarded by sharedReads.mu.
	ended    bool
	endedAt  time.Time
	reusable bool
	// joined counts the reads that joined the call under way (tests wait
	// for them).
	joined int
}

func newSharedReads(freshness time.Duration, now func() time.Time) *sharedReads {
	return &sharedReads{freshness: freshness, now: now, calls: map[readKey]*sharedCall{}, expected: map[readKey]time.Time{}}
}

// readPanicError is a panic of a shared read, as an error for every read that
// waited for it: a bug that one answer triggers fails those reads, it must
// neither stop the manager nor leave them waiting.
type readPanicError struct{ value any }

func (p *readPanicError) Error() string {
	return fmt.Sprintf("reading the cloud failed inside the operator (a bug: please report it): %v", p.value)
}

// budgetRefusalError is a read that admission left to a shared read which was
// gone when the read ran, and whose own call the budget then refused: it
// waits for a later sync rather than call without admission.
type budgetRefusalError struct {
	api  string
	wait time.Duration
}

func (b *budgetRefusalError) Error() string {
	return fmt.Sprintf("waiting %s for room in the %s API's rate budget", b.wait.Round(time.Second), b.api)
}

// shareRead returns what fetch returns for key, calling it only when no
// other read of key is under way and, unless fresh, none ended within the
// freshness window. The call runs in the caller that starts it, under its
// ctx; the others wait for its end or their own ctx. A panic in fetch is an
// error for all of them. A nil s shares nothing.
//
// Failures are shared like results: they are the cloud's answer to this
// exact request, and asking again within seconds would only spend the budget
// on the same answer (a 429 or a 5xx more so). What is not the cloud's answer
// is never reused: the end of the caller's ctx, a panic, a refused admission.
func shareRead[T any](ctx context.Context, s *sharedReads, key readKey, fresh bool, fetch func(context.Context) (T, error)) (T, error) {
	var zero T
	if s == nil {
		return fetch(ctx)
	}
	call, lead := s.join(key, fresh)
	if lead {
		value, err := recovered(ctx, fetch)
		s.finish(key, call, value, err, isReusable(ctx, err))
	}
	select {
	case <-call.done:
	case <-ctx.Done():
		return zero, fmt.Errorf("waiting for a read shared with other watches: %w", ctx.Err())
	}
	if call.err != nil {
		return zero, call.err
	}
	value, _ := call.value.(T) // a kind of read always has the same type
	return value, nil
}

// recovered runs fetch, turning a panic into a readPanicError.
func recovered[T any](ctx context.Context, fetch func(context.Context) (T, error)) (value any, err error) {
	defer func() {
		if p := recover(); p != nil {
			value, err = nil, &readPanicError{value: p}
		}
	}()
	return fetch(ctx)
}

// isReusable tells whether a finished call is the cloud's answer, which other
// reads may reuse within the freshness window.
func isReusable(ctx context.Context, err error) bool {
	if err == nil {
		return true
	}
	_, panicked := errors.AsType[*readPanicError](err)
	_, refused := errors.AsType[*budgetRefusalError](err)
	return ctx.Err() == nil && !panicked && !refused
}

// join returns the call a read of key waits for, and whether the caller must
// make it (lead).
func (s *sharedReads) join(key readKey, fresh bool) (*sharedCall, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.sweepLocked(now)
	if c := s.calls[key]; c != nil && (!c.ended || (!fresh && s.freshLocked(c, now))) {
		if !c.ended {
			c.joined++
		}
		return c, false
	}
	c := &sharedCall{done: make(chan struct{})}
	s.calls[key] = c
	delete(s.expected, key)
	return c, true
}

// expect records that a read of key was admitted (its call reserved) and
// is about to begin.
func (s *sharedReads) expect(key readKey) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expected[key] = s.now()
}

// expecting tells whether a read of key was admitted within expectFor and
// has not begun yet (callers ask when covers is false). Watches due together (a group at its slot, a
// fleet at a start) are reconciled side by side: without it, the second
// one admitted before the first one's read had begun saw nothing to share,
// asked the budget for the same call, and was refused or made it twice;
// refused, it waited its place in the budget's line, came back after the
// first one's answer was stale, and from then on its group's reads went
// out twice each round.
func (s *sharedReads) expecting(key readKey) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.expected[key]
	// The read that begins deletes its expectation (see join).
	return ok && s.now().Sub(at) < expectFor
}

// covers tells whether a read of key made now would be answered without a
// call of its own, by a read under way or one fresh enough; admission
// reserves no budget for it.
func (s *sharedReads) covers(key readKey) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls[key]
	return c != nil && (!c.ended || s.freshLocked(c, s.now()))
}

// finish records the end of call, which the caller led, and wakes the reads
// that wait for it.
func (s *sharedReads) finish(key readKey, call *sharedCall, value any, err error, reusable bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	call.value, call.err = value, err
	call.ended, call.endedAt, call.reusable = true, s.now(), reusable
	if !reusable && s.calls[key] == call {
		delete(s.calls, key)
	}
	close(call.done)
}

func (s *sharedReads) freshLocked(c *sharedCall, now time.Time) bool {
	return c.ended && c.reusable && now.Sub(c.endedAt) < s.freshness
}

// sweepLocked evicts the finished calls that can no longer be reused, at
// most once per freshness window, so the map holds only the reads of the
// last few seconds, whatever the number of watches that come and go.
func (s *sharedReads) sweepLocked(now time.Time) {
	if now.Sub(s.swept) < s.freshness {
		return
	}
	for key, c := range s.calls {
		if c.ended && !s.freshLocked(c, now) {
			delete(s.calls, key)
		}
	}
	for key, at := range s.expected {
		if now.Sub(at) >= expectFor {
			delete(s.expected, key)
		}
	}
	s.swept = now
}
