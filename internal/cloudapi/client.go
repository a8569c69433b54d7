package cloudapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// Defaults for Options.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxResponseBytes = 16 << 20
)

// DefaultManagementRate returns the default limit per management key, 10
// calls per 10 seconds as the management API allows, in bursts of 2: the
// two calls of one sync.
func DefaultManagementRate() RateLimit {
	return RateLimit{Requests: 10, Per: 10 * time.Second, Burst: 2}
}

// DefaultAlertRate returns the default limit per alert token, 100 calls per
// minute (about what the alert API allows) with bursts of 10.
func DefaultAlertRate() RateLimit {
	return RateLimit{Requests: 100, Per: time.Minute, Burst: 10}
}

// maxErrorBodyBytes bounds how much of an error response is read: only a
// short message is kept from it.
const maxErrorBodyBytes = 64 << 10

// Options configure a Client. The zero value gives the defaults.
type Options struct {
	// Timeout bounds each call's HTTP exchange, body included; default 30s.
	Timeout time.Duration
	// MaxResponseBytes caps a response body; default 16 MiB.
	MaxResponseBytes int64
	// UserAgent is sent on every request; default "servicewatch/<version>".
	UserAgent string
	// ManagementRate is the budget Admit grants per management key and API
	// host; the zero value means DefaultManagementRate(). Set Requests < 0
	// to disable the limit (a 429's hold still applies).
	ManagementRate RateLimit
	// AlertRate is the budget Admit grants per alert token and API host; the
	// zero value means DefaultAlertRate(). Set Requests < 0 to disable the
	// limit.
	AlertRate RateLimit
	// Transport sends the requests; default: one clone of
	// http.DefaultTransport (proxy from the environment, keep-alive).
	Transport http.RoundTripper
	// Observer, when set, is told about every call, e.g. to record metrics.
	Observer Observer
}

// Observer is told about every call, so that the controller can record
// metrics without this package importing a metrics library. It must be safe
// for concurrent use and return quickly.
type Observer interface {
	// ObserveRequest reports one call. api is APIManagement or APIAlert;
	// operation is one of the Operation* constants; code is the HTTP status
	// as a decimal string, or, when there was no response, one of "error",
	// "timeout", "canceled" and "rate_limited_locally". duration covers the
	// HTTP exchange (zero when nothing was sent).
	ObserveRequest(api, operation string, code string, duration time.Duration)
}

// Client calls the cloud APIs. It is safe for concurrent use; one per
// process is enough.
type Client struct {
	http    *http.Client
	opts    Options
	budgets budgetStore
	now     func() time.Time
}

// New returns a Client with opts, filling in defaults.
func New(opts Options) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if opts.UserAgent == "" {
		opts.UserAgent = defaultUserAgent()
	}
	if opts.ManagementRate == (RateLimit{}) {
		opts.ManagementRate = DefaultManagementRate()
	}
	if opts.AlertRate == (RateLimit{}) {
		opts.AlertRate = DefaultAlertRate()
	}
	if opts.Transport == nil {
		opts.Transport = defaultTransport()
	}
	return &Client{
		http: &http.Client{
			Transport: opts.Transport,
			// Redirects are not followed: a Basic credential must not be
			// replayed to wherever a response points.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		opts: opts,
		now:  time.Now,
	}
}

func defaultTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	// Many watches call the same host; keep enough idle connections for them.
	t.MaxIdleConnsPerHost = 16
	return t
}

// defaultUserAgent names the operator and its version, taken from the build
// information of the main module.
func defaultUserAgent() string {
	version := "dev"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		version = bi.Main.Version
	}
	return "servicewatch/" + version
}

// ListPipes lists the pipes of a service.
func (c *Client) ListPipes(ctx context.Context, baseURL string, creds BasicCredentials, organizationID, serviceID string) (PipeList, error) {
	resp, err := c.management(ctx, OperationListPipes, baseURL, creds, organizationID, serviceID, "pipes")
	if err != nil {
		return PipeList{}, err
	}
	list, err := decodePipes(resp.body, resp.status)
	if err != nil {
		return PipeList{}, resp.invalid(OperationListPipes, list.RequestID, err)
	}
	return list, nil
}

// ListReversePrivateEndpoints lists the reverse private endpoints of a
// service.
func (c *Client) ListReversePrivateEndpoints(ctx context.Context, baseURL string, creds BasicCredentials, organizationID, serviceID string) (ReversePrivateEndpointList, error) {
	op := OperationListReversePrivateEndpoints
	resp, err := c.management(ctx, op, baseURL, creds, organizationID, serviceID, "pipesReversePrivateEndpoints")
	if err != nil {
		return ReversePrivateEndpointList{}, err
	}
	list, err := decodeReversePrivateEndpoints(resp.body, resp.status)
	if err != nil {
		return ReversePrivateEndpointList{}, resp.invalid(op, list.RequestID, err)
	}
	return list, nil
}

// GetAlert fetches one alert.
func (c *Client) GetAlert(ctx context.Context, baseURL string, token BearerToken, alertID string) (AlertResult, error) {
	op := OperationGetAlert
	if err := token.validate(); err != nil {
		return AlertResult{}, configError(op, err)
	}
	if alertID == "" {
		return AlertResult{}, configError(op, errors.New("alert ID must not be empty"))
	}
	u, err := buildURL(baseURL, "api", "v2", "alerts", alertID)
	if err != nil {
		return AlertResult{}, configError(op, err)
	}
	resp, err := c.do(ctx, call{
		api: APIAlert, op: op, url: u, cred: token,
	})
	if err != nil {
		return AlertResult{}, err
	}
	requestID := resp.header.Get("X-Request-Id")
	alert, err := decodeAlert(resp.body)
	if err != nil {
		return AlertResult{}, resp.invalid(op, requestID, err)
	}
	return AlertResult{Alert: alert, RequestID: requestID}, nil
}

// management validates the inputs of a management call and performs it.
func (c *Client) management(ctx context.Context, op, baseURL string, creds BasicCredentials, organizationID, serviceID, resource string) (*response, error) {
	if err := creds.validate(); err != nil {
		return nil, configError(op, err)
	}
	if organizationID == "" || serviceID == "" {
		return nil, configError(op, errors.New("organization ID and service ID must not be empty"))
	}
	u, err := buildURL(baseURL, "v1", "organizations", organizationID, "services", serviceID, resource)
	if err != nil {
		return nil, configError(op, err)
	}
	return c.do(ctx, call{
		api: APIManagement, op: op, url: u, cred: creds,
	})
}

func configError(op string, err error) *Error {
	return &Error{Reason: ReasonConfigurationError, Operation: op, Err: cause(&scrubber{}, err)}
}

// buildURL appends segments to base's path, each escaped as exactly one path
// segment ("." and ".." too, so that no ID can climb out of its place).
// base may have a path prefix and may end in a slash.
func buildURL(base string, segments ...string) (*url.URL, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("invalid base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base URL %q is not an absolute http(s) URL", u.Redacted())
	}
	var p strings.Builder
	p.WriteString(strings.TrimRight(u.EscapedPath(), "/"))
	for _, s := range segments {
		p.WriteByte('/')
		p.WriteString(escapeSegment(s))
	}
	u.RawPath = p.String()
	if u.Path, err = url.PathUnescape(u.RawPath); err != nil {
		return nil, fmt.Errorf("invalid base URL path: %w", err)
	}
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	return u, nil
}

func escapeSegment(s string) string {
	switch s {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	return url.PathEscape(s)
}

// call is one HTTP GET to make.
type call struct {
	api, op string
	url     *url.URL
	cred    Credential
}

// prepared is a call with what the client derives from its credential.
type prepared struct {
	call
	scrub *scrubber
	key   credKey // of the call's budget
}

// response is a success response, read whole.
type response struct {
	status int
	header http.Header
	body   []byte
	scrub  *scrubber
}

// invalid returns the InvalidResponse error for a response that could not be
// decoded.
func (r *response) invalid(op, requestID string, err error) *Error {
	return &Error{Reason: ReasonInvalidResponse, StatusCode: r.status, RequestID: r.scrub.clean(requestID),
		Operation: op, Err: cause(r.scrub, err)}
}

// cleanedError is an error whose text is cleaned like a message (credentials
// redacted, URLs shortened, bounded), while errors.Is and errors.As still
// reach the original.
type cleanedError struct {
	text string
	err  error
}

func (e *cleanedError) Error() string { return e.text }
func (e *cleanedError) Unwrap() error { return e.err }

// cause wraps err for Error.Err.
func cause(s *scrubber, err error) error {
	if err == nil {
		return nil
	}
	return &cleanedError{text: s.clean(err.Error()), err: err}
}

// prepare derives what a call needs from its credential.
func (c *Client) prepare(cl call) prepared {
	return prepared{
		call:  cl,
		scrub: newScrubber(cl.cred.secrets()),
		key:   budgetKey(cl.api, cl.url.Host, cl.url.Scheme, cl.cred),
	}
}

// do sends the request, unless the call's budget is held after a 429 or ctx
// has ended, and returns the response of a 2xx whose content type may be
// JSON, or an *Error. It never waits: pacing is the caller's, through Admit.
func (c *Client) do(ctx context.Context, unprepared call) (*response, error) {
	cl := c.prepare(unprepared)
	if err := c.heldBack(cl); err != nil {
		c.observe(cl, "rate_limited_locally", 0)
		return nil, err
	}
	if err := ctxError(ctx, cl.op); err != nil {
		c.observe(cl, noResponseCode(ctx, err.Err), 0)
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cl.url.String(), nil)
	if err != nil {
		return nil, configError(cl.op, err)
	}
	req.Header.Set("Authorization", cl.cred.authorization())
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.opts.UserAgent)

	start := c.now()
	resp, err := c.http.Do(req)
	if err != nil {
		c.observe(cl, noResponseCode(ctx, err), c.now().Sub(start))
		return nil, &Error{Reason: ReasonUnreachable, Operation: cl.op, Err: cause(cl.scrub, err)}
	}
	defer resp.Body.Close()
	r, err := c.readResponse(ctx, cl, resp)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Reason == ReasonUnreachable {
			c.observe(cl, noResponseCode(ctx, e.Err), c.now().Sub(start))
			return nil, err
		}
	}
	c.observe(cl, strconv.Itoa(resp.StatusCode), c.now().Sub(start))
	return r, err
}

// readResponse turns an HTTP response into a response or an *Error.
func (c *Client) readResponse(ctx context.Context, cl prepared, resp *http.Response) (*response, error) {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.statusError(cl, resp)
	}
	if err := checkContentType(resp.Header.Get("Content-Type")); err != nil {
		return nil, &Error{Reason: ReasonInvalidResponse, StatusCode: resp.StatusCode, Operation: cl.op, Err: cause(cl.scrub, err)}
	}
	body, err := readCapped(resp, c.opts.MaxResponseBytes)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			return nil, &Error{Reason: ReasonInvalidResponse, StatusCode: resp.StatusCode, Operation: cl.op, Err: cause(cl.scrub, err)}
		}
		return nil, &Error{Reason: ReasonUnreachable, StatusCode: resp.StatusCode, Operation: cl.op,
			Err: cause(cl.scrub, fmt.Errorf("read response body: %w", err))}
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: body, scrub: cl.scrub}, nil
}

// statusError builds the error for a non-2xx response. The status decides the
// reason; the body adds the service's words and request ID.
func (c *Client) statusError(cl prepared, resp *http.Response) *Error {
	// A short read is fine: only a short message is kept from an error body,
	// and the cleaning scrubs the start of a secret the cap may have cut.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
	d := parseErrorBody(body, resp.Header.Get("Content-Type"))
	if d.RequestID == "" {
		d.RequestID = resp.Header.Get("X-Request-Id")
	}
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 && strings.TrimSpace(d.Message) == "" {
		if loc := resp.Header.Get("Location"); loc != "" {
			d.Message = "redirect to " + loc + " not followed"
		}
	}
	e := &Error{
		Reason:     reasonForResponse(resp.StatusCode, d.Message),
		StatusCode: resp.StatusCode,
		RequestID:  cl.scrub.clean(d.RequestID),
		Message:    cl.scrub.clean(d.Message),
		Operation:  cl.op,
	}
	if e.Reason == ReasonRateLimited {
		now := c.now()
		if e.RetryAfter = retryAfter(resp.Header, now); e.RetryAfter > 0 {
			e.RetryAt = now.Add(e.RetryAfter)
			c.budgets.hold(cl.key, c.limitOf(cl.api), now, e.RetryAt)
		}
	}
	return e
}

var errTooLarge = errors.New("response body too large")

// readCapped reads a body of at most limit bytes.
func readCapped(resp *http.Response, limit int64) ([]byte, error) {
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("%w: Content-Length %d exceeds %d bytes", errTooLarge, resp.ContentLength, limit)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", errTooLarge, limit)
	}
	return body, nil
}

// heldBack returns a RateLimited *Error while the call's budget is held
// after a 429: nothing is sent until the wait the service asked for is over.
func (c *Client) heldBack(cl prepared) *Error {
	now := c.now()
	until := c.budgets.heldUntil(cl.key, now)
	if until.IsZero() {
		return nil
	}
	return &Error{Reason: ReasonRateLimited, RetryAfter: until.Sub(now), RetryAt: until, Operation: cl.op,
		Err: errors.New("held back by the client: the service asked to wait after a 429")}
}

// ctxError returns an Unreachable *Error if ctx has ended.
func ctxError(ctx context.Context, op string) *Error {
	if err := ctx.Err(); err != nil {
		return &Error{Reason: ReasonUnreachable, Operation: op, Err: err}
	}
	return nil
}

func (c *Client) observe(cl prepared, code string, d time.Duration) {
	if c.opts.Observer != nil {
		c.opts.Observer.ObserveRequest(cl.api, cl.op, code, d)
	}
}

// noResponseCode names a failure without a response for the Observer.
func noResponseCode(ctx context.Context, err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "timeout"
	}
	var te interface{ Timeout() bool }
	if errors.As(err, &te) && te.Timeout() {
		return "timeout"
	}
	return "error"
}
