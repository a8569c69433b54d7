package cloudapi

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimit is a client-side limit on the calls made with one credential:
// at most Requests calls in any window of length Per, and at most Burst calls
// back to back (the rest are spread evenly over Per). Requests <= 0 disables
// the limit.
type RateLimit struct {
	Requests int
	Per      time.Duration
	Burst    int
}

func (l RateLimit) enabled() bool { return l.Requests > 0 && l.Per > 0 }

// windowLimiter enforces a RateLimit. A token bucket alone would not do: with
// a burst of 10 and a rate of 1/s, 19 calls can fall into one 10 s window,
// which trips a service that allows "10 per 10 seconds". So the bucket spaces
// calls out and a sliding window of the last Requests send times caps them.
type windowLimiter struct {
	per    time.Duration
	size   int
	sent   []time.Time // send times, oldest first, at most size of them
	bucket *rate.Limiter
}

func newWindowLimiter(l RateLimit) *windowLimiter {
	burst := l.Burst
	if burst <= 0 || burst > l.Requests {
		burst = l.Requests
	}
	return &windowLimiter{
		per:    l.Per,
		size:   l.Requests,
		bucket: rate.NewLimiter(rate.Every(l.Per/time.Duration(l.Requests)), burst),
	}
}

// reserve returns the delay after now at which one more call may go. When
// maxWait >= 0 and the delay would exceed it, nothing is reserved and ok is
// false. Callers hold the credential's lock.
func (w *windowLimiter) reserve(now time.Time, maxWait time.Duration) (delay time.Duration, ok bool) {
	r := w.bucket.ReserveN(now, 1)
	if !r.OK() {
		return 0, false
	}
	delay = r.DelayFrom(now)
	if len(w.sent) == w.size {
		delay = max(delay, w.sent[0].Add(w.per).Sub(now))
	}
	if maxWait >= 0 && delay > maxWait {
		r.CancelAt(now)
		return delay, false
	}
	// A reservation is never given back, even if the caller then gives up:
	// erring on the side of fewer calls is what the limit is for.
	if len(w.sent) == w.size {
		w.sent = w.sent[1:]
	}
	w.sent = append(w.sent, now.Add(delay))
	return delay, true
}

// idle reports whether forgetting this limiter changes nothing: the window is
// empty and the bucket is full.
func (w *windowLimiter) idle(now time.Time) bool {
	if n := len(w.sent); n > 0 && now.Sub(w.sent[n-1]) < w.per {
		return false
	}
	return w.bucket.TokensAt(now) >= float64(w.bucket.Burst())
}

// credState is what the client remembers about one credential on one API.
type credState struct {
	mu           sync.Mutex
	limiter      *windowLimiter // nil when the limit is disabled
	blockedUntil time.Time      // from the last 429's Retry-After
	lastUsed     time.Time      // guarded by credStore.mu
}

// credStore maps credential digests to their state and evicts idle entries.
type credStore struct {
	mu        sync.Mutex
	states    map[credKey]*credState
	lastSweep time.Time
}

// Entries idle for longer than idleTTL are dropped on the next sweep, which
// runs at most every sweepEvery; both are far longer than any sane limit
// window, and idle() double-checks the limiter.
const (
	idleTTL    = time.Hour
	sweepEvery = 10 * time.Minute
)

// get returns the state for key, creating it with limit if needed.
func (s *credStore) get(key credKey, limit RateLimit, now time.Time) *credState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.states == nil {
		s.states = map[credKey]*credState{}
	}
	if now.Sub(s.lastSweep) >= sweepEvery {
		s.sweep(now)
	}
	st, ok := s.states[key]
	if !ok {
		st = &credState{}
		if limit.enabled() {
			st.limiter = newWindowLimiter(limit)
		}
		s.states[key] = st
	}
	st.lastUsed = now
	return st
}

// sweep drops entries that have been idle long enough that forgetting them
// cannot let a call through that would have been held back.
func (s *credStore) sweep(now time.Time) {
	s.lastSweep = now
	for k, st := range s.states {
		if now.Sub(st.lastUsed) < idleTTL {
			continue
		}
		st.mu.Lock()
		drop := !now.Before(st.blockedUntil) && (st.limiter == nil || st.limiter.idle(now))
		st.mu.Unlock()
		if drop {
			delete(s.states, k)
		}
	}
}

// len returns the number of credentials remembered; for tests.
func (s *credStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.states)
}
