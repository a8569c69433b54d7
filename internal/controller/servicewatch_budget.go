package controller

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/pacing"
)

// admission is the client-side budget's answer for one sync.
type admission struct {
	// wait, when positive, is how long to wait before the sync may start:
	// nothing is sent meanwhile, and nothing is written.
	wait time.Duration
	// alertsDeferred: the management calls go ahead, the alert calls wait
	// for the next sync (a periodic refresh only).
	alertsDeferred bool
	// unreserved are the reads that asked for no budget: a read of another
	// watch will answer them (see syncInput.admitAtCall).
	unreserved map[readKey]bool
	// alertBatch are the alerts this sync fetches when the token's budget
	// admits fewer at once than the watch has; nil: all of them.
	alertBatch map[string]bool
}

// alertBatch is the batch of the watch's alert reads this sync asks for:
// all of them when the token's budget admits them at once (size calls, 0
// for no limit), else the next size of them in turn (pacing.Pacer.AlertBatch). A batch
// larger than the budget would never be admitted, and its standing claim
// would hold back every other watch's alerts on the token.
func (r *ServiceWatchReconciler) alertBatch(key types.NamespacedName, reads []readKey, size int) []readKey {
	if size <= 0 || len(reads) <= size {
		return reads
	}
	batch := make([]readKey, 0, size)
	for _, i := range r.pacer.AlertBatch(key, len(reads), size) {
		batch = append(batch, reads[i])
	}
	return batch
}

// admit asks the client for the calls the sync will make, so that no call is
// ever sent that the key's budget (or a 429's hold) does not allow, and no
// worker or read slot waits for one. The management calls are asked first;
// when the alert calls have no room after them, a periodic refresh goes on
// without them (their data and condition stay as they are), while work a user
// asked for waits until everything can be read.
//
// Reads that a read of another watch will answer (one under way, or one
// that just ended: see sharedread.Reads) ask for nothing, so that ten watches of
// one service spend two management calls, not twenty.
func (r *ServiceWatchReconciler) admit(in syncInput, level pacing.Level) admission {
	key := types.NamespacedName{Namespace: in.watch.Namespace, Name: in.watch.Name}
	admitted := admission{unreserved: map[readKey]bool{}}
	if in.management.failure == nil {
		reads := in.managementReads()
		n, expected := r.toReserve(in, reads, admitted.unreserved)
		if expected {
			return admission{wait: expectRetry}
		}
		if n > 0 {
			if wait := r.ask(key, level, cloudapi.APIManagement, in.management.url, in.management.digest, n); wait > 0 {
				return admission{wait: wait}
			}
			r.expect(reads, admitted.unreserved)
		}
	}
	if len(in.watch.Spec.AlertIDs) > 0 && in.alerts.failure == nil {
		reads, size := in.alertReads(), r.Cloud.MaxBatch(cloudapi.APIAlert)
		batch := r.alertBatch(key, reads, size)
		n, expected := r.toReserve(in, batch, admitted.unreserved)
		if expected {
			return admission{wait: expectRetry}
		}
		if n > 0 {
			if wait := r.ask(key, level, cloudapi.APIAlert, in.alerts.url, in.alerts.digest, n); wait > 0 {
				if level == pacing.User {
					return admission{wait: wait}
				}
				admitted.alertsDeferred = true
			} else {
				r.expect(batch, admitted.unreserved)
			}
		}
		if !admitted.alertsDeferred && len(batch) < len(reads) {
			admitted.alertBatch = make(map[string]bool, len(batch))
			for _, read := range batch {
				admitted.alertBatch[read.alertID] = true
			}
			r.pacer.Took(key, len(reads), size)
		}
	}
	r.pacer.Admitted(key)
	return admitted
}

// ask asks one budget for n calls of work at level (see pacing.Pacer.Ask),
// and counts a deferral when it has no room yet.
func (r *ServiceWatchReconciler) ask(key types.NamespacedName, level pacing.Level, api, url string, cred cloudapi.CredentialID, n int) time.Duration {
	wait := r.pacer.Ask(key, level, pacing.Budget{
		ID:    cloudapi.BudgetID(api, url, cred),
		Rate:  r.Cloud.Allowance(api),
		Admit: func(n int) time.Duration { return r.Cloud.Admit(api, url, cred, n) },
	}, n)
	if wait > 0 {
		r.Metrics.RecordDeferral(api, DeferralBudget)
	}
	return wait
}

// toReserve counts the reads that need a call of their own, and marks the
// others unreserved; expected: one of those was just admitted for another
// watch and is about to begin (see sharedread.Reads.Expecting), so the watch
// looks again in a moment and joins it. A sync that must read fresh
// reserves every call: a finished read is no use to it, and one under way
// may end before it gets there.
func (r *ServiceWatchReconciler) toReserve(in syncInput, reads []readKey, unreserved map[readKey]bool) (n int, expected bool) {
	for _, key := range reads {
		if !in.fresh {
			if r.shared.Covers(key) {
				unreserved[key] = true
				continue
			}
			expected = expected || r.shared.Expecting(key)
		}
		n++
	}
	return n, expected
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

// noteDemand records what the watch asks of its budgets at its interval and
// returns the interval the budgets allow it (its own when they fit).
func (r *ServiceWatchReconciler) noteDemand(p paced, in syncInput) time.Duration {
	var demands []pacing.Demand[readKey]
	if in.management.failure == nil {
		demands = append(demands, pacing.Demand[readKey]{
			API:     cloudapi.APIManagement,
			Budget:  cloudapi.BudgetID(cloudapi.APIManagement, in.management.url, in.management.digest),
			Allowed: r.Cloud.Allowance(cloudapi.APIManagement),
			Reads:   in.managementReads(),
		})
	}
	if len(in.watch.Spec.AlertIDs) > 0 && in.alerts.failure == nil {
		demands = append(demands, pacing.Demand[readKey]{
			API:     cloudapi.APIAlert,
			Budget:  cloudapi.BudgetID(cloudapi.APIAlert, in.alerts.url, in.alerts.digest),
			Allowed: r.Cloud.Allowance(cloudapi.APIAlert),
			Reads:   in.alertReads(),
		})
	}
	for i := range demands {
		demands[i].Label = cloudapi.FingerprintOf(demands[i].Budget)
	}
	every := r.pacer.Demand(p, demands)
	r.Metrics.publishBudgetDemands(r.pacer.TakeDemandChanges)
	return every
}
