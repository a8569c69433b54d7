package pacing

import (
	"sync"
	"time"
)

// Schedule bounds.
const (
	// BackoffBase is the wait after a first transient failure; it doubles
	// with each consecutive failure and never passes the watch's interval.
	BackoffBase = 5 * time.Second
	// MaxJitter bounds the random term added to each periodic sync. Phases
	// (see Phases) do the spreading; the jitter only smooths what is left.
	MaxJitter = time.Second
)

// Entry is what is remembered of one watch between syncs. It lives in memory
// only: after a restart, the watch's status tells when the next sync is due.
type Entry struct {
	// Trigger identifies the inputs of the last sync: the spec's generation,
	// the requested-at annotation and the referenced Secrets' versions. A
	// different trigger means the user changed something: sync at once.
	Trigger  string
	NextSync time.Time
	Failures int
	// Plan, when the next sync is a periodic one, is how to place it:
	// NextSync is then only where it fell with the phase known when it was
	// planned. Phases settle while the watches created (or first seen)
	// together are reconciled one by one, so the slot is placed again with
	// the phase known when the watch is next looked at.
	Plan *Plan
}

// Plan places a periodic sync: the first slot at the watch's phase more
// than half of Every after After, plus Jitter, and not before NotBefore (a
// Retry-After).
type Plan struct {
	After     time.Time
	Every     time.Duration
	Jitter    time.Duration
	NotBefore time.Time
}

// Due is when the sync the plan places is due, for phase, the watch's offset
// within its own interval base. The phase is a share of the interval, so a
// stretched interval keeps the watches spread.
func (p *Plan) Due(phase, base time.Duration) time.Time {
	if base > 0 && p.Every != base {
		phase = time.Duration(float64(phase) * float64(p.Every) / float64(base))
	}
	next := PeriodicSlot(p.After, p.Every, phase).Add(p.Jitter)
	if p.NotBefore.After(next) {
		return p.NotBefore
	}
	return next
}

// RecheckWithin bounds the wait for a periodic sync, so that a slot placed
// with a phase that has moved since is placed again before it is due: the
// earliest slot is half an interval after the last sync, and so is the
// recheck. It costs one reconcile from the cache, no call and no write.
//
// The rechecks fall at the slot less whole half intervals, not half an
// interval after each watch's own sync: the watches of a group share their
// slot, so they look at the phase at the same instants and make the same
// choice even when another group comes or goes in between. Rechecked half
// an interval after their own syncs, which end seconds apart on a busy
// manager, a phase that moved between their rechecks split the group
// between the old slot and the new one, and each half made the calls the
// group shares. jitter is the plan's, left out of the instants so that it
// spreads only the syncs.
func RecheckWithin(wait, jitter, every time.Duration) time.Duration {
	half := every / 2
	if wait <= half || half <= 0 {
		return wait
	}
	toSlot := wait - jitter
	if toSlot <= half {
		return toSlot
	}
	return (toSlot-1)%half + 1
}

// Outcome is what the schedule needs to know of a sync's results.
type Outcome struct {
	// Failed: some part failed.
	Failed bool
	// Transient: some part failed in a way that retrying may fix.
	Transient bool
	// RetryAfter is the longest wait the cloud asked for.
	RetryAfter time.Duration
}

// NextSync says when a watch syncs again, every its interval (as its budgets
// allow it), after a sync that ended at now, its failures-th consecutive
// failed one (0 after a success). phase is the watch's offset within its own
// interval base; see Plan.Due.
//
// Success and stalled failures wait for the watch's next periodic slot (a
// stalled watch waits for the user's fix, which triggers a sync at once, not
// a tight loop). Transient failures back off exponentially, never past the
// interval. A 429 waits as long as the service asked, even past the interval.
// The plan, nil after a transient failure, places the periodic sync again
// should the phase move before it is due.
func NextSync(now time.Time, every time.Duration, failures int, o Outcome, phase, base, jitter time.Duration) (time.Time, *Plan) {
	if plan := planAfter(now, every, o, jitter); plan != nil {
		next := plan.Due(phase, base)
		return next, plan
	}
	next := now.Add(min(every, Backoff(failures)))
	if wait := now.Add(o.RetryAfter); wait.After(next) {
		next = wait
	}
	return next, nil
}

// planAfter is the plan of the periodic sync that follows a sync ended at
// now with outcome o; nil when a transient failure backs off instead.
func planAfter(now time.Time, every time.Duration, o Outcome, jitter time.Duration) *Plan {
	if o.Transient {
		return nil
	}
	return &Plan{After: now, Every: every, Jitter: jitter, NotBefore: now.Add(o.RetryAfter)}
}

// PeriodicSlot is the watch's first periodic sync time more than half an
// interval after the sync at last. Slots are the instants whose offset within
// the interval equals the watch's phase, so watches created together sync at
// their own phases from the second sync on; the half-interval floor keeps a
// sync the user asked for from being followed at once by a periodic one.
func PeriodicSlot(last time.Time, every, phase time.Duration) time.Time {
	after := last.Add(every / 2).UnixNano()
	p := int64(phase)
	e := int64(every)
	k := (after - p) / e
	if k*e+p <= after {
		k++
	}
	return time.Unix(0, k*e+p)
}

// Backoff is BackoffBase doubled for each consecutive failure after the
// first.
func Backoff(failures int) time.Duration {
	d := BackoffBase
	for i := 1; i < failures && d < time.Hour; i++ {
		d *= 2
	}
	return d
}

// Schedules holds the schedule entries of all watches of one reconciler.
type Schedules[K comparable] struct {
	mu sync.Mutex
	m  map[K]Entry
}

// NewSchedules returns an empty book.
func NewSchedules[K comparable]() *Schedules[K] {
	return &Schedules[K]{m: map[K]Entry{}}
}

// Get returns the watch's entry, if there is one.
func (b *Schedules[K]) Get(key K) (Entry, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.m[key]
	return s, ok
}

// Set records the watch's entry.
func (b *Schedules[K]) Set(key K, s Entry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[key] = s
}

// Forget drops the watch's entry: its next sync is due at once.
func (b *Schedules[K]) Forget(key K) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, key)
}
