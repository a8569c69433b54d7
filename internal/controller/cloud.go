package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/controller/readrunner"
	"github.com/servicewatch/servicewatch/internal/controller/sharedread"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// Cloud is what the reconciler reads of the cloud; *cloudapi.Client is the
// real one.
type Cloud interface {
	ListPipes(ctx context.Context, baseURL string, creds cloudapi.BasicCredentials, organizationID, serviceID string, opts cloudapi.ListOptions[swv1.Pipe]) (cloudapi.List[swv1.Pipe], error)
	ListReversePrivateEndpoints(ctx context.Context, baseURL string, creds cloudapi.BasicCredentials, organizationID, serviceID string, opts cloudapi.ListOptions[swv1.ReversePrivateEndpoint]) (cloudapi.List[swv1.ReversePrivateEndpoint], error)
	GetAlertFrom(ctx context.Context, src cloudapi.AlertSource, alertID string) (cloudapi.AlertResult, error)
	ListAlerts(ctx context.Context, src cloudapi.AlertSource, page cloudapi.AlertPageRequest) (cloudapi.AlertPage, error)
}

// Budgets is what the reconciler asks of the rate budgets before it calls
// the cloud; *ratebudget.Store is the real one, shared with the Cloud's
// client.
type Budgets interface {
	// Admit reserves n calls of a budget before they are made, or says how
	// long to wait; see ratebudget.Store.Admit.
	Admit(api, baseURL string, cred ratebudget.CredentialID, n int) time.Duration
	// Hold keeps every call of a budget back until until, as a 429's
	// Retry-After does; see ratebudget.Store.Hold.
	Hold(api, baseURL string, cred ratebudget.CredentialID, until time.Time)
	// Allowance is the calls per second budget (a BudgetID of api) admits;
	// 0 means unlimited.
	Allowance(api, budget string) float64
	// MaxBatch is the most calls of api one Admit can ever reserve; 0
	// means unlimited.
	MaxBatch(api string) int
}

// sharedFreshness is how long a finished read is reused by the other watches
// that read the same thing. Watches of one service sync at the same phase
// (phaseBook), so the reads of a group start within the jitter (at most 1 s)
// plus the time the workers take to reach each of them: 3 s covers that.
// It stays under backoffBase, so the retry after a transient failure always
// calls again, and at a tenth of the shortest interval (swv1.MinInterval), so a
// shared result is never much older than a watch's own read would have been.
const sharedFreshness = 3 * time.Second

// readKey names one read exactly. Two reads share a call only when every
// input of the call is equal, the credential included by its full digest: a
// tenant must never see data read with another tenant's credential, and
// truncation must not depend on who read first.
type readKey struct {
	// kind is what is read (pipesReadKind...).
	kind string
	// url is the API's base URL as the watch names it, unnormalized.
	url            string
	credential     cloudapi.CredentialDigest
	organizationID string
	serviceID      string
	alertID        string
	// keepBytes is the list's size bound, for the lists.
	keepBytes int
}

// The kinds of reads.
const (
	pipesReadKind     = "pipes"
	endpointsReadKind = "reverse_private_endpoints"
	alertReadKind     = "alert"
	alertListReadKind = "alert_list"
)

// newSharedReads returns the reconciler's shared reads: every read they
// hold was made with a credential the watches that share it hold too. A
// refused admission is the watch's own, never the cloud's answer: it is not
// reused.
func newSharedReads(freshness time.Duration, now func() time.Time) *sharedread.Reads[readKey] {
	return sharedread.New[readKey](freshness, now, func(err error) bool {
		_, refused := errors.AsType[*budgetRefusalError](err)
		return !refused
	})
}

// expectRetry is how soon a watch whose read another watch was just admitted
// for looks again: by then that read has begun, and the watch joins it.
const expectRetry = 100 * time.Millisecond

// budgetRefusalError is a read that admission left to a shared read which was
// gone when the read ran, and whose own call the budget then refused: it
// waits for a later sync rather than call without admission.
type budgetRefusalError struct {
	api  string
	wait time.Duration
	// page, when positive, is the page of an alert list that waits (from
	// 1), of pages the list was known to need.
	page, pages int
}

func (b *budgetRefusalError) Error() string {
	if b.page > 1 {
		return fmt.Sprintf("page %d of %d of the alert list would wait %s more for room in the %s API's rate budget, longer than a sync waits; "+
			"the alerts keep their last complete list, and the next sync reserves its pages with its other calls, as many as the key admits at once",
			b.page, max(b.page, b.pages), b.wait.Round(time.Second), b.api)
	}
	return fmt.Sprintf("waiting %s for room in the %s API's rate budget", b.wait.Round(time.Second), b.api)
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
	return holding(ctx, c.slots, baseURL, func() (cloudapi.List[swv1.Pipe], error) {
		return c.Cloud.ListPipes(ctx, baseURL, creds, organizationID, serviceID, opts)
	})
}

// ListReversePrivateEndpoints lists the endpoints holding the management
// host's slot.
func (c slottedCloud) ListReversePrivateEndpoints(ctx context.Context, baseURL string, creds cloudapi.BasicCredentials, organizationID, serviceID string, opts cloudapi.ListOptions[swv1.ReversePrivateEndpoint]) (cloudapi.List[swv1.ReversePrivateEndpoint], error) {
	return holding(ctx, c.slots, baseURL, func() (cloudapi.List[swv1.ReversePrivateEndpoint], error) {
		return c.Cloud.ListReversePrivateEndpoints(ctx, baseURL, creds, organizationID, serviceID, opts)
	})
}

// GetAlertFrom fetches an alert holding its host's slot.
func (c slottedCloud) GetAlertFrom(ctx context.Context, src cloudapi.AlertSource, alertID string) (cloudapi.AlertResult, error) {
	return holding(ctx, c.slots, src.BaseURL, func() (cloudapi.AlertResult, error) { return c.Cloud.GetAlertFrom(ctx, src, alertID) })
}

// ListAlerts reads a page of alerts holding its host's slot.
func (c slottedCloud) ListAlerts(ctx context.Context, src cloudapi.AlertSource, page cloudapi.AlertPageRequest) (cloudapi.AlertPage, error) {
	return holding(ctx, c.slots, src.BaseURL, func() (cloudapi.AlertPage, error) { return c.Cloud.ListAlerts(ctx, src, page) })
}

// holding makes call while holding baseURL's host's slot of slots.
func holding[T any](ctx context.Context, slots *readrunner.Slots, baseURL string, call func() (T, error)) (T, error) {
	release, err := slots.Hold(ctx, baseURL)
	if err != nil {
		var none T
		return none, err
	}
	defer release()
	return call()
}
