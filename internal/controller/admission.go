package controller

import (
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/alerts"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/pacing"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// admit asks the client for the calls the sync will make, so that no call is
// ever sent that the key's budget (or a 429's hold) does not allow, and no
// worker or read slot waits for one. The management calls are asked first;
// when the alert calls have no room after them, a periodic refresh goes on
// without them (their data and condition stay as they are), while work a user
// asked for waits until everything can be read.
//
// Reads that a read of another watch will answer (one under way, or one
// that just ended: see reads.Shared) ask for nothing, so that ten watches of
// one service spend two management calls, not twenty.
func (r *ServiceWatchReconciler) admit(ctx context.Context, in *syncScope) (ctrl.Result, bool) {
	in.admission = r.admission(in)
	if in.overShare {
		log.FromContext(ctx).Info("sync deferred: the namespace's cloud answers cost more than its share of decode work", "wait", in.wait)
	}
	if c := in.watch.Condition(swv1.ConditionReconciling); in.overSpent != "" && (c == nil || c.Reason != swv1.ReasonBudgetExceeded) {
		if _, err := r.writeStatus(ctx, in.watch, statusChange{announce: in.overSpent, waits: true}); err == nil {
			r.emit(ctx, in.watch, []event{newEvent(corev1.EventTypeWarning, swv1.ReasonBudgetExceeded, in.overSpent)})
		}
	}
	return ctrl.Result{RequeueAfter: in.wait}, in.wait <= 0
}

// admission is what the budgets admit of the sync's calls; see admit.
func (r *ServiceWatchReconciler) admission(in *syncScope) admission {
	key, level := in.p.Key, in.level
	if wait := ownWait(in.watch, r.clock.Now()); wait > 0 {
		return admission{wait: wait}
	}
	if wait := r.WorkShares.Wait(key.Namespace); wait > 0 { // its answers cost more than its share to decode
		return admission{wait: wait, overShare: true}
	}
	admitted := admission{unreserved: map[readKey]bool{}}
	withAlerts := alerts.InUse(&in.watch.Spec) && in.alerts.failure == nil
	// Alerts from the management API are asked for with its other calls, at
	// once: two asks of one budget by one watch would hold each other back.
	together := withAlerts && alerts.FromManagement(&in.watch.Spec)
	var batch []readKey
	size, n := r.Budgets.MaxBatch(alerts.API(&in.watch.Spec)), 0
	if withAlerts {
		if together && size > 0 {
			size = max(1, size-len(in.managementReads()))
		}
		batch = r.pacer.AlertBatch(key, in.alertReads(), size)
		var expected bool
		if n, expected = r.toReserve(in, batch, admitted.unreserved); expected {
			return admission{wait: expectRetry}
		}
		admitted.reservedPages = r.pagesToReserve(in, admitted.unreserved, size)
		n += max(0, admitted.reservedPages-1) // the list read counts its first page already
	}
	if in.management.failure == nil {
		reads := in.managementReads()
		m, expected := r.toReserve(in, reads, admitted.unreserved)
		if together {
			reads, m = append(reads, batch...), m+n
		}
		if expected {
			return admission{wait: expectRetry}
		}
		if m > 0 {
			if wait := r.ask(key, level, cloudapi.APIManagement, in.management.url, in.management.digest, m); wait > 0 {
				return r.waiting(in, ratebudget.BudgetID(cloudapi.APIManagement, in.management.url, in.management.digest), "management API key", wait)
			}
			r.expect(reads, admitted.unreserved)
		}
	}
	if withAlerts && !together && n > 0 {
		if wait := r.ask(key, level, alerts.API(&in.watch.Spec), in.alerts.url, in.alerts.digest, n); wait > 0 {
			if level == pacing.User {
				return r.waiting(in, ratebudget.BudgetID(alerts.API(&in.watch.Spec), in.alerts.url, in.alerts.digest), alerts.BudgetName(&in.watch.Spec), wait)
			}
			admitted.alertsDeferred, admitted.alertsRoomAt = true, r.clock.Now().Add(wait)
		} else {
			r.expect(batch, admitted.unreserved)
		}
	}
	if all := len(in.alertReads()); withAlerts && !admitted.alertsDeferred && len(batch) < all {
		admitted.alertBatch = make(map[string]bool, len(batch))
		for _, read := range batch {
			admitted.alertBatch[read.alertID] = true
		}
		r.pacer.Took(key, all, size)
	}
	r.pacer.Admitted(key)
	return admitted
}

// waiting is the admission of a sync that waits wait for room in budget id
// (key, in messages): work the user asked for says why when its namespace
// spent more than its share of the budget (pacing.Pacer.Spending); admit
// writes it (Reconciling, reason BudgetExceeded) once until the sync starts
// or ends, so a namespace that requests in a loop costs one write a sync.
func (r *ServiceWatchReconciler) waiting(in *syncScope, id, key string, wait time.Duration) admission {
	if s := r.pacer.Spending(id, in.p.Key.Namespace); in.p.Asked() && s.Over() {
		return admission{wait: wait, overSpent: s.Message(key)}
	}
	return admission{wait: wait}
}

// ask asks one budget for n calls of work at level (see pacing.Pacer.Ask),
// and counts a deferral when it has no room yet.
func (r *ServiceWatchReconciler) ask(key types.NamespacedName, level pacing.Level, api, url string, cred ratebudget.CredentialID, n int) time.Duration {
	id := ratebudget.BudgetID(api, url, cred)
	wait := r.pacer.Ask(key, level, pacing.Budget{
		ID:     id,
		Rate:   r.Budgets.Allowance(api, id),
		Admit:  func(n int) time.Duration { return r.Budgets.Admit(api, url, cred, n) },
		Waiter: pacing.Waiter{Namespace: key.Namespace, Weight: r.ShareWeights.Of(id, key.Namespace)},
	}, n)
	if wait > 0 {
		r.Metrics.RecordDeferral(api)
	}
	return wait
}

// toReserve counts the reads that need a call of their own, and marks the
// others unreserved; expected: one of those was just admitted for another
// watch and is about to begin (see reads.Shared.Expecting), so the watch
// looks again in a moment and joins it. A sync that must read fresh
// reserves every call: a finished read is no use to it, and one under way
// may end before it gets there.
func (r *ServiceWatchReconciler) toReserve(in *syncScope, reads []readKey, unreserved map[readKey]bool) (n int, expected bool) {
	for _, key := range reads {
		if !in.fresh {
			if r.shared.CoversWithin(key, maxAgeOf(in, key)) {
				unreserved[key] = true
				continue
			}
			expected = expected || r.shared.Expecting(key)
		}
		n++
	}
	return n, expected
}

// pagesToReserve are the pages of the watch's alert list that its sync
// reserves with its other calls: as many as the last read of the list took,
// as fit in a batch of size (see alerts.ListPages); 0 when the sync reads
// no list or another watch's read answers it. Reserved together, a list of
// several pages is read whole in one sync, the pacer starting it when the
// key has room for all of them.
func (r *ServiceWatchReconciler) pagesToReserve(in *syncScope, unreserved map[readKey]bool, size int) int {
	key := in.alertListRead()
	if !in.alertsByList || unreserved[key] {
		return 0
	}
	return alerts.ListPages(r.listPages.Of(key), 0, size)
}

// expect tells the shared reads that the reads of reads the sync reserved
// calls for are about to begin.
func (r *ServiceWatchReconciler) expect(reads []readKey, unreserved map[readKey]bool) {
	for _, key := range reads {
		if !unreserved[key] {
			r.shared.Expect(key)
		}
	}
}

// noteDemand records what the watch asks of its budgets at its interval, and
// the interval the budgets allow it (its own when they fit).
func (r *ServiceWatchReconciler) noteDemand(_ context.Context, in *syncScope) (ctrl.Result, bool) {
	var demands []pacing.Demand[readKey]
	if in.management.failure == nil {
		demands = append(demands, pacing.Demand[readKey]{
			API:    cloudapi.APIManagement,
			Budget: ratebudget.BudgetID(cloudapi.APIManagement, in.management.url, in.management.digest),
			Reads:  in.managementReads(),
		})
	}
	if api := alerts.API(&in.watch.Spec); alerts.InUse(&in.watch.Spec) && in.alerts.failure == nil {
		demands = append(demands, pacing.Demand[readKey]{
			API:    api,
			Budget: ratebudget.BudgetID(api, in.alerts.url, in.alerts.digest),
			Reads:  in.alertReads(), AcrossGroups: in.alertsByList,
		})
	}
	for i := range demands {
		demands[i].Label, demands[i].Allowed = ratebudget.FingerprintOf(demands[i].Budget), r.Budgets.Allowance(demands[i].API, demands[i].Budget)
		demands[i].Namespace, demands[i].Weight = in.p.Key.Namespace, r.ShareWeights.Of(demands[i].Budget, in.p.Key.Namespace)
	}
	in.allowed = r.pacer.Allow(in.p, demands)
	r.Metrics.PublishBudgetDemands(r.pacer.TakeDemandChanges)
	return ctrl.Result{}, true
}

// restoreHolds gives the client back, once after a start, the Retry-After
// holds the watches persisted (status.retryNotBefore): a 429 holds the key
// at its host for every watch that uses it, not only the one that got it,
// and another watch on that key is admitted only after the holds of all
// watches were restored, since the first start of a sync waits for this. A
// list that fails is tried again by the next start.
func (r *ServiceWatchReconciler) restoreHolds(ctx context.Context, _ *syncScope) (ctrl.Result, bool) {
	if r.holdsRestored.Load() {
		return ctrl.Result{}, true
	}
	r.holdsMu.Lock()
	defer r.holdsMu.Unlock()
	if r.holdsRestored.Load() {
		return ctrl.Result{}, true
	}
	var watches swv1.ServiceWatchList
	// Read only: no copy of every status out of the cache.
	if err := r.Client.List(ctx, &watches, client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "listing ServiceWatches to restore the cloud's Retry-After holds; trying again at the next sync")
		return ctrl.Result{}, true
	}
	now := r.clock.Now()
	for i := range watches.Items {
		w := &watches.Items[i]
		if w.Spec.Suspend || w.Status.RetryNotBefore == nil || !w.Status.RetryNotBefore.After(now) || len(w.Status.HeldBudgets) == 0 || w.Status.ObservedGeneration != w.Generation {
			continue
		}
		r.restoreHold(ctx, w)
	}
	r.holdsRestored.Store(true)
	return ctrl.Result{}, true
}

// restoreHold holds until retryNotBefore each budget the watch's status
// (of its current generation) names in heldBudgets that the watch still
// calls with: never another API, host or credential than the cloud asked
// to wait (an edited spec, a rotated Secret, an account that moved).
func (r *ServiceWatchReconciler) restoreHold(ctx context.Context, w *swv1.ServiceWatch) {
	m, a := r.accessOf(ctx, w, r.credentials.Versions(ctx, w))
	for api, b := range map[string]apiAccess{cloudapi.APIManagement: m.apiAccess, cloudapi.APIAlert: a.apiAccess} {
		if b.failure == nil && slices.Contains(w.Status.HeldBudgets, b.budget(api)) {
			r.Budgets.Hold(api, b.url, b.digest, w.Status.RetryNotBefore.Time)
		}
	}
}

// waitsAlone tells whether the watch's wait came from a 503 (ServerError):
// it holds back the watch, not every watch on its key (see cloudapi's
// honourRetryAfter).
func waitsAlone(w *swv1.ServiceWatch) bool {
	for _, t := range []string{swv1.ConditionPipesSynced, swv1.ConditionReversePrivateEndpointsSynced, swv1.ConditionAlertsSynced} {
		if c := w.Condition(t); c != nil && c.Reason == swv1.ReasonServerError {
			return true
		}
	}
	return false
}

// ownWait is what is left of the wait a 503 asked of this watch alone
// (waitsAlone): a sync the user requests waits for it too, as one held by a
// 429's budget does. A new spec (another URL, say) does not.
func ownWait(w *swv1.ServiceWatch, now time.Time) time.Duration {
	if t := w.Status.RetryNotBefore; t != nil && w.Generation == w.Status.ObservedGeneration && waitsAlone(w) {
		return t.Sub(now)
	}
	return 0
}

// maxAgeOf is how old a finished read of key may be for the sync to reuse
// it: a list for most of the watch's interval, others the freshness window.
func maxAgeOf(in *syncScope, key readKey) time.Duration {
	if key.kind != alertListReadKind {
		return 0
	}
	return listAge(in)
}
