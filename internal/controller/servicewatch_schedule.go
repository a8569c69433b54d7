package controller

import (
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/conditions"
	"github.com/servicewatch/servicewatch/internal/pacing"
)

// untilDue returns how long until the watch's next sync, 0 when it is due.
// known is the watch's schedule, if the reconciler has one; trigger is the
// fingerprint of what the user may change now.
func untilDue(now time.Time, watch *swv1.ServiceWatch, known *pacing.Entry, trigger string, phase pacing.Phase) time.Duration {
	if known == nil && watch.Status.RetryNotBefore != nil && watch.Status.RetryNotBefore.After(now) {
		// First sight, after a restart or a change of leader: the wait the
		// cloud asked for still holds, whatever else is owed.
		return watch.Status.RetryNotBefore.Sub(now)
	}
	if requestedWork(watch) != "" {
		return 0
	}
	if known != nil {
		if known.Trigger != trigger {
			return 0
		}
		if known.Plan != nil {
			return max(0, known.Plan.Due(phase).Sub(now))
		}
		return max(0, known.NextSync.Sub(now))
	}
	// First sight since the manager started: a healthy watch synced recently
	// waits for its next periodic sync, so a restart does not call the cloud
	// for every watch at once.
	if watch.Status.LastSyncTime == nil || !conditions.IsReady(watch) {
		return 0
	}
	return max(0, restartPlan(watch).Due(phase).Sub(now))
}

// restartPlan places the next periodic sync of a watch first seen after a
// start: one interval after its last sync (only its end is known), as if
// the manager had never stopped.
func restartPlan(watch *swv1.ServiceWatch) *pacing.Plan {
	return &pacing.Plan{After: watch.Status.LastSyncTime.Time, Every: interval(watch)}
}

// assess sums up a sync's results for the schedule.
func assess(results []partResult) pacing.Outcome {
	var o pacing.Outcome
	for _, res := range results {
		if f := res.failure; f != nil {
			o.Failed = true
			o.Transient = o.Transient || isTransientReason(f.reason)
			o.RetryAfter = max(o.RetryAfter, f.retryAfter)
		}
	}
	return o
}
