package controller

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/conditions"
)

// restoreHolds gives the client back, once after a start, the Retry-After
// holds the watches persisted (status.retryNotBefore): a 429 holds the key
// at its host for every watch that uses it, not only the one that got it,
// and another watch on that key is admitted only after the holds of all
// watches were restored, since the first start of a sync waits for this. A
// list that fails is tried again by the next start.
func (r *ServiceWatchReconciler) restoreHolds(ctx context.Context) {
	if r.holdsRestored.Load() {
		return
	}
	r.holdsMu.Lock()
	defer r.holdsMu.Unlock()
	if r.holdsRestored.Load() {
		return
	}
	var watches swv1.ServiceWatchList
	// Read only: no copy of every status out of the cache.
	if err := r.Client.List(ctx, &watches, client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "listing ServiceWatches to restore the cloud's Retry-After holds; trying again at the next sync")
		return
	}
	now := r.now()
	for i := range watches.Items {
		w := &watches.Items[i]
		if w.Spec.Suspend || w.Status.RetryNotBefore == nil || !w.Status.RetryNotBefore.After(now) {
			continue
		}
		r.restoreHold(ctx, w)
	}
	r.holdsRestored.Store(true)
}

// restoreHold holds the budgets the watch was told to wait for until its
// retryNotBefore: the management API's when its pipes or endpoints were
// rate limited, the alert API's when its alerts were, both when its
// conditions do not tell.
func (r *ServiceWatchReconciler) restoreHold(ctx context.Context, w *swv1.ServiceWatch) {
	until := w.Status.RetryNotBefore.Time
	management := rateLimited(w, swv1.ConditionPipesSynced) || rateLimited(w, swv1.ConditionReversePrivateEndpointsSynced)
	alerts := rateLimited(w, swv1.ConditionAlertsSynced)
	if !management && !alerts {
		management, alerts = true, true
	}
	in := r.readAccess(ctx, w, r.secretVersions(ctx, w))
	if management && in.management.failure == nil {
		r.Budgets.Hold(cloudapi.APIManagement, in.management.url, in.management.digest, until)
	}
	if alerts && len(w.Spec.AlertIDs) > 0 && in.alerts.failure == nil {
		r.Budgets.Hold(cloudapi.APIAlert, in.alerts.url, in.alerts.digest, until)
	}
}

// rateLimited tells whether the watch's condition of type t says the cloud
// (or the client-side budget) asked it to wait.
func rateLimited(w *swv1.ServiceWatch, t string) bool {
	c := conditions.Get(w, t)
	return c != nil && c.Reason == swv1.ReasonRateLimited
}
