package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/pacing"
)

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
	last := fresh.Status.LastSyncTime.Time
	every := interval(fresh)
	// The watch's group synced with it and is headed a quarter of an
	// interval on: each period moves it by MaxMove.
	headed := pacing.Phase{Known: true, At: shareOf(last, every), Target: shareOf(last, every) + 0.25}

	tests := []struct {
		name  string
		watch *swv1.ServiceWatch
		known *pacing.Entry
		phase pacing.Phase
		want  time.Duration
	}{
		{"a new generation is due at once", newGeneration, &pacing.Entry{Trigger: "t", NextSync: now.Add(time.Hour)}, headed, 0},
		{"a new requested-at value is due at once", annotated, &pacing.Entry{Trigger: "t", NextSync: now.Add(time.Hour)}, headed, 0},
		{"a changed Secret (trigger) is due at once", fresh, &pacing.Entry{Trigger: "old", NextSync: now.Add(time.Hour)}, headed, 0},
		{"a known schedule is followed", fresh, &pacing.Entry{Trigger: "t", NextSync: now.Add(time.Minute)}, headed, time.Minute},
		{"an overdue schedule is due", fresh, &pacing.Entry{Trigger: "t", NextSync: now.Add(-time.Minute)}, headed, 0},
		{"a periodic sync is placed with the phase known now, not when it was planned", fresh,
			&pacing.Entry{Trigger: "t", NextSync: now.Add(time.Minute), Plan: &pacing.Plan{After: last, Every: every}}, headed,
			last.Add(every + pacing.MaxMove(every)).Sub(now)},
		{"a periodic sync keeps its jitter and a Retry-After", fresh,
			&pacing.Entry{Trigger: "t", Plan: &pacing.Plan{After: last, Every: every, Jitter: time.Second, NotBefore: now.Add(time.Hour)}}, headed,
			time.Hour},
		{"a stretched interval is one stretched period", fresh,
			&pacing.Entry{Trigger: "t", Plan: &pacing.Plan{After: last, Every: 2 * every}}, pacing.Phase{Known: true, At: shareOf(last, 2*every), Target: shareOf(last, 2*every)},
			last.Add(2 * every).Sub(now)},
		{"after a restart a Ready watch waits one interval from its last sync", fresh, nil, pacing.Phase{}, last.Add(every).Sub(now)},
		{"after a restart a Ready watch moves toward its phase like any", fresh, nil, headed, last.Add(every + pacing.MaxMove(every)).Sub(now)},
		{"after a restart a watch that is not Ready syncs at once", synced(time.Second, false), nil, headed, 0},
		{"a never-synced watch syncs at once", testWatch(), nil, headed, 0},
		{"after a restart the cloud's Retry-After still holds, even for a new generation", withRetryNotBefore(newGeneration, now.Add(90*time.Second)), nil, headed, 90 * time.Second},
		{"a Retry-After that has passed is no longer waited for", withRetryNotBefore(newGeneration, now.Add(-time.Second)), nil, headed, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := untilDue(now, tt.watch, tt.known, "t", tt.phase); got != tt.want {
				t.Errorf("untilDue = %v, want %v", got, tt.want)
			}
		})
	}
}

// shareOf is the share of every at which t falls, counted from the Unix
// epoch, as pacing.Phases counts.
func shareOf(t time.Time, every time.Duration) float64 {
	return float64(t.UnixNano()%int64(every)) / float64(every)
}

func withRetryNotBefore(w *swv1.ServiceWatch, at time.Time) *swv1.ServiceWatch {
	w = w.DeepCopy()
	w.Status.RetryNotBefore = &metav1.Time{Time: at}
	return w
}

func TestAssess(t *testing.T) {
	tests := []struct {
		name    string
		results []partResult
		want    pacing.Outcome
	}{
		{"all synced", []partResult{{}, {}, {}}, pacing.Outcome{}},
		{"a stalled failure is not transient", []partResult{failed(swv1.ReasonUnauthorized, ""), {}, {}}, pacing.Outcome{Failed: true}},
		{"an idle service waits for the interval", []partResult{failed(swv1.ReasonServiceIdle, ""), failed(swv1.ReasonServiceIdle, ""), {}}, pacing.Outcome{Failed: true}},
		{"any transient failure makes the sync transient", []partResult{failed(swv1.ReasonUnauthorized, ""), failed(swv1.ReasonServerError, ""), {}}, pacing.Outcome{Failed: true, Transient: true}},
		{"the longest Retry-After wins", []partResult{
			{failure: &failure{reason: swv1.ReasonRateLimited, retryAfter: time.Minute}},
			{failure: &failure{reason: swv1.ReasonRateLimited, retryAfter: time.Hour}}, {},
		}, pacing.Outcome{Failed: true, Transient: true, RetryAfter: time.Hour}},
	}
	for _, tt := range tests {
		if got := assess(tt.results); got != tt.want {
			t.Errorf("%s: assess = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
