package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/controller/reads"
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
func newSharedReads(freshness time.Duration, now func() time.Time) *reads.Shared[readKey] {
	return reads.NewShared[readKey](freshness, now, func(err error) bool {
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
// slot (reads.Slots) while it runs. Admission asks no slot: it calls
// nothing.
type slottedCloud struct {
	Cloud
	slots *reads.Slots
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
func holding[T any](ctx context.Context, slots *reads.Slots, baseURL string, call func() (T, error)) (T, error) {
	release, err := slots.Hold(ctx, baseURL)
	if err != nil {
		var none T
		return none, err
	}
	defer release()
	return call()
}

// readFailed is the result of a part whose read failed, or whose call waits
// for room in the budget: the part is deferred, its data and condition stay.
func readFailed(err error) partResult {
	if waiting := deferral(err); waiting != nil {
		return partResult{deferred: waiting}
	}
	return partResult{failure: cloudFailure(err)}
}

// deferral is why a read waits for a later sync, nil when it does not.
func deferral(err error) *failure {
	refused, ok := errors.AsType[*budgetRefusalError](err)
	if !ok {
		return nil
	}
	return newFailure(swv1.ReasonRateLimited, "%s", refused.Error())
}

// failure is why one part of a sync failed, classified once, where it arose,
// into what the status needs: a condition reason, a message for the user, and
// how long the service asked us to wait. Whether only the user can fix it
// follows from the reason (isStalledReason).
type failure struct {
	reason     string
	message    string
	retryAfter time.Duration
}

func (f *failure) Error() string { return f.reason + ": " + f.message }

func newFailure(reason, format string, args ...any) *failure {
	return &failure{reason: reason, message: fmt.Sprintf(format, args...)}
}

// isStalledReason tells the reasons that retrying cannot fix until the user
// acts: kstatus reports them as Stalled.
func isStalledReason(reason string) bool {
	switch reason {
	case swv1.ReasonSecretNotFound, swv1.ReasonSecretKeyMissing, swv1.ReasonUnauthorized,
		swv1.ReasonForbidden, swv1.ReasonEndpointNotFound, swv1.ReasonBadRequest, swv1.ReasonConfigurationError,
		swv1.ReasonURLNotAllowed, swv1.ReasonAddressNotAllowed, swv1.ReasonAccountNotFound, swv1.ReasonAccountNotAllowed,
		swv1.ReasonListNotServed:
		return true
	}
	return false
}

// isTransientReason tells the reasons that a retry soon may fix: they back
// off. The others wait for the interval: stalled ones for the user, an idle
// or otherwise not running service (or a too costly answer) for its owner.
func isTransientReason(reason string) bool {
	return !isStalledReason(reason) && reason != swv1.ReasonServiceIdle && reason != swv1.ReasonServiceNotRunning && reason != swv1.ReasonDecodeBudgetExceeded
}

// cloudFailure classifies an error of the cloud client. The message keeps the
// client's words (never a credential: the client scrubs them) and adds what
// the user can do about it.
func cloudFailure(err error) *failure {
	if panicked, ok := errors.AsType[*reads.PanicError](err); ok {
		return panicFailure(panicked.Value)
	}
	var cerr *cloudapi.Error
	if !errors.As(err, &cerr) {
		return &failure{reason: swv1.ReasonUnreachable, message: err.Error()}
	}
	f := &failure{reason: conditionReason(cerr.Reason), message: cerr.Error(), retryAfter: cerr.RetryAfter}
	switch cerr.Reason {
	case cloudapi.ReasonUnauthorized:
		f.message += "; check the key or token in the referenced Secret"
	case cloudapi.ReasonForbidden:
		f.message += "; the credential lacks permission for this organization or service"
	case cloudapi.ReasonAddressNotAllowed:
		f.message += "; the manager runs with --deny-local-addresses: use a URL that leads elsewhere"
	case cloudapi.ReasonNotFound:
		f.message += byAPI(cerr.Operation, "; check the ID in spec.alertIds",
			"; check spec.organizationId and spec.serviceId")
	case cloudapi.ReasonEndpointNotFound:
		f.message += byAPI(cerr.Operation, "; the URL does not reach the alert API: check spec.alertApi.url (or the manager's --alert-api-url) and its path prefix",
			"; the URL does not reach the management API: check spec.managementApi.url (or the manager's --management-api-url) and its path prefix")
	case cloudapi.ReasonBadRequest:
		f.message += byAPI(cerr.Operation, "; the alert API rejected the request: check the ID in spec.alertIds",
			"; the management API rejected the request: check spec.organizationId and spec.serviceId")
	case cloudapi.ReasonUnexpectedStatus:
		if cerr.Location != "" {
			f.message += byAPI(cerr.Operation, "; if the alert API moved, set spec.alertApi.url (or --alert-api-url) to its new base URL",
				"; if the management API moved, set spec.managementApi.url (or --management-api-url) to its new base URL")
		}
	case cloudapi.ReasonServiceNotRunning:
		f.message += "; the service is not running"
		if cerr.ServiceState != "" {
			f.message += " (" + cerr.ServiceState + ")"
		}
		f.message += ": the data in status is kept and the part is retried every interval; start the service to resume"
	}
	return f
}

// byAPI is the hint for a failed operation: alert for the alert API's one
// operation, management for the management API's.
func byAPI(operation, alert, management string) string {
	if operation == cloudapi.OperationGetAlert || operation == cloudapi.OperationListAlerts {
		return alert
	}
	return management
}

// conditionReason maps a client reason to a condition reason. They share
// their spelling; the switch keeps the mapping explicit should either change.
func conditionReason(r cloudapi.Reason) string {
	switch r {
	case cloudapi.ReasonUnauthorized:
		return swv1.ReasonUnauthorized
	case cloudapi.ReasonForbidden:
		return swv1.ReasonForbidden
	case cloudapi.ReasonNotFound:
		return swv1.ReasonNotFound
	case cloudapi.ReasonEndpointNotFound:
		return swv1.ReasonEndpointNotFound
	case cloudapi.ReasonBadRequest:
		return swv1.ReasonBadRequest
	case cloudapi.ReasonRateLimited:
		return swv1.ReasonRateLimited
	case cloudapi.ReasonServerError:
		return swv1.ReasonServerError
	case cloudapi.ReasonInvalidResponse:
		return swv1.ReasonInvalidResponse
	case cloudapi.ReasonDecodeBudgetExceeded:
		return swv1.ReasonDecodeBudgetExceeded
	case cloudapi.ReasonConfigurationError:
		return swv1.ReasonConfigurationError
	case cloudapi.ReasonServiceIdle:
		return swv1.ReasonServiceIdle
	case cloudapi.ReasonAddressNotAllowed:
		return swv1.ReasonAddressNotAllowed
	case cloudapi.ReasonServiceNotRunning:
		return swv1.ReasonServiceNotRunning
	case cloudapi.ReasonUnexpectedStatus:
		return swv1.ReasonUnexpectedStatus
	default:
		return swv1.ReasonUnreachable
	}
}

// recoverAs turns a panic of a read into the read's failure: a bug that one
// tenant's cloud answer triggers must fail that watch's sync, not stop the
// manager for every tenant. A panic in any goroutine ends the process, so
// each goroutine that reads the cloud recovers on its own.
func recoverAs(f **failure) {
	//nolint:revive // recoverAs is itself the deferred call (defer recoverAs(…)), so recover sees the panic.
	if p := recover(); p != nil {
		*f = panicFailure(p)
	}
}

// panicFailure is the failure of a read that panicked, in its own goroutine
// (recoverAs) or in a read shared with other watches (reads.PanicError).
func panicFailure(value any) *failure {
	return newFailure(swv1.ReasonInvalidResponse, "reading the cloud failed inside the operator (a bug: please report it): %v", value)
}
