package controller

import (
	"math/rand/v2"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Backoff bounds for failed syncs. The wait doubles with each consecutive
// failure and never exceeds the watch's interval.
const (
	backoffBase = 5 * time.Second
	// jitterFraction spreads syncs of many watches over up to 10% of their
	// interval, so a thousand watches do not call the cloud in the same second.
	jitterFraction = 0.1
)

// watchSchedule is what the reconciler remembers of one watch between syncs.
// It lives in memory only: after a restart, lastSyncTime in status tells when
// the next sync is due.
type watchSchedule struct {
	// trigger identifies the inputs of the last sync: the spec's generation,
	// the requested-at annotation and the referenced Secrets' versions. A
	// different trigger means the user changed something: sync at once.
	trigger  string
	nextSync time.Time
	failures int
}

// scheduleBook holds the schedules of all watches of one reconciler.
type scheduleBook struct {
	mu sync.Mutex
	m  map[types.NamespacedName]watchSchedule
}

func newScheduleBook() *scheduleBook {
	return &scheduleBook{m: map[types.NamespacedName]watchSchedule{}}
}

func (b *scheduleBook) get(key types.NamespacedName) (watchSchedule, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.m[key]
	return s, ok
}

func (b *scheduleBook) set(key types.NamespacedName, s watchSchedule) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[key] = s
}

func (b *scheduleBook) forget(key types.NamespacedName) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, key)
}

// nextDelay says when to sync again after a sync with these results.
// Success and stalled failures wait the interval (a stalled watch waits for
// the user's fix, which triggers a sync at once, not a tight loop); other
// failures back off exponentially, capped at the interval; a 429 waits as
// long as the service asked, even past the interval.
func nextDelay(interval time.Duration, failures int, transientFailure bool, retryAfter time.Duration) time.Duration {
	delay := withJitter(interval)
	if transientFailure {
		delay = min(interval, backoff(failures))
	}
	return max(delay, retryAfter)
}

// backoff is backoffBase doubled for each consecutive failure after the first.
func backoff(failures int) time.Duration {
	d := backoffBase
	for i := 1; i < failures && d < time.Hour; i++ {
		d *= 2
	}
	return d
}

func withJitter(d time.Duration) time.Duration {
	return d + time.Duration(rand.Float64()*jitterFraction*float64(d))
}
