package cloudapi

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Reason classifies why a call failed. The controller maps it to a condition
// reason, so the values are CamelCase words.
type Reason string

// The reasons a call can fail for. The HTTP status code decides the reason;
// the response body only tells an idle service's 424 from other 424s.
const (
	// ReasonUnauthorized is a 401: the credential is wrong or missing.
	ReasonUnauthorized Reason = "Unauthorized"
	// ReasonForbidden is a 403: the credential may not do this.
	ReasonForbidden Reason = "Forbidden"
	// ReasonNotFound is a 404: unknown organization, service or alert.
	ReasonNotFound Reason = "NotFound"
	// ReasonRateLimited is a 429, or a call held back by the client because
	// of an earlier 429 on its budget; see Error.RetryAfter and RetryAt.
	ReasonRateLimited Reason = "RateLimited"
	// ReasonServerError is any 5xx.
	ReasonServerError Reason = "ServerError"
	// ReasonInvalidResponse is a response that cannot be used: bad JSON,
	// wrong shape, wrong content type, or a body over the size cap.
	ReasonInvalidResponse Reason = "InvalidResponse"
	// ReasonUnreachable is a failure with no usable response: DNS,
	// connection, TLS, timeout, or the caller's context ending.
	ReasonUnreachable Reason = "Unreachable"
	// ReasonServiceIdle is a 424 whose body says the service is idle (the
	// cloud answers so while a service is paused): nothing is wrong with the
	// request, the data cannot be read until the service runs again.
	ReasonServiceIdle Reason = "ServiceIdle"
	// ReasonUnexpectedStatus is any other status (3xx, other 4xx); see
	// Error.StatusCode.
	ReasonUnexpectedStatus Reason = "UnexpectedStatus"
	// ReasonAddressNotAllowed is a call that was never sent because its
	// host resolved only to addresses the client refuses to connect to
	// (Options.DenyLocalAddresses): loopback, unspecified, link-local, cloud
	// metadata.
	ReasonAddressNotAllowed Reason = "AddressNotAllowed"
	// ReasonConfigurationError is a call that was never sent because its
	// inputs cannot make a valid request: a base URL that is not an absolute
	// http(s) URL, an empty identifier, an empty or malformed credential.
	ReasonConfigurationError Reason = "ConfigurationError"
)

// The operation names used in Error.Operation and passed to the Observer.
const (
	OperationListPipes                   = "list_pipes"
	OperationListReversePrivateEndpoints = "list_reverse_private_endpoints"
	OperationGetAlert                    = "get_alert"
)

// The API names passed to the Observer.
const (
	APIManagement = "management"
	APIAlert      = "alert"
)

// Error is the only error type the client returns.
type Error struct {
	// Reason classifies the failure.
	Reason Reason
	// StatusCode is the HTTP status, or 0 when there was no response.
	StatusCode int
	// RequestID is the service's request ID, from the body or an
	// X-Request-Id header, when there was one.
	RequestID string
	// Message is the service's own words, trimmed to at most 200 characters,
	// with HTML reduced to its title and credentials removed.
	Message string
	// RetryAfter is how long to wait before calling again, for RateLimited.
	RetryAfter time.Duration
	// RetryAt is when calling again is allowed, for RateLimited: the
	// client's clock at the answer plus RetryAfter, to persist and give back
	// to Client.Hold after a restart. Zero when the service gave no wait.
	RetryAt time.Time
	// Operation is one of the Operation* constants.
	Operation string
	// Err is the underlying cause, if any (a transport error, a decoding
	// error, the context's error).
	Err error
}

// Error returns a one-line description such as
// "list pipes: 404 NotFound: service not found (requestId 1234...)".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(strings.ReplaceAll(e.Operation, "_", " "))
	b.WriteString(": ")
	if e.StatusCode != 0 {
		b.WriteString(strconv.Itoa(e.StatusCode))
		b.WriteByte(' ')
	}
	b.WriteString(string(e.Reason))
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.RetryAfter > 0 {
		b.WriteString(" (retry after ")
		b.WriteString(e.RetryAfter.Round(time.Millisecond).String())
		b.WriteByte(')')
	}
	if e.RequestID != "" {
		b.WriteString(" (requestId ")
		b.WriteString(e.RequestID)
		b.WriteByte(')')
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// ReasonOf returns the Reason of err: "" for nil, the Reason of the first
// *Error in its chain, and ReasonUnreachable for any other error. The client
// only returns *Error; treating a foreign error as Unreachable means the
// controller retries on its schedule rather than stalling on it.
func ReasonOf(err error) Reason {
	if err == nil {
		return ""
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Reason
	}
	return ReasonUnreachable
}

// RetryAfterOf returns the wait the service asked for when err is a
// RateLimited *Error, and 0 otherwise.
func RetryAfterOf(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) && e.Reason == ReasonRateLimited {
		return e.RetryAfter
	}
	return 0
}

// idleRE finds the word "idle" in a 424's message, such as "FAILED_DEPENDENCY:
// Service is not running. Current state: idle".
var idleRE = regexp.MustCompile(`(?i)\bidle\b`)

// reasonForResponse maps an HTTP status code that is not a success, and the
// service's words, to a reason.
func reasonForResponse(code int, message string) Reason {
	switch {
	case code == 424 && idleRE.MatchString(message):
		return ReasonServiceIdle
	case code == 401:
		return ReasonUnauthorized
	case code == 403:
		return ReasonForbidden
	case code == 404:
		return ReasonNotFound
	case code == 429:
		return ReasonRateLimited
	case code >= 500 && code <= 599:
		return ReasonServerError
	default:
		return ReasonUnexpectedStatus
	}
}
