package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/conditions"
	"github.com/servicewatch/servicewatch/internal/pacing"
)

// Interval bounds.
const (
	minInterval     = 30 * time.Second
	defaultInterval = 5 * time.Minute
	// maxInterval is the CRD's bound on spec.interval, kept here too for
	// objects that predate the rule: slots are computed in int64
	// nanoseconds, which an interval near their range would overflow.
	maxInterval = 24 * time.Hour
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

// readHash identifies what a watch reads: the service at the management API
// (defaultURL when the spec names none). Watches with equal hashes share a
// phase (their group in pacing.Phases).
func readHash(watch *swv1.ServiceWatch, defaultURL string) uint64 {
	h := fnv.New64a()
	for _, part := range []string{firstNonEmpty(watch.Spec.ManagementAPI.URL, defaultURL), watch.Spec.OrganizationID, watch.Spec.ServiceID} {
		_, _ = h.Write([]byte(part))
		_, _ = h.Write([]byte{0})
	}
	return h.Sum64()
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
