package cloudapi

import (
	"context"
	"errors"
)

// AlertSource locates where one watch's alerts are served: the alert API
// (Bearer token, {url}/api/v2/alerts...) or the management API of one
// service (the organization key, HTTP Basic,
// {url}/v1/organizations/{org}/services/{svc}/observability/alerts...,
// answers in the management envelope {status, requestId, result}).
type AlertSource struct {
	// API is APIAlert or APIManagement: which host, credential and budget.
	API string
	// BaseURL is the host's base URL, as GetAlert and ListPipes take it.
	BaseURL string
	// Token is the alert API token, when API is APIAlert.
	Token BearerToken
	// Key is the management key, when API is APIManagement.
	Key BasicCredentials
	// OrganizationID is the organization, when API is APIManagement.
	OrganizationID string
	// ServiceID is the service whose alerts are read, when API is
	// APIManagement.
	ServiceID string
}

// AlertPageRequest asks for one page of a host's alert list.
type AlertPageRequest struct {
	// Limit is the page size, 1 to MaxAlertPageLimit; 0 means the host's
	// default (MaxAlertPageLimit).
	Limit int
	// Offset is the position of the page's first alert in the list.
	Offset int
}

// MaxAlertPageLimit is the largest page both hosts serve, and their
// default.
const MaxAlertPageLimit = 1000

// AlertPage is one page of a host's alert list.
type AlertPage struct {
	// Alerts in the cloud's order, each decoded and scrubbed exactly as
	// GetAlert decodes one (its own id in Alert.ID, LeftOut per alert).
	Alerts []AlertResult
	// Total is meta.total, or -1 when the answer has no meta (an older
	// server's {data:[...]} or the management API's bare-array result):
	// then Alerts is the whole list.
	Total int
	// Offset is meta.offset as sent (the request's when absent).
	Offset int
	// RequestID as GetAlert reports it.
	RequestID string
}

// ErrNoListRoute is matched (errors.Is) by the error of a ListAlerts whose
// host has no list route: it answered 404 or 405 (Express's "Cannot GET"
// page included), or a 2xx body that is not a list. Any other failure
// (401, 429, 5xx, a transport error) is NOT ErrNoListRoute: the host may
// well list, it just failed this time.
var ErrNoListRoute = errors.New("the host has no alert list route")

// GetAlertFrom reads one alert from either host. Same decoding, scrubbing,
// LeftOut and error classification as GetAlert (management errors as the
// management API's: envelope words, X-RateLimit-Reset on 429).
func (c *Client) GetAlertFrom(ctx context.Context, src AlertSource, alertID string) (AlertResult, error) {
	// Interface stub: the alert API only, until the management route lands.
	return c.GetAlert(ctx, src.BaseURL, src.Token, alertID)
}

// ListAlerts reads one page of the alerts a source serves: the alert API's
// GET {url}/api/v2/alerts?limit=&offset= or the management API's GET
// .../observability/alerts?limit=&offset=.
func (c *Client) ListAlerts(_ context.Context, _ AlertSource, _ AlertPageRequest) (AlertPage, error) {
	// Interface stub: every host reads as one without a list route until
	// the list lands, so that callers fall back to GetAlertFrom.
	return AlertPage{}, &Error{Reason: ReasonEndpointNotFound, Operation: OperationListAlerts, Err: ErrNoListRoute}
}
