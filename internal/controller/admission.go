package controller

import (
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// managementCallsPerSync is what one sync spends of a management key's
// budget: the pipes and the reverse private endpoints.
const managementCallsPerSync = 2

// admitManagement asks the client for the management calls of a sync; when
// the key's budget (or a 429's hold) has no room, the parts fail as
// RateLimited with the wait, and nothing is sent.
func (r *ServiceWatchReconciler) admitManagement(mgmt managementAccess) managementAccess {
	if mgmt.failure == nil {
		mgmt.failure = admissionFailure(r.Cloud.Admit(cloudapi.APIManagement, mgmt.url, mgmt.creds, managementCallsPerSync), "management API key")
	}
	return mgmt
}

// admitAlerts asks the client for the alert calls of a sync, one per alert.
func (r *ServiceWatchReconciler) admitAlerts(watch *swv1.ServiceWatch, alerts alertAccess) alertAccess {
	if n := len(watch.Spec.AlertIDs); n > 0 && alerts.failure == nil {
		alerts.failure = admissionFailure(r.Cloud.Admit(cloudapi.APIAlert, alerts.url, alerts.token, n), "alert API token")
	}
	return alerts
}

func admissionFailure(wait time.Duration, what string) *failure {
	if wait <= 0 {
		return nil
	}
	f := newFailure(swv1.ReasonRateLimited,
		"not sent: the %s's client-side rate limit, or the wait the cloud asked for after a 429, allows no more calls for %s",
		what, wait.Round(time.Millisecond))
	f.retryAfter = wait
	return f
}
