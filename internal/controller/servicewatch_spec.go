package controller

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
)

// What the controller reads of a watch's spec and annotations, in one place.

// Interval bounds.
const (
	minInterval     = 30 * time.Second
	defaultInterval = 5 * time.Minute
	// maxInterval is the CRD's bound on spec.interval, kept here too for
	// objects that predate the rule: slots are computed in int64
	// nanoseconds, which an interval near their range would overflow.
	maxInterval = 24 * time.Hour
)

// paced is the watch as the pacing books see it, built from the watch in
// one place (pacedOf) when a reconcile begins, so that every question put to
// the books (is it due, at which level, its phase, its demand, its next
// slot) is asked with the same key, trigger, interval and read group.
type paced struct {
	key types.NamespacedName
	// trigger fingerprints what the user may change to ask for a sync now
	// (triggerOf).
	trigger string
	// every is the watch's own interval (interval), before any budget
	// stretches it.
	every time.Duration
	// group identifies what the watch reads (readHash): watches of one
	// group share a phase.
	group uint64
	// work says why a sync is owed to the user now, "" when none is
	// (requestedWork).
	work string
}

// pacedOf is the watch as the pacing books see it; secretVersions are the
// referenced Secrets' resourceVersions, defaultURL the management API's URL
// when the spec names none.
func pacedOf(watch *swv1.ServiceWatch, secretVersions map[string]string, defaultURL string) paced {
	return paced{
		key:     client.ObjectKeyFromObject(watch),
		trigger: triggerOf(watch, secretVersions),
		every:   interval(watch),
		group:   readHash(watch, defaultURL),
		work:    requestedWork(watch),
	}
}

// triggerOf fingerprints what a user may change to ask for a sync now: the
// generation, the requested-at annotation and the referenced Secrets'
// versions.
func triggerOf(watch *swv1.ServiceWatch, secretVersions map[string]string) string {
	ordered := make([]string, 0, len(secretVersions))
	for _, name := range referencedSecrets(watch) {
		ordered = append(ordered, secretVersions[name])
	}
	return fmt.Sprintf("%d|%s|%v", watch.Generation, requestedAt(watch), ordered)
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

func referencedSecrets(obj client.Object) []string {
	watch, ok := obj.(*swv1.ServiceWatch)
	if !ok {
		return nil
	}
	names := []string{watch.Spec.ManagementAPI.SecretRef.Name}
	if watch.Spec.AlertAPI != nil && watch.Spec.AlertAPI.SecretRef.Name != names[0] {
		names = append(names, watch.Spec.AlertAPI.SecretRef.Name)
	}
	return names
}
