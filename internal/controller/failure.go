package controller

import (
	"errors"
	"fmt"
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/controller/sharedread"
)

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
	if panicked, ok := errors.AsType[*sharedread.PanicError](err); ok {
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
// (recoverAs) or in a read shared with other watches (sharedread.PanicError).
func panicFailure(value any) *failure {
	return newFailure(swv1.ReasonInvalidResponse, "reading the cloud failed inside the operator (a bug: please report it): %v", value)
}
