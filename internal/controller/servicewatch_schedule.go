package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"slices"
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
	// (see phaseBook) do the spreading; the jitter only smooths what is left.
	maxJitter = time.Second

	minInterval     = 30 * time.Second
	defaultInterval = 5 * time.Minute
	// maxInterval is the CRD's bound on spec.interval, kept here too for
	// objects that predate the rule: slots are computed in int64
	// nanoseconds, which an interval near their range would overflow.
	maxInterval = 24 * time.Hour
	// maxEffectiveInterval bounds how far a budget may stretch an interval:
	// far past what any budget needs, far within the slot arithmetic.
	maxEffectiveInterval = 365 * 24 * time.Hour
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
	// plan, when the next sync is a periodic one, is how to place it:
	// nextSync is then only where it fell with the phase known when it was
	// planned. Phases settle while the watches created (or first seen)
	// together are reconciled one by one, so the slot is placed again with
	// the phase known when the watch is next looked at.
	plan *periodicPlan
}

// periodicPlan places a periodic sync: the first slot at the watch's phase
// more than half of every after after, plus jitter, and not before notBefore
// (a Retry-After).
type periodicPlan struct {
	after     time.Time
	every     time.Duration
	jitter    time.Duration
	notBefore time.Time
}

// due is when the sync the plan places is due, for phase, the watch's offset
// within its own interval base. The phase is a share of the interval, so a
// stretched interval keeps the watches spread.
func (p *periodicPlan) due(phase, base time.Duration) time.Time {
	if base > 0 && p.every != base {
		phase = time.Duration(float64(phase) * float64(p.every) / float64(base))
	}
	next := periodicSlot(p.after, p.every, phase).Add(p.jitter)
	if p.notBefore.After(next) {
		return p.notBefore
	}
	return next
}

// recheckWithin bounds the wait for a periodic sync, so that a slot placed
// with a phase that has moved since is placed again before it is due: the
// earliest slot is half an interval after the last sync, and so is the
// recheck. It costs one reconcile from the cache, no call and no write.
func recheckWithin(wait, every time.Duration) time.Duration {
	return min(wait, every/2)
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
func untilDue(now time.Time, watch *swv1.ServiceWatch, known *watchSchedule, trigger string, phase time.Duration) time.Duration {
	if known == nil && watch.Status.RetryNotBefore != nil && watch.Status.RetryNotBefore.After(now) {
		// First sight, after a restart or a change of leader: the wait the
		// cloud asked for still holds, whatever else is owed.
		return watch.Status.RetryNotBefore.Sub(now)
	}
	if requestedWork(watch) != "" {
		return 0
	}
	if known != nil {
		if known.trigger != trigger {
			return 0
		}
		if known.plan != nil {
			return max(0, known.plan.due(phase, interval(watch)).Sub(now))
		}
		return max(0, known.nextSync.Sub(now))
	}
	// First sight since the manager started: a healthy watch synced recently
	// waits for its next periodic slot, so a restart does not call the cloud
	// for every watch at once.
	if watch.Status.LastSyncTime == nil || !conditions.IsReady(watch) {
		return 0
	}
	return max(0, periodicSlot(watch.Status.LastSyncTime.Time, interval(watch), phase).Sub(now))
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

// maxRequestedAtEcho is the longest requested-at value echoed as it is.
const maxRequestedAtEcho = 256

// requestedAt is the requested-at annotation as status echoes it: the value
// itself when short, else its SHA-256, so that any value a tenant sets is
// acted on once and never makes the status unwritable.
func requestedAt(watch *swv1.ServiceWatch) string {
	v := watch.Annotations[swv1.RequestedAtAnnotation]
	if len(v) <= maxRequestedAtEcho {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	return "sha256:" + hex.EncodeToString(sum[:])
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
			o.transient = o.transient || isTransientReason(f.reason)
			o.retryAfter = max(o.retryAfter, f.retryAfter)
		}
	}
	return o
}

// nextSync says when a watch syncs again, every its interval (as its budgets
// allow it), after a sync that ended at now, its failures-th consecutive
// failed one (0 after a success). phase is the watch's offset within its own
// interval base; see periodicPlan.due.
//
// Success and stalled failures wait for the watch's next periodic slot (a
// stalled watch waits for the user's fix, which triggers a sync at once, not
// a tight loop). Transient failures back off exponentially, never past the
// interval. A 429 waits as long as the service asked, even past the interval.
// The plan, nil after a transient failure, places the periodic sync again
// should the phase move before it is due.
func nextSync(now time.Time, every time.Duration, failures int, o syncOutcome, phase, base, jitter time.Duration) (time.Time, *periodicPlan) {
	if plan := periodicPlanAfter(now, every, o, jitter); plan != nil {
		next := plan.due(phase, base)
		return next, plan
	}
	next := now.Add(min(every, backoff(failures)))
	if wait := now.Add(o.retryAfter); wait.After(next) {
		next = wait
	}
	return next, nil
}

// periodicPlanAfter is the plan of the periodic sync that follows a sync
// ended at now with outcome o; nil when a transient failure backs off
// instead.
func periodicPlanAfter(now time.Time, every time.Duration, o syncOutcome, jitter time.Duration) *periodicPlan {
	if o.transient {
		return nil
	}
	return &periodicPlan{after: now, every: every, jitter: jitter, notBefore: now.Add(o.retryAfter)}
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

// phaseBook spreads the periodic syncs of the watches of one interval evenly
// over it. Watches are grouped by what they read (the same service at the
// same API), the groups are ranked by a hash of that, and the group of rank i
// of n syncs at offset i×interval/n. Watches of one group sync together, so
// the reads they share are made once (see sharedReads); different groups
// spread out. A random phase per watch (as Prometheus offsets scrapes per
// target) would leave clusters of about √n: 200 watches of 30s would put
// twice the mean load in their busiest second; ranks leave at most one sync
// more than the mean. A phase moves a little when groups come and go, which
// only shifts one slot of each by a fraction of the interval.
type phaseBook struct {
	mu     sync.Mutex
	groups map[time.Duration]*phaseGroup
	member map[types.NamespacedName]time.Duration
}

// phaseGroup is the watches of one interval.
type phaseGroup struct {
	ranks []uint64 // the distinct read hashes, sorted
	count map[uint64]int
	of    map[types.NamespacedName]uint64
}

func newPhaseBook() *phaseBook {
	return &phaseBook{groups: map[time.Duration]*phaseGroup{}, member: map[types.NamespacedName]time.Duration{}}
}

// phaseOf is the offset within every of the watch whose reads hash to
// readHash.
func (b *phaseBook) phaseOf(key types.NamespacedName, readHash uint64, every time.Duration) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if prev, ok := b.member[key]; ok && (prev != every || b.groups[prev].of[key] != readHash) {
		b.removeLocked(key)
	}
	g := b.groups[every]
	if g == nil {
		g = &phaseGroup{count: map[uint64]int{}, of: map[types.NamespacedName]uint64{}}
		b.groups[every] = g
	}
	if _, ok := g.of[key]; !ok {
		if g.count[readHash] == 0 {
			i, _ := slices.BinarySearch(g.ranks, readHash)
			g.ranks = slices.Insert(g.ranks, i, readHash)
		}
		g.count[readHash]++
		g.of[key] = readHash
		b.member[key] = every
	}
	rank, _ := slices.BinarySearch(g.ranks, readHash)
	return time.Duration(int64(every) / int64(len(g.ranks)) * int64(rank))
}

// forget removes a deleted watch.
func (b *phaseBook) forget(key types.NamespacedName) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removeLocked(key)
}

func (b *phaseBook) removeLocked(key types.NamespacedName) {
	every, ok := b.member[key]
	if !ok {
		return
	}
	g := b.groups[every]
	h := g.of[key]
	g.count[h]--
	if g.count[h] == 0 {
		delete(g.count, h)
		if i, found := slices.BinarySearch(g.ranks, h); found {
			g.ranks = slices.Delete(g.ranks, i, i+1)
		}
	}
	delete(g.of, key)
	delete(b.member, key)
	if len(g.ranks) == 0 {
		delete(b.groups, every)
	}
}

// readHash identifies what a watch reads: the service at the management API
// (defaultURL when the spec names none). Watches with equal hashes share a
// phase.
func readHash(watch *swv1.ServiceWatch, defaultURL string) uint64 {
	h := fnv.New64a()
	for _, part := range []string{firstNonEmpty(watch.Spec.ManagementAPI.URL, defaultURL), watch.Spec.OrganizationID, watch.Spec.ServiceID} {
		_, _ = h.Write([]byte(part))
		_, _ = h.Write([]byte{0})
	}
	return h.Sum64()
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
// values under 30s and over 24h; the bounds here keep an object that
// predates those rules from turning into a tight loop or overflowing the
// slot arithmetic.
func interval(watch *swv1.ServiceWatch) time.Duration {
	d := watch.Spec.Interval.Duration
	if d < minInterval {
		return defaultInterval
	}
	return min(d, maxInterval)
}
