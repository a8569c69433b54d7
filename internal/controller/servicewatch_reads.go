package controller

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/pacing"
	"github.com/servicewatch/servicewatch/internal/readrunner"
)

// fetches run the cloud reads of syncs in the background (readrunner): a
// worker starts a read and moves on, and the read's end wakes the watch
// again to write what was read. The calls of the reads are bounded per API
// host, per namespace and in all (pacing.Slots): a sync holds a host's slot
// only while it calls that host, work a user asked for goes first, and the
// namespaces that wait take turns.
type fetches = readrunner.Runner[types.NamespacedName, fetched]

// fetched is a sync whose read ended, and what the read found; results are
// nil when it ended without an answer (it panicked, or got no slot before
// the sync timeout).
type fetched struct {
	scope   *syncScope
	results []partResult
}

func newFetches(limits pacing.SlotLimits, timeout time.Duration, now func() time.Time, slotWait func(pacing.Level, time.Duration)) *fetches {
	return readrunner.New[types.NamespacedName, fetched](limits, timeout, now, slotWait)
}

// readRequest is the background read of the sync s: read calls the cloud.
func readRequest(s *syncScope, read func(ctx context.Context, slots *readrunner.Slots) []partResult) readrunner.Request[types.NamespacedName, fetched] {
	return readrunner.Request[types.NamespacedName, fetched]{Key: s.p.Key, Tenant: s.p.Key.Namespace, Level: s.level,
		Interrupted: fetched{scope: s},
		Read: func(ctx context.Context, slots *readrunner.Slots) fetched {
			return fetched{scope: s, results: read(ctx, slots)}
		}}
}

// takeRead returns the sync of the watch whose read ended, if there is one,
// with what it found, and forgets it.
func (r *ServiceWatchReconciler) takeRead(key types.NamespacedName) (*syncScope, bool) {
	ended, ok := r.fetches.Take(key)
	if !ok {
		return nil, false
	}
	ended.Result.scope.ended(ended.Result.results, ended.StartedAt, ended.EndedAt)
	return ended.Result.scope, true
}

// slottedCloud is the Cloud of one sync's read: each call holds its host's
// slot (readrunner.Slots) while it runs. Admission asks no slot: it calls
// nothing.
type slottedCloud struct {
	Cloud
	slots *readrunner.Slots
}

// ListPipes lists the pipes holding the management host's slot.
func (c slottedCloud) ListPipes(ctx context.Context, baseURL string, creds cloudapi.BasicCredentials, organizationID, serviceID string, opts cloudapi.ListOptions[swv1.Pipe]) (cloudapi.List[swv1.Pipe], error) {
	release, err := c.slots.Hold(ctx, baseURL)
	if err != nil {
		return cloudapi.List[swv1.Pipe]{}, err
	}
	defer release()
	return c.Cloud.ListPipes(ctx, baseURL, creds, organizationID, serviceID, opts)
}

// ListReversePrivateEndpoints lists the endpoints holding the management
// host's slot.
func (c slottedCloud) ListReversePrivateEndpoints(ctx context.Context, baseURL string, creds cloudapi.BasicCredentials, organizationID, serviceID string, opts cloudapi.ListOptions[swv1.ReversePrivateEndpoint]) (cloudapi.List[swv1.ReversePrivateEndpoint], error) {
	release, err := c.slots.Hold(ctx, baseURL)
	if err != nil {
		return cloudapi.List[swv1.ReversePrivateEndpoint]{}, err
	}
	defer release()
	return c.Cloud.ListReversePrivateEndpoints(ctx, baseURL, creds, organizationID, serviceID, opts)
}

// GetAlert fetches an alert holding the alert host's slot.
func (c slottedCloud) GetAlert(ctx context.Context, baseURL string, token cloudapi.BearerToken, alertID string) (cloudapi.AlertResult, error) {
	release, err := c.slots.Hold(ctx, baseURL)
	if err != nil {
		return cloudapi.AlertResult{}, err
	}
	defer release()
	return c.Cloud.GetAlert(ctx, baseURL, token, alertID)
}
