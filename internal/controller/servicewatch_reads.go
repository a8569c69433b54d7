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

// fetched is a read that ended and waits to be written to status.
type fetched struct {
	// trigger is the trigger the read started for; a read whose watch
	// changed since is stale.
	trigger string
	// every is the interval the watch's budgets allowed when the read began.
	every time.Duration
	// level is the level of the work the read was for.
	level        pacing.Level
	results      []partResult
	reachedCloud bool
	// startedAt is when the read began (its first call then waits for its
	// host's slot only if the host is busy); endedAt when it ended.
	startedAt, endedAt time.Time
}

func newFetches(limits pacing.SlotLimits, timeout time.Duration, now func() time.Time, slotWait func(pacing.Level, time.Duration)) *fetches {
	return readrunner.New[types.NamespacedName, fetched](limits, timeout, now, slotWait)
}

// readRequest is the background read of one sync of the watch key: read
// calls the cloud and tells whether the sync reached it. A read that panics,
// or gets no slot before the sync timeout, ends with no results: the sync
// reads as interrupted.
func readRequest(key types.NamespacedName, trigger string, every time.Duration, level pacing.Level,
	read func(ctx context.Context, slots *readrunner.Slots) ([]partResult, bool)) readrunner.Request[types.NamespacedName, fetched] {
	interrupted := fetched{trigger: trigger, every: every, level: level}
	return readrunner.Request[types.NamespacedName, fetched]{Key: key, Tenant: key.Namespace, Level: level, Interrupted: interrupted,
		Read: func(ctx context.Context, slots *readrunner.Slots) fetched {
			res := interrupted
			res.results, res.reachedCloud = read(ctx, slots)
			return res
		}}
}

// takeRead returns the watch's ended read, if there is one, and forgets it.
func (r *ServiceWatchReconciler) takeRead(key types.NamespacedName) (fetched, bool) {
	ended, ok := r.fetches.Take(key)
	read := ended.Result
	read.startedAt, read.endedAt = ended.StartedAt, ended.EndedAt
	return read, ok
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
