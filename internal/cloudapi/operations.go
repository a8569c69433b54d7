package cloudapi

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
	"github.com/servicewatch/servicewatch/internal/cloudapi/slim"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// The items are decoded straight into the api/v1beta1 types, which carry the
// field documentation users read with kubectl explain: one schema, no copy
// that could drift from it.

// ListOptions bound what a list call keeps of a response.
type ListOptions[T any] struct {
	// KeepBytes bounds the summed JSON size of List.Items, each item counting
	// at least 64 bytes however small its JSON (each item's
	// encoding plus one byte for its comma). <= 0 keeps everything.
	KeepBytes int
	// Charge, when set, is what an item counts against KeepBytes when that
	// is more than its JSON: the caller's measure of what the item costs it
	// kept, such as its size as a Go value (an item of empty nested objects
	// is 60 bytes of JSON and several hundred decoded).
	Charge func(*T) int
	// Each, when set, is called once for every distinct item of the response,
	// in response order, after redaction and before the item is kept or
	// dropped, so the caller can count or project items it will not keep.
	// It must not retain the pointer. For an id that repeats, Each sees its
	// first occurrence, and Replace hears when another takes its place in
	// List.Items.
	//
	// The envelope's status may follow its result, so Each can have seen
	// items of a response the call then rejects: count into a scratch value
	// and use it only when the call succeeds.
	Each func(*T)
	// Replace, when set, hears each time an item whose id repeats takes the
	// place of the one List.Items kept for that id (old as kept, perhaps
	// slimmed: its identity is whole), so that counts made in Each count
	// what the list keeps, whatever the response's order. Of an id that
	// falls outside KeepBytes, Each's first occurrence stays counted.
	Replace func(old, replacement *T)
	// Work, when set, is told once per call how much decoding its answer
	// cost, in units of lenient.Work (about one byte scanned each), whether
	// the call succeeded or not: the caller charges it to whoever asked for
	// the call (see internal/tenancy).
	Work func(units int64)
	// KeepEncoded leaves the items kept in List.Encoded, as JSON, and
	// List.Items nil: for a caller that holds a list until it writes it
	// (a read waiting for its status write), so that what it holds costs
	// the items' JSON, not the items decoded (several times more for small
	// ones).
	KeepEncoded bool
}

// List is what a list call returns.
type List[T any] struct {
	// RequestID is the management envelope's requestId, cleaned as an
	// error's is (credentials scrubbed, at most 200 characters).
	RequestID string
	// Items are the response's distinct items ordered by id (items without an
	// id first, ordered by a hash of their content). When they do not fit
	// ListOptions.KeepBytes, the items that need attention (a failing state,
	// see the API types' NeedsAttention) are kept first, then the others in
	// id order, slimmed and cut to their identities before any is left out
	// (see slim.Keeper); what is kept is still ordered by id. The same items in
	// another order give the same Items: a cloud that shuffles its answer
	// does not change the status.
	//
	// Of items that share an id, the one whose JSON encoding sorts first is
	// kept, and the id counts against KeepBytes with the largest of its
	// encodings: which occurrence comes first decides nothing. An empty id
	// counts as no id.
	Items []T
	// Total counts the distinct items of the response, kept or not.
	Total int
	// Incomplete counts the items of the response of which some fields were
	// left out because their values could not be used (they are kept as
	// sent in the items' otherFields), and the items left out whole because
	// they were not JSON objects. The other items and fields are unaffected.
	Incomplete int
	// IncompleteItems describe the first few of them, each as its id (or
	// "item N") and the paths left out: "p1 (scaling.replicaCpuMillicores)".
	IncompleteItems []string
	// Encoded are the Items still encoded, in the same order, when
	// ListOptions.KeepEncoded asked for them (Items is then nil).
	Encoded slim.Encoded[T]
}

// AlertResult is the result of fetching one alert.
type AlertResult struct {
	// Alert is the value of the response's data member. Its error field is
	// never set: it is the operator's, not the cloud's.
	Alert swv1.AlertStatus
	// RequestID is the X-Request-Id response header, when the alert API sends
	// one (its body carries no request ID).
	RequestID string
	// LeftOut names the members of the alert that were left out because
	// their value was of a type the operator cannot use, such as
	// "threshold" or "channels[2].webhookId": at most 10, in the order of
	// Alert's fields. The other members are in Alert.
	LeftOut []string
}

// MaxCredentialBytes bounds each part of a credential: a key ID, a key
// secret, a token. The cloud's key IDs, key secrets and alert tokens are
// tens of bytes, and bearer tokens in JWT form reach about 2 KB; 4 KiB
// leaves twice that. A longer value is no credential anyone issues, and it
// would cost every call: each response is scrubbed for the credential's
// encodings, as far as 13 bytes per byte of the credential past any cut
// (redact.Scrubber.Reach), and two 4 KiB parts already make an
// Authorization header of 11 KB, past the 8 KiB many servers accept.
const MaxCredentialBytes = 4 << 10

// Credential is a management key or an alert token; its digest identifies
// its rate budgets. BasicCredentials and BearerToken implement it.
type Credential interface {
	ratebudget.CredentialID
	// parts returns the strings that identify the credential, for digests.
	parts() []string
	// secrets returns the strings that must never appear in an error
	// message; the scrubber derives their encodings.
	secrets() []string
	// authorization returns the value of the Authorization header.
	authorization() string
}

// BasicCredentials are a management API key: a key ID and a key secret, sent
// with HTTP Basic authentication. Printing them, with any fmt verb and even
// as an unexported field of another struct, never shows the secret. The zero
// value is an empty key, which calls refuse.
type BasicCredentials struct {
	keyID     string
	keySecret redact.Secret
}

// NewBasicCredentials returns the management API key keyID:keySecret.
func NewBasicCredentials(keyID, keySecret string) BasicCredentials {
	return BasicCredentials{keyID: keyID, keySecret: redact.Hide(keySecret)}
}

// String returns the key ID with the secret redacted.
func (c BasicCredentials) String() string {
	return fmt.Sprintf("BasicCredentials{KeyID: %q, KeySecret: %s}", c.keyID, redact.Placeholder)
}

// GoString is used by %#v; it redacts the secret too.
func (c BasicCredentials) GoString() string { return c.String() }

// Format makes every verb, including %v, %+v, %s, %q and %x, print the
// redacted form, so that no format string can leak the secret.
func (c BasicCredentials) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(c.String())) }

func (c BasicCredentials) authorization() string {
	return "Basic " + c.encoded()
}

// encoded is the base64 of keyID:keySecret, as RFC 7617 builds it.
func (c BasicCredentials) encoded() string {
	return base64.StdEncoding.EncodeToString([]byte(c.keyID + ":" + c.keySecret.Reveal()))
}

// validate rejects credentials that cannot be sent as HTTP Basic (RFC 7617:
// the user ID cannot contain a colon; no control characters anywhere).
func (c BasicCredentials) validate() error {
	secret := c.keySecret.Reveal()
	switch {
	case c.keyID == "" || secret == "":
		return fmt.Errorf("management API key ID and key secret must not be empty")
	case strings.Contains(c.keyID, ":"):
		return fmt.Errorf("management API key ID must not contain a colon")
	case hasControl(c.keyID) || hasControl(secret):
		return fmt.Errorf("management API key must not contain control characters")
	case len(c.keyID) > MaxCredentialBytes || len(secret) > MaxCredentialBytes:
		return fmt.Errorf("management API key ID and key secret must each be at most %d bytes", MaxCredentialBytes)
	}
	return nil
}

func (c BasicCredentials) secrets() []string {
	return []string{c.keySecret.Reveal(), c.encoded()}
}

func (c BasicCredentials) parts() []string {
	return []string{"basic", c.keyID, c.keySecret.Reveal()}
}

// BearerToken is an alert API token. Printing it, with any fmt verb and even
// as an unexported field of another struct, never shows the token. The zero
// value is an empty token, which calls refuse.
type BearerToken struct {
	token redact.Secret
}

// NewBearerToken returns the alert API token token.
func NewBearerToken(token string) BearerToken { return BearerToken{token: redact.Hide(token)} }

// String returns "<redacted>".
func (BearerToken) String() string { return redact.Placeholder }

// GoString returns "<redacted>".
func (BearerToken) GoString() string { return redact.Placeholder }

// Format makes every verb print "<redacted>".
func (BearerToken) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redact.Placeholder)) }

func (t BearerToken) authorization() string { return "Bearer " + t.token.Reveal() }

func (t BearerToken) validate() error {
	token := t.token.Reveal()
	switch {
	case token == "":
		return fmt.Errorf("alert API token must not be empty")
	case hasControl(token):
		return fmt.Errorf("alert API token must not contain control characters")
	case len(token) > MaxCredentialBytes:
		return fmt.Errorf("alert API token must be at most %d bytes", MaxCredentialBytes)
	}
	return nil
}

func (t BearerToken) secrets() []string { return []string{t.token.Reveal()} }

func (t BearerToken) parts() []string { return []string{"bearer", t.token.Reveal()} }

// CredentialDigest is a SHA-256 digest of a credential. Equal digests mean
// equal credentials (unlike Fingerprint, which is short and names a budget),
// so it can key what only callers of the same credential may share, such as a
// result read with it, without keeping the credential itself.
type CredentialDigest [sha256.Size]byte

// Digest is the digest of the key (DigestOf), which names its budgets.
func (c BasicCredentials) Digest() [sha256.Size]byte { return DigestOf(c) }

// Digest is the digest of the token (DigestOf), which names its budgets.
func (t BearerToken) Digest() [sha256.Size]byte { return DigestOf(t) }

// Digest is d itself: a caller waiting for room in a budget asks with the
// digest alone.
func (d CredentialDigest) Digest() [sha256.Size]byte { return d }

// DigestOf returns the digest of cred.
func DigestOf(cred Credential) CredentialDigest {
	return ratebudget.Sum(append([]string{"credential"}, cred.parts()...)...)
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

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

// ListPipes lists the pipes of a service, keeping what opts allow. A
// non-empty objectStorage connectionString reads "<redacted>" in every pipe
// this returns or hands to opts.Each: the credential never leaves the client.
func (c *Client) ListPipes(ctx context.Context, baseURL string, creds BasicCredentials, organizationID, serviceID string, opts ListOptions[swv1.Pipe]) (List[swv1.Pipe], error) {
	return listItems(ctx, c, OperationListPipes, "pipes", decodePipes, opts, baseURL, creds, organizationID, serviceID)
}

// ListReversePrivateEndpoints lists the reverse private endpoints of a
// service, keeping what opts allow.
func (c *Client) ListReversePrivateEndpoints(ctx context.Context, baseURL string, creds BasicCredentials, organizationID, serviceID string, opts ListOptions[swv1.ReversePrivateEndpoint]) (List[swv1.ReversePrivateEndpoint], error) {
	return listItems(ctx, c, OperationListReversePrivateEndpoints, "pipesReversePrivateEndpoints", decodeReversePrivateEndpoints, opts,
		baseURL, creds, organizationID, serviceID)
}

// listItems performs a management list call of resource, decoding the body
// with decode while it streams in.
func listItems[T any](ctx context.Context, c *Client, op, resource string, decode listDecoder[T], opts ListOptions[T],
	baseURL string, creds BasicCredentials, organizationID, serviceID string) (List[T], error) {
	var list List[T]
	scrub := redact.NewScrubber(creds.secrets())
	in := listInput[T]{opts: opts, scrub: scrub, work: lenient.NewWork(c.opts.MaxDecodeWork)}
	read := func(status int, _ http.Header, body io.Reader) (string, error) {
		var err error
		list, err = decode(body, status, in)
		return list.RequestID, err
	}
	if err := c.management(ctx, op, baseURL, creds, organizationID, serviceID, resource, read, scrub); err != nil {
		return List[T]{}, err
	}
	return list, nil
}

// GetAlert fetches one alert from the alert API (see GetAlertFrom).
func (c *Client) GetAlert(ctx context.Context, baseURL string, token BearerToken, alertID string) (AlertResult, error) {
	return c.GetAlertFrom(ctx, AlertSource{API: APIAlert, BaseURL: baseURL, Token: token}, alertID)
}

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
