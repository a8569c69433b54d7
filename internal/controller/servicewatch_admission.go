package controller

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// managementCallsPerSync is what one sync spends of a management key's
// budget: the pipes and the reverse private endpoints.
const managementCallsPerSync = 2

// admission is the client-side budget's answer for one sync.
type admission struct {
	// wait, when positive, is how long to wait before the sync may start:
	// nothing is sent meanwhile, and nothing is written.
	wait time.Duration
	// alertsDeferred: the management calls go ahead, the alert calls wait
	// for the next sync (a periodic refresh only).
	alertsDeferred bool
}

// admit asks the client for the calls the sync will make, so that no call is
// ever sent that the key's budget (or a 429's hold) does not allow, and no
// worker or read slot waits for one. The management calls are asked first;
// when the alert calls have no room after them, a periodic refresh goes on
// without them (their data and condition stay as they are), while work a user
// asked for waits until everything can be read.
func (r *ServiceWatchReconciler) admit(in syncInput) admission {
	if in.management.failure == nil {
		if wait := r.Cloud.Admit(cloudapi.APIManagement, in.management.url, in.management.creds, managementCallsPerSync); wait > 0 {
			r.Metrics.RecordDeferral(cloudapi.APIManagement, DeferralBudget)
			return admission{wait: wait}
		}
	}
	if n := len(in.watch.Spec.AlertIDs); n > 0 && in.alerts.failure == nil {
		if wait := r.Cloud.Admit(cloudapi.APIAlert, in.alerts.url, in.alerts.token, n); wait > 0 {
			r.Metrics.RecordDeferral(cloudapi.APIAlert, DeferralBudget)
			if requestedWork(in.watch) != "" {
				return admission{wait: wait}
			}
			return admission{alertsDeferred: true}
		}
	}
	return admission{}
}

// noteDemand records what the watch asks of its budgets at its interval and
// returns the interval the budgets allow it (its own when they fit).
func (r *ServiceWatchReconciler) noteDemand(key types.NamespacedName, watch *swv1.ServiceWatch, in syncInput) time.Duration {
	var demands []budgetDemand
	if in.management.failure == nil {
		demands = append(demands, budgetDemand{
			api:          cloudapi.APIManagement,
			fingerprint:  cloudapi.Fingerprint(cloudapi.APIManagement, in.management.url, in.management.creds),
			allowed:      r.Cloud.Allowance(cloudapi.APIManagement),
			callsPerSync: managementCallsPerSync,
		})
	}
	if n := len(watch.Spec.AlertIDs); n > 0 && in.alerts.failure == nil {
		demands = append(demands, budgetDemand{
			api:          cloudapi.APIAlert,
			fingerprint:  cloudapi.Fingerprint(cloudapi.APIAlert, in.alerts.url, in.alerts.token),
			allowed:      r.Cloud.Allowance(cloudapi.APIAlert),
			callsPerSync: n,
		})
	}
	every := interval(watch)
	factor := r.budgets.note(key, every, demands)
	for _, d := range demands {
		if d.allowed > 0 {
			r.Metrics.SetBudgetDemand(d.api, d.fingerprint, r.budgets.ratio(d.fingerprint))
		}
	}
	return stretched(every, factor)
}
