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
	// MaxJitter bounds the random term added to each periodic sync (see
	// JitterOf).
	MaxJitter = time.Second
)

// JitterOf bounds the random term added to each periodic sync of interval
// every: a thousandth of it, at most MaxJitter. The phases do the spreading, to
// a tenth of a second between syncs of 200 watches of 30 s; a larger jitter
// only undoes it (a hundredth, 0.3 s, put a fifth more calls in the busiest
// second).
func JitterOf(every time.Duration) time.Duration { return min(MaxJitter, every/1000) }

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

// Plan places a periodic sync: at the slot of the watch's group nearest to
// one Every after After (when the last sync began), moved toward the group's
// target phase by at most MaxMove, plus Jitter, and not before NotBefore (a
// Retry-After). A watch alone in its group (or that began with it) syncs
// one Every after its last sync, give or take MaxMove; one that began late
// (it waited for a budget or a slot) or off its period (the user asked for
// the sync) goes back to its group's slot, so the group syncs, and makes the
// reads it shares, together.
type Plan struct {
	After     time.Time
	Every     time.Duration
	Jitter    time.Duration
	NotBefore time.Time
	// Stretch, when positive and under MaxMove, bounds how far the phases
	// may stretch the period (a reserved sync's, which may itself come a
	// call's spacing late: see Pacer.Synced).
	Stretch time.Duration
}

// MaxMove bounds how far one period may be shortened or stretched to move a
// group toward its target phase: a twelfth of the interval (2.5 s of 30 s),
// which leaves the jitter (a thousandth) and the latency of a busy manager
// (a few tenths of a second) room within a tenth of the interval. The
// larger it is, the wider the second syncs of watches created together
// spread: their first syncs came as fast as their budgets allowed, and the
// second ones cover that span widened by MaxMove at each end (see
// docs/benchmarks.md, "Flat from the second sync on").
func MaxMove(every time.Duration) time.Duration { return every / 12 }

// Due is when the sync the plan places is due, for the watch's phase. The
// phase is a share of the interval, so a stretched interval keeps the
// watches spread.
func (p *Plan) Due(phase Phase) time.Time {
	next := p.After.Add(p.Every)
	if phase.Known {
		step := MaxMove(p.Every)
		next = PeriodicSlot(p.After, p.Every, offsetOf(phase.At, p.Every))
		up := step
		if p.Stretch > 0 {
			up = min(up, p.Stretch)
		}
		next = next.Add(min(max(towards(next, p.Every, offsetOf(phase.Target, p.Every)), -step), up))
	}
	next = next.Add(p.Jitter)
	if p.NotBefore.After(next) {
		return p.NotBefore
	}
	return next
}

// offsetOf is the offset within every of a share of it.
func offsetOf(share float64, every time.Duration) time.Duration {
	return time.Duration(share * float64(every))
}

// towards is how far a sync at at is from the offset target within every,
// the shorter way round.
func towards(at time.Time, every, target time.Duration) time.Duration {
	off := at.UnixNano() % int64(every)
	if off < 0 {
		off += int64(every)
	}
	d := target - time.Duration(off)
	switch {
	case d >= every/2:
		d -= every
	case d < -every/2:
		d += every
	}
	return d
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

// Sync is what the schedule needs to know of a sync that ended.
type Sync struct {
	// Began is when its calls began; Ended when it ended.
	Began, Ended time.Time
	// Every is the watch's interval as its budgets allow it.
	Every time.Duration
	// Failures counts the consecutive failed syncs, this one included (0
	// after a success).
	Failures int
	Outcome  Outcome
	// Jitter is the random term added to the next periodic sync.
	Jitter time.Duration
	// Stretch bounds how far the phases may stretch the next period (see
	// Plan); 0: MaxMove.
	Stretch time.Duration
}

// NextSync says when a watch syncs again after s: every its interval (as its
// budgets allow it), one period after the sync began, moved toward the
// phase's target by at most MaxMove.
//
// Success and stalled failures wait for the watch's next periodic sync (a
// stalled watch waits for the user's fix, which triggers a sync at once, not
// a tight loop). Transient failures back off exponentially, never past the
// interval. A 429 waits as long as the service asked, even past the interval.
// The plan, nil after a transient failure, places the periodic sync again
// should the phase move before it is due.
func NextSync(s Sync, phase Phase) (time.Time, *Plan) {
	if plan := planAfter(s); plan != nil {
		due := plan.Due(phase)
		return due, plan
	}
	next := s.Ended.Add(min(s.Every, Backoff(s.Failures)))
	if wait := s.Ended.Add(s.Outcome.RetryAfter); wait.After(next) {
		next = wait
	}
	return next, nil
}

// planAfter is the plan of the periodic sync that follows s; nil when a
// transient failure backs off instead.
func planAfter(s Sync) *Plan {
	if s.Outcome.Transient {
		return nil
	}
	began := s.Began
	if began.IsZero() || began.After(s.Ended) {
		began = s.Ended
	}
	return &Plan{After: began, Every: s.Every, Jitter: s.Jitter, NotBefore: s.Ended.Add(s.Outcome.RetryAfter), Stretch: s.Stretch}
}

// PeriodicSlot is the first instant more than half an interval after last
// whose offset within the interval is phase: the slot nearest one interval
// after last. The half-interval floor keeps a sync the user asked for from
// being followed at once by a periodic one.
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

// schedules holds the schedule entries of all watches of one reconciler.
type schedules[K comparable] struct {
	mu sync.Mutex
	m  map[K]Entry
}

// newSchedules returns an empty book.
func newSchedules[K comparable]() *schedules[K] {
	return &schedules[K]{m: map[K]Entry{}}
}

// Get returns the watch's entry, if there is one.
func (b *schedules[K]) Get(key K) (Entry, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.m[key]
	return s, ok
}

// Set records the watch's entry.
func (b *schedules[K]) Set(key K, s Entry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[key] = s
}

// Forget drops the watch's entry: its next sync is due at once.
func (b *schedules[K]) Forget(key K) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, key)
}
