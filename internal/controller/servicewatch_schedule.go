package controller

import (
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/conditions"
)

// Schedule bounds.
const (
	// backoffBase is the wait after a first transient failure; it doubles
	// with each consecutive failure and never passes the watch's interval.
	backoffBase = 5 * time.Second
	// maxJitter bounds the random term added to each periodic sync. Phases
	// (see phaseOf) do the spreading; the jitter only smooths what is left.
	maxJitter = time.Second

	minInterval     = 30 * time.Second
	defaultInterval = 5 * time.Minute
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

// untilDue returns how long until the watch's next sync, 0 when it is due.
// known is the watch's schedule, if the reconciler has one; trigger is the
// fingerprint of what the user may change now.
func untilDue(now time.Time, watch *swv1.ServiceWatch, known *watchSchedule, trigger string) time.Duration {
	if requestedWork(watch) != "" {
		return 0
	}
	if known != nil {
		if known.trigger != trigger {
			return 0
		}
		return max(0, known.nextSync.Sub(now))
	}
	// First sight since the manager started: a healthy watch synced recently
	// waits for its next periodic slot, so a restart does not call the cloud
	// for every watch at once.
	if watch.Status.LastSyncTime == nil || !conditions.IsReady(watch) {
		return 0
	}
	return max(0, periodicSlot(watch.Status.LastSyncTime.Time, interval(watch), phaseOf(watch)).Sub(now))
}

// requestedWork says why a sync is owed to the user right now, or "" when
// none is: a new generation, or a new value of the requested-at annotation.
func requestedWork(watch *swv1.ServiceWatch) string {
	switch {
	case watch.Status.ObservedGeneration != watch.Generation:
		return fmt.Sprintf("syncing generation %d", watch.Generation)
	case requestedAt(watch) != "" && requestedAt(watch) != watch.Status.LastHandledRequestedAt:
		return "syncing as requested by the annotation " + swv1.RequestedAtAnnotation
	}
	return ""
}

func requestedAt(watch *swv1.ServiceWatch) string {
	return watch.Annotations[swv1.RequestedAtAnnotation]
}

// syncOutcome is what the schedule needs to know of a sync's results.
type syncOutcome struct {
	// failed: some part failed.
	failed bool
	// transient: some part failed in a way that retrying may fix.
	transient bool
	// retryAfter is the longest wait the cloud asked for.
	retryAfter time.Duration
}

// assess sums up a sync's results for the schedule.
func assess(results []partResult) syncOutcome {
	var o syncOutcome
	for _, res := range results {
		if f := res.failure; f != nil {
			o.failed = true
			o.transient = o.transient || !isStalledReason(f.reason)
			o.retryAfter = max(o.retryAfter, f.retryAfter)
		}
	}
	return o
}

// nextSync says when a watch syncs again after a sync that ended at now, its
// failures-th consecutive failed one (0 after a success).
//
// Success and stalled failures wait for the watch's next periodic slot (a
// stalled watch waits for the user's fix, which triggers a sync at once, not
// a tight loop). Transient failures back off exponentially, never past the
// interval. A 429 waits as long as the service asked, even past the interval.
func nextSync(now time.Time, watch *swv1.ServiceWatch, failures int, o syncOutcome, jitter time.Duration) time.Time {
	every := interval(watch)
	next := periodicSlot(now, every, phaseOf(watch)).Add(jitter)
	if o.transient {
		next = now.Add(min(every, backoff(failures)))
	}
	if wait := now.Add(o.retryAfter); wait.After(next) {
		next = wait
	}
	return next
}

// periodicSlot is the watch's first periodic sync time more than half an
// interval after the sync at last. Slots are the instants whose offset within
// the interval equals the watch's phase, so watches created together sync at
// their own phases from the second sync on; the half-interval floor keeps a
// sync the user asked for from being followed at once by a periodic one.
func periodicSlot(last time.Time, every, phase time.Duration) time.Time {
	after := last.Add(every / 2).UnixNano()
	p := int64(phase)
	e := int64(every)
	k := (after - p) / e
	if k*e+p <= after {
		k++
	}
	return time.Unix(0, k*e+p)
}

// phaseOf is the watch's offset within its interval, derived from its UID (as
// Prometheus offsets scrapes per target): stable for the watch's life, and
// evenly spread over many watches whatever their creation pattern.
func phaseOf(watch *swv1.ServiceWatch) time.Duration {
	h := fnv.New64a()
	_, _ = h.Write([]byte(watch.UID))
	if watch.UID == "" { // objects not from an API server, in tests
		_, _ = h.Write([]byte(watch.Namespace + "/" + watch.Name))
	}
	return time.Duration(h.Sum64() % uint64(interval(watch)))
}

// backoff is backoffBase doubled for each consecutive failure after the first.
func backoff(failures int) time.Duration {
	d := backoffBase
	for i := 1; i < failures && d < time.Hour; i++ {
		d *= 2
	}
	return d
}

// interval is the watch's sync interval. The CRD defaults it and forbids
// values under 30s; the floor here keeps an object that predates those rules
// from turning into a tight loop.
func interval(watch *swv1.ServiceWatch) time.Duration {
	if d := watch.Spec.Interval.Duration; d >= minInterval {
		return d
	}
	return defaultInterval
}
