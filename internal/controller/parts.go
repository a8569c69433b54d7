package controller

import (
	"context"
	"sync"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// Cloud is what the reconciler needs of the cloud; *cloudapi.Client is the
// real one.
type Cloud interface {
	ListPipes(ctx context.Context, baseURL string, creds cloudapi.BasicCredentials, organizationID, serviceID string, opts cloudapi.ListOptions[swv1.Pipe]) (cloudapi.List[swv1.Pipe], error)
	ListReversePrivateEndpoints(ctx context.Context, baseURL string, creds cloudapi.BasicCredentials, organizationID, serviceID string, opts cloudapi.ListOptions[swv1.ReversePrivateEndpoint]) (cloudapi.List[swv1.ReversePrivateEndpoint], error)
	GetAlert(ctx context.Context, baseURL string, token cloudapi.BearerToken, alertID string) (cloudapi.AlertResult, error)
}

// The parts of a sync, as named in metrics.
const (
	partPipes     = "pipes"
	partEndpoints = "reverse_private_endpoints"
	partAlerts    = "alerts"
)

// pipesResult is the outcome of the pipes part: the pipes, or why not.
type pipesResult struct {
	// items are the pipes kept within the status size limit; total and
	// byState count all of them.
	items   []swv1.Pipe
	total   int
	byState map[string]int32
	failure *failure
}

// endpointsResult is the outcome of the reverse private endpoints part.
type endpointsResult struct {
	items   []swv1.ReversePrivateEndpoint
	total   int
	failure *failure
}

// alertResult is the outcome of fetching one alert.
type alertResult struct {
	alert   swv1.AlertStatus
	failure *failure
}

// cloudResults are the outcomes of the three parts of one sync.
type cloudResults struct {
	pipes     pipesResult
	endpoints endpointsResult
	// alerts has one entry per spec.alertIds entry, in spec order; nil when
	// the alerts part could not start (alertsFailure says why).
	alerts        []alertResult
	alertsFailure *failure
}

// readCloud runs the three parts concurrently: they are independent, and a
// slow one must not hold up the others.
func (r *ServiceWatchReconciler) readCloud(ctx context.Context, watch *swv1.ServiceWatch, mgmt managementAccess, alerts alertAccess) cloudResults {
	var res cloudResults
	var wg sync.WaitGroup
	wg.Go(func() { res.pipes = r.readPipes(ctx, watch, mgmt) })
	wg.Go(func() { res.endpoints = r.readEndpoints(ctx, watch, mgmt) })
	wg.Go(func() { res.alerts, res.alertsFailure = r.readAlerts(ctx, watch, alerts) })
	wg.Wait()
	return res
}

func (r *ServiceWatchReconciler) readPipes(ctx context.Context, watch *swv1.ServiceWatch, mgmt managementAccess) pipesResult {
	if mgmt.failure != nil {
		return pipesResult{failure: mgmt.failure}
	}
	// Counted through Each, so the counts stay exact when pipes are dropped.
	byState := map[string]int32{}
	opts := cloudapi.ListOptions[swv1.Pipe]{
		KeepBytes: r.Options.StatusSizeLimit,
		Each:      func(p *swv1.Pipe) { byState[ptr.Deref(p.State, "Unknown")]++ },
	}
	list, err := r.Cloud.ListPipes(ctx, mgmt.url, mgmt.creds, watch.Spec.OrganizationID, watch.Spec.ServiceID, opts)
	if err != nil {
		return pipesResult{failure: cloudFailure(err)}
	}
	if len(byState) == 0 {
		byState = nil
	}
	return pipesResult{items: list.Items, total: list.Total, byState: byState}
}

func (r *ServiceWatchReconciler) readEndpoints(ctx context.Context, watch *swv1.ServiceWatch, mgmt managementAccess) endpointsResult {
	if mgmt.failure != nil {
		return endpointsResult{failure: mgmt.failure}
	}
	opts := cloudapi.ListOptions[swv1.ReversePrivateEndpoint]{KeepBytes: r.Options.StatusSizeLimit}
	list, err := r.Cloud.ListReversePrivateEndpoints(ctx, mgmt.url, mgmt.creds, watch.Spec.OrganizationID, watch.Spec.ServiceID, opts)
	if err != nil {
		return endpointsResult{failure: cloudFailure(err)}
	}
	return endpointsResult{items: list.Items, total: list.Total}
}

// readAlerts fetches every alert of the spec, a few at a time: the client's
// per-token limiter paces them, and a bounded fan-out keeps one watch with
// 100 alerts from monopolising the manager.
func (r *ServiceWatchReconciler) readAlerts(ctx context.Context, watch *swv1.ServiceWatch, access alertAccess) ([]alertResult, *failure) {
	ids := watch.Spec.AlertIDs
	if len(ids) == 0 {
		return nil, nil
	}
	if access.failure != nil {
		return nil, access.failure
	}
	results := make([]alertResult, len(ids))
	limit := make(chan struct{}, max(1, r.Options.AlertConcurrency))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			limit <- struct{}{}
			defer func() { <-limit }()
			results[i] = r.readAlert(ctx, access, id)
		})
	}
	wg.Wait()
	return results, nil
}

func (r *ServiceWatchReconciler) readAlert(ctx context.Context, access alertAccess, id string) alertResult {
	got, err := r.Cloud.GetAlert(ctx, access.url, access.token, id)
	if err != nil {
		return alertResult{alert: swv1.AlertStatus{ID: id}, failure: cloudFailure(err)}
	}
	alert := got.Alert
	alert.ID = id // the entry is keyed by the ID the user asked for
	return alertResult{alert: alert}
}
