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
// the response body only tells apart the 424s of an idle service, of a
// service in another state and others, and a 404 of the API (its JSON error
// body) from a 404 of whatever else answers at the URL.
const (
	// ReasonUnauthorized is a 401: the credential is wrong or missing.
	ReasonUnauthorized Reason = "Unauthorized"
	// ReasonForbidden is a 403: the credential may not do this.
	ReasonForbidden Reason = "Forbidden"
	// ReasonNotFound is a 404 that the API itself sent (its JSON error body,
	// or the alert API's bare "Not Found"): unknown organization, service or
	// alert.
	ReasonNotFound Reason = "NotFound"
	// ReasonEndpointNotFound is a 404 whose body is not the API's: an HTML
	// page such as "Cannot GET /v1/...", or plain text. The URL reaches a web
	// server but no such route of the API: a wrong base URL or path prefix.
	ReasonEndpointNotFound Reason = "EndpointNotFound"
	// ReasonBadRequest is a 400: the service rejected the request as
	// malformed, such as an alert ID that is not one ("Params validation
	// failed: id: Invalid ObjectId"). The same request fails again.
	ReasonBadRequest Reason = "BadRequest"
	// ReasonRateLimited is a 429, or a call held back by the client because
	// of an earlier 429 on its budget; see Error.RetryAfter and RetryAt.
	ReasonRateLimited Reason = "RateLimited"
	// ReasonServerError is any 5xx.
	ReasonServerError Reason = "ServerError"
	// ReasonInvalidResponse is a response that cannot be used: bad JSON,
	// wrong shape, wrong content type, or a body over the size cap.
	ReasonInvalidResponse Reason = "InvalidResponse"
	// ReasonDecodeBudgetExceeded is a list answer whose decoding cost more
	// work than Options.MaxDecodeWork allows, far more than any real answer
	// does (see DefaultDecodeWorkPerByte): decoding stopped there, and
	// nothing of the answer is kept. The same answer fails again.
	ReasonDecodeBudgetExceeded Reason = "DecodeBudgetExceeded"
	// ReasonUnreachable is a failure with no usable response: DNS,
	// connection, TLS, timeout, or the caller's context ending.
	ReasonUnreachable Reason = "Unreachable"
	// ReasonServiceIdle is a 424 whose body says the service is idle (the
	// cloud answers so while a service is paused): nothing is wrong with the
	// request, the data cannot be read until the service runs again.
	ReasonServiceIdle Reason = "ServiceIdle"
	// ReasonServiceNotRunning is a 424 whose body says the service is in
	// another state than running or idle, such as stopped, stopping or awaking
	// (Error.ServiceState): like an idle service, nothing is wrong with the
	// request, and the data cannot be read until the service runs.
	ReasonServiceNotRunning Reason = "ServiceNotRunning"
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
	OperationListAlerts                  = "list_alerts"
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
	// ServiceState is the state of the service a 424 names (from the body's
	// serviceState, or "Current state: ..." in its words), cleaned like
	// Message; "" when it names none.
	ServiceState string
	// Location is where a 3xx points, reduced to scheme, host and path (no
	// user info, query or fragment) and scrubbed: what the user needs to fix
	// the URL in the spec. The redirect is never followed, so the credential
	// never reaches another origin.
	Location string
	// RetryAfter is how long to wait before calling again, for RateLimited,
	// and for a 503 (ServerError) that sent Retry-After.
	RetryAfter time.Duration
	// RetryAt is when calling again is allowed: the client's clock at the
	// answer plus RetryAfter. For RateLimited it is persisted and given back
	// to ratebudget.Store.Hold after a restart; a 503's wait holds back only
	// the caller of the failed call (see Client.statusError). Zero when the
	// service gave no wait.
	RetryAt time.Time
	// Operation is one of the Operation* constants.
	Operation string
	// Err is the underlying cause, if any (a transport error, a decoding
	// error, the context's error).
	Err error

	// fromAPI: the body of the failed call was a JSON object, as the APIs'
	// own error bodies are (not a proxy's or a web server's page): the API
	// answered, so a 404 of a list is about what was listed, not a route.
	fromAPI bool
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
	if e.ServiceState != "" && !strings.Contains(strings.ToLower(e.Message), strings.ToLower(e.ServiceState)) {
		b.WriteString(" (service state ")
		b.WriteString(e.ServiceState)
		b.WriteByte(')')
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.Location != "" {
		b.WriteString(" (redirect to ")
		b.WriteString(e.Location)
		b.WriteString(" not followed)")
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

// notRunningRE finds "not running" in a 424's message.
var notRunningRE = regexp.MustCompile(`(?i)\bnot running\b`)

// currentStateRE finds the state a 424's message names, as in
// "FAILED_DEPENDENCY: Service is not running. Current state: stopped".
var currentStateRE = regexp.MustCompile(`(?i)\bcurrent state:\s*([a-z][a-z_-]*)`)

// serviceIsRE finds a state of a service that is neither running nor idle
// in a 424's message, as in "FAILED_DEPENDENCY: Service is stopping": a
// service on its way down or up cannot serve the call any more than a
// stopped one. The states are those of the service lifecycle; another word
// after "Service is" says nothing of a state.
var serviceIsRE = regexp.MustCompile(`(?i)\bservice is (stopping|stopped|starting|awaking|waking|provisioning|terminating|terminated)\b`)

// maxServiceStateRunes bounds Error.ServiceState.
const maxServiceStateRunes = 32

// reasonForResponse maps an HTTP status code that is not a success, and what
// the body says, to a reason. op tells the alert API's 404s apart.
func reasonForResponse(code int, d errorDetails, op string) Reason {
	switch {
	case code == 424:
		return reasonFor424(d)
	case code == 400:
		return ReasonBadRequest
	case code == 401:
		return ReasonUnauthorized
	case code == 403:
		return ReasonForbidden
	case code == 404:
		if isAPINotFound(d, op) {
			return ReasonNotFound
		}
		return ReasonEndpointNotFound
	case code == 429:
		return ReasonRateLimited
	case code >= 500 && code <= 599:
		return ReasonServerError
	default:
		return ReasonUnexpectedStatus
	}
}

// reasonFor424 reads a 424 (Failed Dependency): the management API answers
// it when the service cannot serve the call. A structured body says why in
// code and serviceState; an older one only in its words.
func reasonFor424(d errorDetails) Reason {
	state := serviceStateOf(d)
	switch {
	case strings.EqualFold(d.Code, "SERVICE_IDLE"), strings.EqualFold(state, "idle"):
		return ReasonServiceIdle
	case state != "", strings.EqualFold(d.Code, "SERVICE_NOT_RUNNING"), notRunningRE.MatchString(d.Message):
		return ReasonServiceNotRunning
	case idleRE.MatchString(d.Message):
		return ReasonServiceIdle
	}
	return ReasonUnexpectedStatus
}

// serviceStateOf is the state of the service a 424 names: serviceState, or
// "Current state: ..." or "Service is stopping" (see serviceIsRE) in its
// words; "" for none.
func serviceStateOf(d errorDetails) string {
	if s := strings.TrimSpace(d.ServiceState); s != "" {
		return s
	}
	for _, re := range []*regexp.Regexp{currentStateRE, serviceIsRE} {
		if m := re.FindStringSubmatch(d.Message); m != nil {
			return m[1]
		}
	}
	return ""
}

// isAPINotFound tells a 404 the API sent about a resource from one of a web
// server that has no such route. The APIs answer errors with a JSON object;
// an empty body tells nothing either way and keeps the older reading. The
// alert API also answers a missing alert with the bare status text "Not
// Found" (its server's default for a 404 it sends itself), which a route
// that does not exist never does: that server's own 404 is an HTML page
// "Cannot GET /...".
func isAPINotFound(d errorDetails, op string) bool {
	switch d.Shape {
	case shapeJSONObject, shapeEmpty:
		return true
	case shapeText, shapeJSONString:
		return op == OperationGetAlert && strings.EqualFold(strings.TrimSpace(d.Message), "Not Found")
	}
	return false
}
