package controller

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// Cloud is what the reconciler needs of the cloud; *cloudapi.Client is the
// real one.
type Cloud interface {
	ListPipes(ctx context.Context, baseURL string, creds cloudapi.BasicCredentials, organizationID, serviceID string) (cloudapi.PipeList, error)
	ListReversePrivateEndpoints(ctx context.Context, baseURL string, creds cloudapi.BasicCredentials, organizationID, serviceID string) (cloudapi.ReversePrivateEndpointList, error)
	GetAlert(ctx context.Context, baseURL string, token cloudapi.BearerToken, alertID string) (cloudapi.AlertResult, error)
	// Admit reserves n calls of a budget before they are made, or says how
	// long to wait; see cloudapi.Client.Admit.
	Admit(api, baseURL string, cred cloudapi.Credential, n int) time.Duration
}

// The parts of a sync, as named in metrics.
const (
	partPipes     = "pipes"
	partEndpoints = "reverse_private_endpoints"
	partAlerts    = "alerts"
)

// redactedValue replaces a credential the cloud returned.
const redactedValue = "<redacted>"

// pipesResult is the outcome of the pipes part: the pipes, or why not.
type pipesResult struct {
	items   []swv1.Pipe
	failure *failure
}

// endpointsResult is the outcome of the reverse private endpoints part.
type endpointsResult struct {
	items   []swv1.ReversePrivateEndpoint
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
	list, err := r.Cloud.ListPipes(ctx, mgmt.url, mgmt.creds, watch.Spec.OrganizationID, watch.Spec.ServiceID)
	if err != nil {
		return pipesResult{failure: cloudFailure(err)}
	}
	for i := range list.Items {
		redactPipe(&list.Items[i])
	}
	items, f := convertSortedByID(list.Items, list.RequestID, func(p swv1.Pipe) *string { return p.ID })
	return pipesResult{items: items, failure: f}
}

func (r *ServiceWatchReconciler) readEndpoints(ctx context.Context, watch *swv1.ServiceWatch, mgmt managementAccess) endpointsResult {
	if mgmt.failure != nil {
		return endpointsResult{failure: mgmt.failure}
	}
	list, err := r.Cloud.ListReversePrivateEndpoints(ctx, mgmt.url, mgmt.creds, watch.Spec.OrganizationID, watch.Spec.ServiceID)
	if err != nil {
		return endpointsResult{failure: cloudFailure(err)}
	}
	items, f := convertSortedByID(list.Items, list.RequestID, func(e swv1.ReversePrivateEndpoint) *string { return e.ID })
	return endpointsResult{items: items, failure: f}
}

// readAlerts fetches every alert of the spec, a few at a time: the sync's
// admission reserved them all of the token's budget, and a bounded fan-out
// keeps one watch with 100 alerts from monopolising the manager.
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
	alert, err := convertJSON[swv1.AlertStatus](got.Alert)
	if err != nil {
		return alertResult{alert: swv1.AlertStatus{ID: id}, failure: conversionFailure(err, got.RequestID)}
	}
	alert.ID = id // the entry is keyed by the ID the user asked for
	return alertResult{alert: alert}
}

// redactPipe replaces the object-storage connection string, a credential,
// before the pipe goes anywhere else. An empty value stays empty: it reveals
// nothing and says the cloud sent the field.
func redactPipe(p *cloudapi.Pipe) {
	if p.Source == nil || p.Source.ObjectStorage == nil || p.Source.ObjectStorage.ConnectionString == nil {
		return
	}
	if *p.Source.ObjectStorage.ConnectionString != "" {
		p.Source.ObjectStorage.ConnectionString = ptr.To(redactedValue)
	}
}

// convertSortedByID converts the client's items into status items ordered by
// id, so that an unchanged cloud yields an identical status whatever order it
// answers in.
func convertSortedByID[Out any](items any, requestID string, id func(Out) *string) ([]Out, *failure) {
	out, err := convertJSON[[]Out](items)
	if err != nil {
		return nil, conversionFailure(err, requestID)
	}
	slices.SortStableFunc(out, func(a, b Out) int { return cmp.Compare(ptr.Deref(id(a), ""), ptr.Deref(id(b), "")) })
	return out, nil
}

// convertJSON turns the client's types into the CRD's by a JSON round trip:
// both use the API's field names and nesting, so the conversion is exact for
// every field the CRD has and drops the rest.
func convertJSON[Out any](in any) (Out, error) {
	var out Out
	raw, err := json.Marshal(in)
	if err != nil {
		return out, err
	}
	err = json.Unmarshal(raw, &out)
	return out, err
}

func conversionFailure(err error, requestID string) *failure {
	msg := fmt.Sprintf("the response could not be stored in status: %v", err)
	if requestID != "" {
		msg += fmt.Sprintf(" (requestId %s)", requestID)
	}
	return &failure{reason: swv1.ReasonInvalidResponse, message: msg}
}
