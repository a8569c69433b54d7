package cloudapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
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
	// Each, when set, is handed each alert of the page as soon as it is
	// decoded and scrubbed, in order, and the page keeps none of them
	// (AlertPage.Alerts stays empty): the caller keeps what it uses and
	// the rest is dropped as it streams. Each returns the work its own
	// look at the alert cost (a selector's match, say), charged to the
	// answer's work budget with the decoding's. The alert's RequestID is
	// not set: the answer's is known only at its end (AlertPage.RequestID).
	Each func(a *AlertResult) (work int)
	// Work, when set, is told the work the answer cost (its decoding,
	// scrubbing and Each), whether it was read whole or not, as
	// ListOptions.Work is: the caller charges it to the namespace's share.
	Work func(units int64)
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
	// Skipped counts the items of the page that are not in Alerts: items
	// that are not JSON objects, alerts without a string id (nothing could
	// name them), and alerts whose text could not be scrubbed within
	// Options.MaxScrubWork. The other alerts of the page are unaffected.
	Skipped int
	// Read counts the alerts of the page read: those in Alerts, or handed
	// to AlertPageRequest.Each. Read+Skipped is at most the request's
	// limit (MaxAlertPageLimit when 0).
	Read int
	// Beyond counts the items the host sent past the request's limit:
	// skipped unread, neither decoded nor kept, so that one answer keeps at
	// most the limit asked for, whatever the host sends.
	Beyond int
}

// ErrNoListRoute is matched (errors.Is) by the error of a ListAlerts whose
// host has no list route: it answered 404 or 405 with a body that is not
// the API's own JSON error (Express's "Cannot GET" page, plain text,
// nothing), or a 2xx body that is not a list. Any other failure (401, 429,
// 5xx, a transport error) is NOT ErrNoListRoute: the host may well list, it
// just failed this time; nor is a 404 in the API's own words, such as the
// management API's {"status":404,"error":"Service not found"}: the route
// is there, what it lists is not.
var ErrNoListRoute = errors.New("the host has no alert list route")

// GetAlertFrom reads one alert from either host. Same decoding, scrubbing,
// LeftOut and error classification as GetAlert (management errors as the
// management API's: envelope words, X-RateLimit-Reset on 429).
func (c *Client) GetAlertFrom(ctx context.Context, src AlertSource, alertID string) (AlertResult, error) {
	op := OperationGetAlert
	if alertID == "" {
		return AlertResult{}, configError(op, errors.New("alert ID must not be empty"))
	}
	cl, err := alertCall(src, op, alertID)
	if err != nil {
		return AlertResult{}, err
	}
	var result AlertResult
	cl.own = redact.NewScrubber(cl.cred.secrets())
	cl.scrub = cl.own.Within(ctx, c.opts.MaxScrubWork)
	cl.limit = c.opts.MaxAlertResponseBytes
	cl.read = func(status int, header http.Header, body io.Reader) (string, error) {
		raw, err := io.ReadAll(body)
		if err != nil {
			return cl.scrub.Clean(header.Get("X-Request-ID")), err
		}
		var requestID string
		if src.API == APIManagement {
			requestID, result.Alert, result.LeftOut, err = decodeManagedAlert(raw, status, cl.scrub)
		} else {
			result.Alert, result.LeftOut, err = decodeAlert(raw, cl.scrub)
		}
		if requestID == "" {
			requestID = header.Get("X-Request-ID")
		}
		result.RequestID = cl.scrub.Clean(requestID)
		if serr := cl.scrub.Err(); err == nil && serr != nil {
			// Its texts that could not be scrubbed are gone: so is the alert.
			err = fmt.Errorf("the alert is not kept: %w", serr)
		}
		return result.RequestID, err
	}
	if err := c.do(ctx, cl); err != nil {
		return AlertResult{}, err
	}
	return result, nil
}

// alertCall is the call of op on src's alerts, its path ending in
// segments; a ConfigurationError when src cannot make one.
func alertCall(src AlertSource, op string, segments ...string) (call, error) {
	var cred Credential
	var path []string
	switch src.API {
	case APIAlert:
		if err := src.Token.validate(); err != nil {
			return call{}, configError(op, err)
		}
		cred, path = src.Token, []string{"api", "v2", "alerts"}
	case APIManagement:
		if err := src.Key.validate(); err != nil {
			return call{}, configError(op, err)
		}
		if src.OrganizationID == "" || src.ServiceID == "" {
			return call{}, configError(op, errors.New("organization ID and service ID must not be empty"))
		}
		cred = src.Key
		path = []string{"v1", "organizations", src.OrganizationID, "services", src.ServiceID, "observability", "alerts"}
	default:
		return call{}, configError(op, fmt.Errorf("alerts are served by the %q or the %q API, not %q", APIAlert, APIManagement, src.API))
	}
	u, err := buildURL(src.BaseURL, append(path, segments...)...)
	if err != nil {
		return call{}, configError(op, err)
	}
	return call{api: src.API, op: op, baseURL: src.BaseURL, url: u, cred: cred}, nil
}

// managedAlertEnvelope is the management API's answer of one alert.
type managedAlertEnvelope struct {
	Status    *int64          `json:"status"`
	RequestID *string         `json:"requestId"`
	Result    json.RawMessage `json:"result"`
	Error     json.RawMessage `json:"error"`
	Message   json.RawMessage `json:"message"`
}

// decodeManagedAlert decodes the management API's answer of one alert,
// {"status":200,"requestId":..,"result":{...}}, its alert read and cleaned
// as decodeAlert does. An envelope whose status disagrees with the HTTP
// status is an envelopeStatusError with its words.
func decodeManagedAlert(body []byte, httpStatus int, s *redact.Scrubber) (requestID string, a swv1.AlertStatus, leftOut []string, err error) {
	var env managedAlertEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return "", a, nil, fmt.Errorf("decode management envelope: %w", err)
	}
	requestID = deref(env.RequestID)
	if env.Status != nil && *env.Status != int64(httpStatus) {
		words := envelopeWords(env.Error, env.Message)
		return requestID, a, nil, &envelopeStatusError{Status: *env.Status, HTTPStatus: httpStatus, words: &words}
	}
	if lenient.FirstByte(env.Result) != '{' {
		return requestID, a, nil, errors.New("management envelope result is not an alert object")
	}
	a, leftOut = lenient.ReadAlert(env.Result)
	cleanAlert(&a, s)
	return requestID, a, leftOut, nil
}

// envelopeWords are the words of an envelope's error or message member: a
// string, or an object's message; error first, as the spec names it.
func envelopeWords(members ...json.RawMessage) string {
	for _, raw := range members {
		if words, ok := lenient.String(raw); ok && words != "" {
			return words
		}
		if obj, ok := lenient.Object(raw); ok {
			if words := firstString(obj, "message", "error"); words != "" {
				return words
			}
		}
	}
	return ""
}

// ListAlerts reads one page of the alerts a source serves: the alert API's
// GET {url}/api/v2/alerts?limit=&offset= or the management API's GET
// .../observability/alerts?limit=&offset=. Its body is read as it streams
// in, capped by Options.MaxResponseBytes and charged to the answer's work
// budget (Options.MaxDecodeWork) like a list of pipes; each alert is read
// and scrubbed as GetAlert reads one, with a scrubbing budget of its own.
// It keeps at most the page's limit of alerts: the items a host sends past
// it are skipped unread (AlertPage.Beyond), and with page.Each it keeps
// none, handing each to the caller as it streams.
func (c *Client) ListAlerts(ctx context.Context, src AlertSource, page AlertPageRequest) (AlertPage, error) {
	op := OperationListAlerts
	if page.Limit < 0 || page.Limit > MaxAlertPageLimit || page.Offset < 0 {
		return AlertPage{}, configError(op, fmt.Errorf("a page of alerts has a limit of 0 (the host's default) to %d and an offset of 0 or more, not limit %d offset %d",
			MaxAlertPageLimit, page.Limit, page.Offset))
	}
	cl, err := alertCall(src, op)
	if err != nil {
		return AlertPage{}, err
	}
	query := url.Values{"offset": {strconv.Itoa(page.Offset)}}
	if page.Limit > 0 {
		query.Set("limit", strconv.Itoa(page.Limit))
	}
	cl.url.RawQuery = query.Encode()
	cl.own = redact.NewScrubber(cl.cred.secrets())
	cl.limit = c.opts.MaxResponseBytes
	var result AlertPage
	cl.read = func(status int, header http.Header, body io.Reader) (string, error) {
		r := newAlertPageReader(ctx, body, status, src.API == APIManagement, cl.own, c.opts.MaxScrubWork, c.opts.MaxDecodeWork)
		r.limit, r.each = cmp.Or(page.Limit, MaxAlertPageLimit), page.Each
		var err error
		result, err = r.read(page.Offset)
		if page.Work != nil {
			page.Work(r.work.Used())
		}
		if result.RequestID == "" {
			result.RequestID = header.Get("X-Request-ID")
		}
		result.RequestID = cl.own.Clean(result.RequestID)
		for i := range result.Alerts {
			result.Alerts[i].RequestID = result.RequestID
		}
		return result.RequestID, err
	}
	if err := c.do(ctx, cl); err != nil {
		return AlertPage{}, noListRoute(err)
	}
	return result, nil
}

// noListRoute marks err as ErrNoListRoute when it says the host has no
// list route: a 404 or a 405 not in the API's own JSON, a 2xx that is not
// JSON or holds no list.
func noListRoute(err error) error {
	e, ok := errors.AsType[*Error](err)
	if !ok || errors.Is(err, ErrNoListRoute) {
		return err
	}
	switch {
	case (e.StatusCode == http.StatusNotFound || e.StatusCode == http.StatusMethodNotAllowed) && !e.fromAPI,
		e.Reason == ReasonInvalidResponse && errors.Is(e.Err, errNotJSON):
		if e.Err == nil {
			e.Err = ErrNoListRoute
		} else {
			e.Err = fmt.Errorf("%w: %w", ErrNoListRoute, e.Err)
		}
	}
	return err
}
