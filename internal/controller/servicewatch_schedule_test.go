package controller

import (
	"crypto/sha256"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
)

func TestNextSync(t *testing.T) {
	w := testWatch() // interval 1m
	every := interval(w)
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	const phase = 17 * time.Second
	slot := periodicSlot(now, every, phase)
	tests := []struct {
		name     string
		failures int
		outcome  syncOutcome
		jitter   time.Duration
		want     time.Time
	}{
		{"success waits for the watch's next slot", 0, syncOutcome{}, 0, slot},
		{"the jitter is added to the slot", 0, syncOutcome{}, 400 * time.Millisecond, slot.Add(400 * time.Millisecond)},
		{"stalled waits for the slot, not a tight loop", 1, syncOutcome{failed: true}, 0, slot},
		{"first transient failure", 1, syncOutcome{failed: true, transient: true}, 0, now.Add(5 * time.Second)},
		{"third transient failure doubles twice", 3, syncOutcome{failed: true, transient: true}, 0, now.Add(20 * time.Second)},
		{"backoff never passes the interval", 30, syncOutcome{failed: true, transient: true}, 0, now.Add(every)},
		{"429 waits as asked", 1, syncOutcome{failed: true, transient: true, retryAfter: 40 * time.Second}, 0, now.Add(40 * time.Second)},
		{"429 waits as asked even past the interval", 1, syncOutcome{failed: true, transient: true, retryAfter: time.Hour}, 0, now.Add(time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, plan := nextSync(now, every, tt.failures, tt.outcome, phase, every, tt.jitter)
			if !got.Equal(tt.want) {
				t.Errorf("nextSync = %v, want %v", got, tt.want)
			}
			if (plan == nil) != tt.outcome.transient {
				t.Errorf("plan %+v after a sync with outcome %+v: a periodic sync is planned unless a transient failure backs off", plan, tt.outcome)
			}
			if plan != nil && !plan.due(phase, every).Equal(got) {
				t.Errorf("the plan places the sync at %v, not %v", plan.due(phase, every), got)
			}
		})
	}
}

// A slot is more than half an interval and at most one and a half intervals
// after the last sync, at the watch's phase; from one slot, the next is
// exactly one interval later.
func TestPeriodicSlot(t *testing.T) {
	every := 5 * time.Minute
	for _, phase := range []time.Duration{0, time.Second, every / 2, every - time.Nanosecond} {
		for _, last := range []time.Time{time.Unix(0, 0), time.Unix(1_800_000_000, 123), time.Unix(1_800_000_150, 0)} {
			slot := periodicSlot(last, every, phase)
			if gap := slot.Sub(last); gap <= every/2 || gap > every*3/2 {
				t.Errorf("phase %v, last %v: slot %v is %v later", phase, last, slot, gap)
			}
			if off := time.Duration(slot.UnixNano() % int64(every)); off != phase {
				t.Errorf("phase %v: slot at offset %v", phase, off)
			}
			if next := periodicSlot(slot, every, phase); next.Sub(slot) != every {
				t.Errorf("phase %v: a synced-on-phase watch waits %v, not one interval", phase, next.Sub(slot))
			}
		}
	}
}

// 200 watches created in the same second sync at their own phases from the
// second sync on: the busiest second of an interval has at most 1.5 times
// the mean load (the goal for cloud calls per second).
func TestPhasesSpreadWatchesCreatedTogether(t *testing.T) {
	const n = 200
	every := 30 * time.Second
	created := time.Unix(1_800_000_000, 0)
	book := newPhaseBook()
	phaseOf := func(i int) time.Duration {
		w := testWatch()
		w.Name = fmt.Sprintf("w-%d", i)
		w.Spec.ServiceID = fmt.Sprintf("6f1c%04d-1111-4222-8333-%012d", i, i*7919)
		return book.phaseOf(types.NamespacedName{Namespace: w.Namespace, Name: w.Name}, readHash(w, "https://api.example.com"), every)
	}
	for i := range n {
		phaseOf(i) // every watch is seen before the first periodic slot
	}
	perSecond := make(map[int64]int)
	for i := range n {
		slot := periodicSlot(created, every, phaseOf(i))
		perSecond[slot.Unix()]++
	}
	peak := 0
	for _, c := range perSecond {
		peak = max(peak, c)
	}
	mean := float64(n) / float64(every/time.Second)
	if ratio := float64(peak) / mean; ratio > 1.5 {
		t.Errorf("busiest second has %d syncs, %.2f times the mean of %.1f", peak, ratio, mean)
	}
	if len(perSecond) < 30 {
		t.Errorf("syncs fall into only %d seconds of an interval of 30", len(perSecond))
	}
}

// Watches created together are first reconciled one by one, so each plans
// its second sync while the phase book knows only the watches seen before
// it. Placed with those phases the second syncs bunch up; placed again with
// the settled phases when the watch is next looked at (at the latest half an
// interval later, recheckWithin), they spread as evenly as the phases.
func TestPeriodicSyncsArePlacedWithSettledPhases(t *testing.T) {
	const n = 200
	every := 30 * time.Second
	created := time.Unix(1_800_000_000, 0)
	book := newPhaseBook()
	watch := func(i int) (types.NamespacedName, uint64) {
		w := testWatch()
		w.Name = fmt.Sprintf("w-%d", i)
		w.Spec.ServiceID = fmt.Sprintf("6f1c%04d-1111-4222-8333-%012d", i, i*7919)
		return types.NamespacedName{Namespace: w.Namespace, Name: w.Name}, readHash(w, "https://api.example.com")
	}
	plans := make([]*periodicPlan, n)
	stale := make([]time.Time, n)
	for i := range n {
		key, hash := watch(i)
		ended := created.Add(time.Duration(i) * 10 * time.Millisecond)
		phase := book.phaseOf(key, hash, every)
		stale[i], plans[i] = nextSync(ended, every, 0, syncOutcome{}, phase, every, 0)
		if recheck := recheckWithin(stale[i].Sub(ended), every); recheck > every/2 {
			t.Fatalf("watch %d is looked at again after %v, past half its interval", i, recheck)
		}
	}
	settled := make([]time.Time, n)
	for i := range n {
		key, hash := watch(i)
		settled[i] = plans[i].due(book.phaseOf(key, hash, every), every)
	}
	mean := float64(n) / every.Seconds()
	if ratio := peakPerSecond(stale) / mean; ratio <= 1.5 {
		t.Fatalf("the phases known while the watches arrive already spread them (peak ÷ mean %.2f): the test shows nothing", ratio)
	}
	if ratio := peakPerSecond(settled) / mean; ratio > 1.5 {
		t.Errorf("second syncs placed with the settled phases: busiest second has %.2f times the mean", ratio)
	}
}

// peakPerSecond is the most syncs that fall into one second.
func peakPerSecond(syncs []time.Time) float64 {
	perSecond := map[int64]int{}
	peak := 0
	for _, s := range syncs {
		perSecond[s.Unix()]++
		peak = max(peak, perSecond[s.Unix()])
	}
	return float64(peak)
}

// Phases follow the watches: watches of one service share a phase, a deleted
// watch leaves its group, one whose interval changed moves to the new group.
func TestPhaseBookFollowsWatches(t *testing.T) {
	book := newPhaseBook()
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }
	pa := book.phaseOf(key("a"), 1, time.Minute)
	pb := book.phaseOf(key("b"), 2, time.Minute)
	if pa == pb || pa < 0 || pa >= time.Minute || pb < 0 || pb >= time.Minute {
		t.Fatalf("phases %v and %v of two services at 1m", pa, pb)
	}
	if same := book.phaseOf(key("a2"), 1, time.Minute); same != pa {
		t.Errorf("two watches of one service have phases %v and %v", pa, same)
	}
	if again := book.phaseOf(key("a"), 1, time.Minute); again != pa {
		t.Errorf("a phase moved without any change: %v then %v", pa, again)
	}
	book.forget(key("a"))
	book.forget(key("a2"))
	if got := book.phaseOf(key("b"), 2, time.Minute); got != 0 {
		t.Errorf("alone in its group, b has phase %v, want 0", got)
	}
	book.phaseOf(key("b"), 2, 2*time.Minute)
	if len(book.groups) != 1 || book.groups[2*time.Minute] == nil {
		t.Errorf("b did not move to the 2m group: %v", book.groups)
	}
}

func TestReadHash(t *testing.T) {
	a, b := testWatch(), testWatch()
	a.Spec.ServiceID, b.Spec.ServiceID = "s1", "s1"
	b.Spec.AlertIDs = []string{"x"}
	b.Name = "other"
	if readHash(a, "https://api") != readHash(b, "https://api") {
		t.Error("two watches of one service at one API hash apart")
	}
	b.Spec.ManagementAPI.URL = "https://other-api"
	if readHash(a, "https://api") == readHash(b, "https://api") {
		t.Error("the same service at two APIs hashes alike")
	}
}

func TestUntilDue(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	synced := func(ago time.Duration, ready bool) *swv1.ServiceWatch {
		w := testWatch()
		w.Status.ObservedGeneration = w.Generation
		w.Status.LastSyncTime = &metav1.Time{Time: now.Add(-ago)}
		if ready {
			applyResults(w, syncParts(), []partResult{pipesOK(), endpointsOK(0), alertsFetched(nil)}, DefaultStatusSizeLimit)
		}
		return w
	}
	annotated := synced(time.Second, true)
	annotated.Annotations = map[string]string{swv1.RequestedAtAnnotation: "now"}
	newGeneration := synced(time.Second, true)
	newGeneration.Generation++
	fresh := synced(time.Second, true)
	const phase = 7 * time.Second
	freshSlot := periodicSlot(fresh.Status.LastSyncTime.Time, interval(fresh), phase)

	tests := []struct {
		name  string
		watch *swv1.ServiceWatch
		known *watchSchedule
		want  time.Duration
	}{
		{"a new generation is due at once", newGeneration, &watchSchedule{trigger: "t", nextSync: now.Add(time.Hour)}, 0},
		{"a new requested-at value is due at once", annotated, &watchSchedule{trigger: "t", nextSync: now.Add(time.Hour)}, 0},
		{"a changed Secret (trigger) is due at once", fresh, &watchSchedule{trigger: "old", nextSync: now.Add(time.Hour)}, 0},
		{"a known schedule is followed", fresh, &watchSchedule{trigger: "t", nextSync: now.Add(time.Minute)}, time.Minute},
		{"an overdue schedule is due", fresh, &watchSchedule{trigger: "t", nextSync: now.Add(-time.Minute)}, 0},
		{"a periodic slot is placed with the phase known now, not when it was planned", fresh,
			&watchSchedule{trigger: "t", nextSync: now.Add(time.Minute), plan: &periodicPlan{after: fresh.Status.LastSyncTime.Time, every: interval(fresh)}},
			freshSlot.Sub(now)},
		{"a periodic slot keeps its jitter and a Retry-After", fresh,
			&watchSchedule{trigger: "t", plan: &periodicPlan{after: fresh.Status.LastSyncTime.Time, every: interval(fresh), jitter: time.Second, notBefore: now.Add(time.Hour)}},
			time.Hour},
		{"a stretched interval scales the phase", fresh,
			&watchSchedule{trigger: "t", plan: &periodicPlan{after: fresh.Status.LastSyncTime.Time, every: 2 * interval(fresh)}},
			periodicSlot(fresh.Status.LastSyncTime.Time, 2*interval(fresh), 2*phase).Sub(now)},
		{"after a restart a Ready watch waits for its slot", fresh, nil, freshSlot.Sub(now)},
		{"after a restart a watch that is not Ready syncs at once", synced(time.Second, false), nil, 0},
		{"a never-synced watch syncs at once", testWatch(), nil, 0},
		{"after a restart the cloud's Retry-After still holds, even for a new generation", withRetryNotBefore(newGeneration, now.Add(90*time.Second)), nil, 90 * time.Second},
		{"a Retry-After that has passed is no longer waited for", withRetryNotBefore(newGeneration, now.Add(-time.Second)), nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := untilDue(now, tt.watch, tt.known, "t", phase); got != tt.want {
				t.Errorf("untilDue = %v, want %v", got, tt.want)
			}
		})
	}
}

func withRetryNotBefore(w *swv1.ServiceWatch, at time.Time) *swv1.ServiceWatch {
	w = w.DeepCopy()
	w.Status.RetryNotBefore = &metav1.Time{Time: at}
	return w
}

func TestRequestedAtEcho(t *testing.T) {
	long := strings.Repeat("x", 40000)
	tests := []struct {
		value, want string
	}{
		{"", ""},
		{"2026-11-23T12:00:00Z", "2026-11-23T12:00:00Z"},
		{strings.Repeat("y", maxRequestedAtEcho), strings.Repeat("y", maxRequestedAtEcho)},
		{long, "sha256:" + fmt.Sprintf("%x", sha256.Sum256([]byte(long)))},
	}
	for _, tt := range tests {
		w := testWatch()
		w.Annotations = map[string]string{swv1.RequestedAtAnnotation: tt.value}
		if got := requestedAt(w); got != tt.want {
			t.Errorf("echo of a %d-byte value = %q, want %q", len(tt.value), got, tt.want)
		}
		// Once echoed, the same value is not owed again.
		w.Status.ObservedGeneration = w.Generation
		w.Status.LastHandledRequestedAt = requestedAt(w)
		if work := requestedWork(w); work != "" {
			t.Errorf("a %d-byte value already handled is owed again: %s", len(tt.value), work)
		}
		if len(requestedWork(testWatch())) > 200 {
			t.Error("the Reconciling message echoes the value")
		}
	}
}

func TestAssess(t *testing.T) {
	tests := []struct {
		name    string
		results []partResult
		want    syncOutcome
	}{
		{"all synced", []partResult{{}, {}, {}}, syncOutcome{}},
		{"a stalled failure is not transient", []partResult{failed(swv1.ReasonUnauthorized, ""), {}, {}}, syncOutcome{failed: true}},
		{"an idle service waits for the interval", []partResult{failed(swv1.ReasonServiceIdle, ""), failed(swv1.ReasonServiceIdle, ""), {}}, syncOutcome{failed: true}},
		{"any transient failure makes the sync transient", []partResult{failed(swv1.ReasonUnauthorized, ""), failed(swv1.ReasonServerError, ""), {}}, syncOutcome{failed: true, transient: true}},
		{"the longest Retry-After wins", []partResult{
			{failure: &failure{reason: swv1.ReasonRateLimited, retryAfter: time.Minute}},
			{failure: &failure{reason: swv1.ReasonRateLimited, retryAfter: time.Hour}}, {},
		}, syncOutcome{failed: true, transient: true, retryAfter: time.Hour}},
	}
	for _, tt := range tests {
		if got := assess(tt.results); got != tt.want {
			t.Errorf("%s: assess = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestIntervalFloor(t *testing.T) {
	for _, tt := range []struct{ spec, want time.Duration }{
		{0, defaultInterval}, {time.Second, defaultInterval}, {30 * time.Second, 30 * time.Second}, {time.Hour, time.Hour},
		{24 * time.Hour, 24 * time.Hour}, {25 * time.Hour, 24 * time.Hour}, {2562047 * time.Hour, 24 * time.Hour},
	} {
		w := testWatch()
		w.Spec.Interval.Duration = tt.spec
		if got := interval(w); got != tt.want {
			t.Errorf("interval(%v) = %v, want %v", tt.spec, got, tt.want)
		}
	}
}

// A watch whose interval predates the CRD's 24h bound, as long as a
// time.Duration goes, or a budget that stretches an interval without end,
// still syncs next at a time in the future, within the bounds.
func TestIntervalBoundedInArithmetic(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	w := testWatch()
	w.Spec.Interval.Duration = 2562047 * time.Hour
	every := interval(w)
	for _, tt := range []struct {
		name  string
		every time.Duration
		limit time.Duration
	}{
		{"spec.interval of 2562047h", every, maxInterval},
		{"a budget stretching 24h a million times", stretched(every, 1e6), maxEffectiveInterval},
		{"a budget stretching by +Inf", stretched(every, math.Inf(1)), maxEffectiveInterval},
	} {
		// The second of two phase groups syncs half an interval in.
		for _, phase := range []time.Duration{0, tt.every / 2, tt.every - time.Nanosecond} {
			next, _ := nextSync(now, tt.every, 0, syncOutcome{}, phase, every, 0)
			if wait := next.Sub(now); wait <= 0 || wait > tt.limit*3/2 {
				t.Errorf("%s, phase %v: next sync %v after the last, want within (0, %v]", tt.name, phase, wait, tt.limit*3/2)
			}
		}
	}
}
