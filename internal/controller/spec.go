package controller

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/pacing"
)

// What the controller reads of a watch's spec and annotations, in one place.

// paced is the watch as the pacer sees it, built from the watch in one
// place (pacedOf) when a reconcile begins, so that every question put to the
// pacer (is it due, at which level, its demand, its next slot) is asked with
// the same key, trigger, interval and read group.
type paced = pacing.Watch[types.NamespacedName]

// pacedOf is the watch as the pacer sees it; secretVersions are the
// referenced Secrets' resourceVersions, defaultURL the management API's URL
// when the spec names none.
func pacedOf(watch *swv1.ServiceWatch, secretVersions map[string]string, defaultURL string) paced {
	p := paced{
		Key:       client.ObjectKeyFromObject(watch),
		Trigger:   triggerOf(watch, secretVersions),
		Every:     watch.Spec.SyncInterval(),
		Group:     readHash(watch, defaultURL),
		NewSpec:   newSpec(watch),
		Requested: requested(watch),
		Ready:     watch.IsReady(),
	}
	if t := watch.Status.LastSyncTime; t != nil {
		p.LastSync = t.Time
	}
	if t := watch.Status.RetryNotBefore; t != nil {
		p.RetryNotBefore = t.Time
	}
	return p
}

// triggerOf fingerprints what a user may change to ask for a sync now: the
// generation, the requested-at annotation and the referenced Secrets'
// versions.
func triggerOf(watch *swv1.ServiceWatch, secretVersions map[string]string) string {
	ordered := make([]string, 0, len(secretVersions))
	for _, name := range referencedSecrets(watch) {
		ordered = append(ordered, secretVersions[name])
	}
	if grant, ok := secretVersions[accountTrigger]; ok {
		ordered = append(ordered, grant)
	}
	return fmt.Sprintf("%d|%s|%v", watch.Generation, requestedAt(watch), ordered)
}

// requestedWork says why a sync is owed to the user right now, or "" when
// none is: a new generation, or a new value of the requested-at annotation.
func requestedWork(watch *swv1.ServiceWatch) string {
	switch {
	case newSpec(watch):
		return fmt.Sprintf("syncing generation %d", watch.Generation)
	case requested(watch):
		return "syncing as requested by the annotation " + swv1.RequestedAtAnnotation
	}
	return ""
}

// newSpec tells a generation that no sync has handled yet.
func newSpec(watch *swv1.ServiceWatch) bool {
	return watch.Status.ObservedGeneration != watch.Generation
}

// requested tells a requested-at value that no sync has handled yet.
func requested(watch *swv1.ServiceWatch) bool {
	v := requestedAt(watch)
	return v != "" && v != watch.Status.LastHandledRequestedAt
}

// maxRequestedAtEcho is the longest requested-at value echoed as it is.
const maxRequestedAtEcho = 256

// requestedAt is the requested-at annotation as status echoes it: the value
// itself when short and printable, else its SHA-256, so that any value a
// tenant sets is acted on once, never makes the status unwritable, and
// never puts a control character (a terminal's escape) in status.
func requestedAt(watch *swv1.ServiceWatch) string {
	v := watch.Annotations[swv1.RequestedAtAnnotation]
	if len(v) <= maxRequestedAtEcho && strings.IndexFunc(v, unicode.IsControl) < 0 {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// readHash identifies what a watch reads: the service at the management API
// (defaultURL when the spec names none), its phase group in the pacer unless
// it reads an alert list shared beyond its service (sharedListGroup).
func readHash(watch *swv1.ServiceWatch, defaultURL string) uint64 {
	return pacing.GroupOf(cmp.Or(watch.Spec.ManagementAPI.URL, defaultURL), watch.Spec.OrganizationID, watch.Spec.ServiceID)
}

// accountTrigger is the key of secretVersions that holds the watch's account
// grant (Grant.Trigger) and its Secrets' versions: never a Secret's name.
const accountTrigger = "\x00account"

func referencedSecrets(obj client.Object) []string {
	watch, ok := obj.(*swv1.ServiceWatch)
	if !ok {
		return nil
	}
	var names []string
	if watch.Spec.ManagementAPI.AccountRef == nil {
		names = append(names, watch.Spec.ManagementAPI.SecretRef.Name)
	}
	if watch.Spec.AlertAPI != nil && !slices.Contains(names, watch.Spec.AlertAPI.SecretRef.Name) {
		names = append(names, watch.Spec.AlertAPI.SecretRef.Name)
	}
	return names
}
