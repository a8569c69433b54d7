package tenancy

import (
	"sync"
	"time"
)

// Defaults for NewWorkShares. A unit of work is about 10 ns of one core (see
// lenient.Work).
const (
	// DefaultWorkRate is the work each namespace earns per second: 10 Mi units,
	// about a tenth of a core. A namespace whose watches read two lists of
	// a thousand real pipes each (14 Mi units a list) every 30 s, the
	// shortest interval, uses a tenth of it; a hostile one, decoding the
	// worst answers back to back, would use ten times its share.
	DefaultWorkRate = 10 << 20
	// DefaultWorkBurst is the most work a namespace can use at once before it
	// waits: 768 Mi units, the default budget of two answers
	// (cloudapi.DefaultDecodeWorkPerByte at the default 16 MiB cap), so
	// that one sync of the largest real lists never waits.
	DefaultWorkBurst = 768 << 20
)

// WorkShares is a token bucket of decode work per namespace. The zero value and
// nil are unbounded: nobody waits. It is safe for concurrent use.
type WorkShares struct {
	rate, burst float64
	now         func() time.Time

	mu sync.Mutex
	// buckets are the namespaces that used work recently; a bucket that
	// has earned its burst back is forgotten, so that the map follows the
	// namespaces that read, not every namespace ever seen.
	buckets map[string]*bucket
}

// bucket is one namespace's work: level units available at at, negative
// when the namespace used more than it had.
type bucket struct {
	level float64
	at    time.Time
}

// NewWorkShares returns WorkShares where each namespace earns rate units of work per
// second, up to burst; now is the clock.
func NewWorkShares(rate, burst float64, now func() time.Time) *WorkShares {
	return &WorkShares{rate: rate, burst: burst, now: now, buckets: map[string]*bucket{}}
}

// Charge counts units of work a read of namespace did. A namespace may go
// into debt: a read's work is only known once it is done.
func (s *WorkShares) Charge(namespace string, units int64) {
	if s == nil || s.rate <= 0 || units <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.refilled(namespace)
	b.level -= float64(units)
	s.buckets[namespace] = b
}

// Wait is how long namespace's next reads must wait before it has earned
// back the work it used beyond its share; 0 when it may read now.
func (s *WorkShares) Wait(namespace string) time.Duration {
	if s == nil || s.rate <= 0 {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.buckets[namespace]; !ok {
		return 0
	}
	b := s.refilled(namespace)
	if b.level >= s.burst {
		delete(s.buckets, namespace) // back to full: nothing to remember
		return 0
	}
	s.buckets[namespace] = b
	if b.level >= 0 {
		return 0
	}
	return time.Duration(-b.level / s.rate * float64(time.Second))
}

// refilled is namespace's bucket with what it earned since it was last
// seen; a new namespace starts full.
func (s *WorkShares) refilled(namespace string) *bucket {
	now := s.now()
	b, ok := s.buckets[namespace]
	if !ok {
		return &bucket{level: s.burst, at: now}
	}
	if elapsed := now.Sub(b.at); elapsed > 0 {
		b.level = min(s.burst, b.level+elapsed.Seconds()*s.rate)
	}
	b.at = now
	return b
}

// Tracked counts the namespaces whose use of work is remembered.
func (s *WorkShares) Tracked() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.buckets)
}
