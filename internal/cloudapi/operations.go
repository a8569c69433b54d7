package cloudapi

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
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
	// (see lenient.Keeper); what is kept is still ordered by id. The same items in
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
