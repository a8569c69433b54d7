package cloudapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
	"github.com/servicewatch/servicewatch/internal/egress"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// Defaults for Options.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxResponseBytes = 16 << 20
	// DefaultMaxAlertResponseBytes caps an alert body. An alert is a few
	// hundred bytes, and status must hold up to 100 of them (as many as
	// spec.alertIds allows) beside the lists; 64 KiB leaves ample room for
	// members the spec does not list, while a larger body cannot be an alert
	// worth storing. An alert body is read whole and several are fetched at
	// once, so the list cap of 16 MiB would be far too much here.
	DefaultMaxAlertResponseBytes = 64 << 10
	// DefaultDecodeWorkPerByte sets the default work budget of one list
	// answer (Options.MaxDecodeWork): this many units of lenient.Work
	// (about 10 ns of one core each) per byte of MaxResponseBytes, 384 Mi
	// units at the default cap. Real answers cost 6 to 14 units per byte
	// (TestDecodeWorkOfRealAnswers): 6 when their items match the types,
	// up to 14 when, as the real services' do, they hold quantities and
	// members the types lack and are read member by member. So the largest
	// answer the cap lets through is decoded whole, with room to spare for
	// shapes no sample has, and only an answer shaped to cost far more per
	// byte than any real one (millions of {} cost 54 units per byte) runs
	// out, after a bounded part of its bytes. What a namespace decodes over
	// time is bounded by its share (internal/tenancy).
	DefaultDecodeWorkPerByte = 24
	// minDecodeWork is the least default work budget, for a small
	// MaxResponseBytes: about 10 ms of one core, so that a small cap is
	// still what bounds small answers.
	minDecodeWork = 1 << 20
)

// DefaultManagementRate returns the default limit per management key, 10
// calls per 10 seconds as the management API allows, in bursts of 2: the
// two calls of one sync.
func DefaultManagementRate() ratebudget.RateLimit {
	return ratebudget.RateLimit{Requests: 10, Per: 10 * time.Second, Burst: 2}
}

// DefaultAlertRate returns the default limit per alert token, 100 calls per
// minute (about what the alert API allows) with bursts of 10.
func DefaultAlertRate() ratebudget.RateLimit {
	return ratebudget.RateLimit{Requests: 100, Per: time.Minute, Burst: 10}
}

// maxErrorBodyBytes bounds how much of an error response is read: only a
// short message is kept from it.
const maxErrorBodyBytes = 64 << 10

// Options configure a Client. The zero value gives the defaults.
type Options struct {
	// Timeout bounds each call's HTTP exchange, body included; default 30s.
	Timeout time.Duration
	// MaxResponseBytes caps a list response body; default 16 MiB. The body
	// is decoded as it streams in, so memory follows what a list call keeps
	// (ListOptions.KeepBytes), not this cap.
	MaxResponseBytes int64
	// MaxAlertResponseBytes caps an alert response body; default
	// DefaultMaxAlertResponseBytes (64 KiB), which says why. A larger body is
	// an InvalidResponse, and no more than the cap is read of it.
	MaxAlertResponseBytes int64
	// MaxDecodeWork bounds the work of decoding one list answer, in units
	// of lenient.Work (about one byte scanned each); default
	// DefaultDecodeWorkPerByte × MaxResponseBytes, which says why. An
	// answer that costs more fails its call with ReasonDecodeBudgetExceeded,
	// and decoding stops there: nothing of it is kept.
	MaxDecodeWork int64
	// UserAgent is sent on every request; default "servicewatch/<version>".
	UserAgent string
	// Budgets are the rate budgets whose 429 holds the client honors and
	// records: the store the controller admits syncs with (see NewBudgets),
	// so that a 429 holds back both. Default: a store of the client's own,
	// with the default limits.
	Budgets Budgets
	// Transport sends the requests; default: one clone of
	// http.DefaultTransport (proxy from the environment, keep-alive).
	Transport http.RoundTripper
	// DenyLocalAddresses makes the default Transport refuse to connect to
	// loopback, unspecified and link-local addresses and to the cloud
	// metadata services (see egress.RefuseLocalAddress), checked at each
	// connection after name resolution; such a call fails with
	// ReasonAddressNotAllowed. Through a proxy (HTTPS_PROXY and the like) it
	// is the proxy's address that is checked, and the proxy must apply its
	// own policy. A Transport given here is used as it is.
	DenyLocalAddresses bool
	// Observer, when set, is told about every call, e.g. to record metrics.
	Observer Observer
	// MaxScrubWork bounds the steps that scrubbing one response's text for
	// the call's credential takes (see redact.Scrubber.Within); default
	// redact.DefaultWork. A response whose text would take more, or whose
	// call's context ends while it is scrubbed, shows none of that text:
	// an error's message says so, an alert is an InvalidResponse.
	MaxScrubWork int64
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

// Budgets is what the client asks of the rate budgets: a
// *ratebudget.Store, shared with the controller's admission. The client
// paces nothing itself (admission is the caller's); it only refuses to call
// while a 429's hold lasts, and records the hold a 429 asks for.
type Budgets interface {
	// HeldUntil returns the end of the hold of api with cred at baseURL, or
	// the zero time when there is none.
	HeldUntil(api, baseURL string, cred ratebudget.CredentialID) time.Time
	// RateLimited holds back every call of api with cred at baseURL until
	// until, after a 429, and says whose calls filled the budget
	// (ratebudget.CauseOthers, ratebudget.CauseManager).
	RateLimited(api, baseURL string, cred ratebudget.CredentialID, until time.Time) string
}

// RateLimitObserver is told of each 429 with its cause (see
// Budgets.RateLimited) when the Observer implements it too, so that a 429
// caused by the key's other users is told from one the manager caused.
type RateLimitObserver interface {
	// ObserveRateLimited reports one 429 of api and its cause.
	ObserveRateLimited(api, cause string)
}

// NewBudgets returns the rate budgets of the two APIs, to share between a
// Client (Options.Budgets) and the controller's admission: management per
// management key and API host, alert per alert token and API host. A zero
// limit means the API's default (DefaultManagementRate, DefaultAlertRate);
// Requests < 0 disables the limit (a 429's hold still applies).
func NewBudgets(management, alert ratebudget.RateLimit) *ratebudget.Store {
	return NewReservingBudgets(management, alert, 0)
}

// NewReservingBudgets is NewBudgets leaving reserved of each key's budget
// to callers outside the manager (see ratebudget.NewReservingStore).
func NewReservingBudgets(management, alert ratebudget.RateLimit, reserved float64) *ratebudget.Store {
	if management == (ratebudget.RateLimit{}) {
		management = DefaultManagementRate()
	}
	if alert == (ratebudget.RateLimit{}) {
		alert = DefaultAlertRate()
	}
	return ratebudget.NewReservingStore(map[string]ratebudget.RateLimit{APIManagement: management, APIAlert: alert}, reserved)
}

// Client calls the cloud APIs. It is safe for concurrent use; one per
// process is enough.
type Client struct {
	http    *http.Client
	opts    Options
	budgets Budgets
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
	if opts.MaxAlertResponseBytes <= 0 {
		opts.MaxAlertResponseBytes = DefaultMaxAlertResponseBytes
	}
	if opts.MaxDecodeWork <= 0 {
		opts.MaxDecodeWork = max(DefaultDecodeWorkPerByte*opts.MaxResponseBytes, minDecodeWork)
	}
	if opts.UserAgent == "" {
		opts.UserAgent = defaultUserAgent()
	}
	if opts.MaxScrubWork <= 0 {
		opts.MaxScrubWork = redact.DefaultWork
	}
	if opts.Budgets == nil {
		opts.Budgets = NewBudgets(ratebudget.RateLimit{}, ratebudget.RateLimit{})
	}
	if opts.Transport == nil {
		opts.Transport = defaultTransport(opts.DenyLocalAddresses)
	}
	return &Client{
		http: &http.Client{
			Transport: opts.Transport,
			// Redirects are not followed: a Basic credential must not be
			// replayed to wherever a response points.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		opts:    opts,
		budgets: opts.Budgets,
		now:     time.Now,
	}
}

func defaultTransport(denyLocalAddresses bool) *http.Transport {
	base, ok := http.DefaultTransport.(*http.Transport)
	if !ok { // something replaced the default: start from a plain one
		base = &http.Transport{Proxy: http.ProxyFromEnvironment}
	}
	t := base.Clone()
	if denyLocalAddresses {
		// The dialer of http.DefaultTransport, with the guard.
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: egress.RefuseLocalAddress}
		t.DialContext = d.DialContext
	}
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

// management validates the inputs of a management call and performs it;
// own is the scrubber of creds.
func (c *Client) management(ctx context.Context, op, baseURL string, creds BasicCredentials, organizationID, serviceID, resource string, read bodyReader, own *redact.Scrubber) error {
	if err := creds.validate(); err != nil {
		return configError(op, err)
	}
	if organizationID == "" || serviceID == "" {
		return configError(op, errors.New("organization ID and service ID must not be empty"))
	}
	u, err := buildURL(baseURL, "v1", "organizations", organizationID, "services", serviceID, resource)
	if err != nil {
		return configError(op, err)
	}
	return c.do(ctx, call{
		api: APIManagement, op: op, baseURL: baseURL, url: u, cred: creds,
		limit: c.opts.MaxResponseBytes, read: read, own: own,
	})
}

func configError(op string, err error) *Error {
	return &Error{Reason: ReasonConfigurationError, Operation: op, Err: redact.NewScrubber(nil).Wrap(err)}
}

// buildURL appends segments to base's path, each escaped as exactly one path
// segment (see egress.PathSegment): an ID that a normalizing gateway could
// read as a dot segment or as more than one segment ("..", "../..", "..;")
// is refused, so that no ID can climb out of its place. base may have a
// path prefix and may end in a slash.
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
		escaped, err := egress.PathSegment(s)
		if err != nil {
			return nil, fmt.Errorf("an ID cannot be placed in the request path: %w", err)
		}
		p.WriteByte('/')
		p.WriteString(escaped)
	}
	u.RawPath = p.String()
	if u.Path, err = url.PathUnescape(u.RawPath); err != nil {
		return nil, fmt.Errorf("invalid base URL path: %w", err)
	}
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	return u, nil
}

// call is one HTTP GET to make.
type call struct {
	api, op string
	// baseURL is the caller's, which names the call's budget.
	baseURL string
	url     *url.URL
	cred    Credential
	// limit caps the success body handed to read.
	limit int64
	read  bodyReader
	// scrub, when set, is the scrubber of the call's credential, which
	// read uses too: one work bound for the whole response.
	scrub *redact.Scrubber
	// own, when set, is the scrubber of the call's credential with a bound
	// per text (redact.NewScrubber's), which the caller built already.
	own *redact.Scrubber
}

// bodyReader consumes the body of a success response while it streams in. A
// body larger than the call's limit fails to read with errTooLarge. It
// returns the request ID to quote if the body turns out unusable.
type bodyReader func(status int, header http.Header, body io.Reader) (requestID string, err error)

// prepared is a call with what the client derives from its credential.
type prepared struct {
	call
	scrub *redact.Scrubber
}

// prepare derives what a call needs from its credential. own scrubs the
// client's own words about the call (a transport or decoding error, the
// request ID it quotes) with a bound per text and no context: they are
// short, and a call that timed out must still say so rather than show
// "<redacted>" for its own error.
func (c *Client) prepare(cl call) prepared {
	if cl.own == nil {
		cl.own = redact.NewScrubber(cl.cred.secrets())
	}
	scrub := cl.scrub
	if scrub == nil {
		scrub = cl.own
	}
	return prepared{call: cl, scrub: scrub}
}

// do sends the request, unless the call's budget is held after a 429 or ctx
// has ended, and hands the body of a 2xx whose content type may be JSON to
// cl.read; it returns an *Error. It never waits: pacing is the caller's,
// through the budgets' Admit.
func (c *Client) do(ctx context.Context, unprepared call) error {
	cl := c.prepare(unprepared)
	if err := c.heldBack(cl); err != nil {
		c.observe(cl, "rate_limited_locally", 0)
		return err
	}
	if err := ctxError(ctx, cl.op); err != nil {
		c.observe(cl, noResponseCode(ctx, err.Err), 0)
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	if unprepared.scrub == nil {
		cl.scrub = cl.scrub.Within(ctx, c.opts.MaxScrubWork)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cl.url.String(), http.NoBody)
	if err != nil {
		return configError(cl.op, err)
	}
	req.Header.Set("Authorization", cl.cred.authorization())
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.opts.UserAgent)

	start := c.now()
	resp, err := c.http.Do(req)
	if err != nil {
		c.observe(cl, noResponseCode(ctx, err), c.now().Sub(start))
		if refused, ok := errors.AsType[*egress.AddressNotAllowedError](err); ok {
			// Its own words say it all; the URL and dial wrapping would
			// push them past the length a message keeps.
			return &Error{Reason: ReasonAddressNotAllowed, Operation: cl.op, Err: cl.own.Wrap(refused)}
		}
		return &Error{Reason: ReasonUnreachable, Operation: cl.op, Err: cl.own.Wrap(err)}
	}
	defer resp.Body.Close()
	if err := c.readResponse(cl, resp); err != nil {
		if err.Reason == ReasonUnreachable {
			c.observe(cl, noResponseCode(ctx, err.Err), c.now().Sub(start))
		} else {
			c.observe(cl, strconv.Itoa(resp.StatusCode), c.now().Sub(start))
		}
		return err
	}
	c.observe(cl, strconv.Itoa(resp.StatusCode), c.now().Sub(start))
	return nil
}

// readResponse hands the body of a success to cl.read, or returns the
// *Error the response amounts to. A body that fails to arrive is
// Unreachable; one that arrives too large or cannot be decoded is
// InvalidResponse.
func (c *Client) readResponse(cl prepared, resp *http.Response) *Error {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return c.statusError(cl, resp)
	}
	invalid := func(requestID string, err error) *Error {
		shown := cl.own.Wrap(err)
		if serr := cl.scrub.Err(); serr != nil && errors.Is(err, serr) {
			shown = err // the scrubber's own words, with no text of the service's
		}
		return &Error{Reason: ReasonInvalidResponse, StatusCode: resp.StatusCode, RequestID: cl.own.Clean(requestID),
			Operation: cl.op, Err: shown}
	}
	if err := checkContentType(resp.Header.Get("Content-Type")); err != nil {
		return invalid("", err)
	}
	if resp.ContentLength > cl.limit {
		return invalid("", fmt.Errorf("%w: Content-Length %d exceeds %d bytes", errTooLarge, resp.ContentLength, cl.limit))
	}
	body := &cappedBody{r: resp.Body, limit: cl.limit}
	requestID, err := cl.read(resp.StatusCode, resp.Header, body)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, lenient.ErrWorkBudget):
		e := invalid(requestID, err)
		e.Reason = ReasonDecodeBudgetExceeded
		return e
	case body.err == nil:
		e := invalid(requestID, err)
		if env, ok := errors.AsType[*envelopeStatusError](err); ok {
			e.Message = cl.scrub.Clean(env.Words())
			if serr := cl.scrub.Err(); serr != nil {
				e.Message = "the service's message is not shown: " + serr.Error()
			}
		}
		return e
	case errors.Is(body.err, errTooLarge):
		return invalid(requestID, body.err)
	}
	return &Error{Reason: ReasonUnreachable, StatusCode: resp.StatusCode, RequestID: cl.own.Clean(requestID), Operation: cl.op,
		Err: cl.own.Wrap(fmt.Errorf("read response body: %w", body.err))}
}

// statusError builds the error for a non-2xx response. The status decides the
// reason; the body adds the service's words and request ID.
func (c *Client) statusError(cl prepared, resp *http.Response) *Error {
	// A short read is fine: only a short message is kept from an error body.
	// The body is read as far past the cap as an encoding of the credential
	// reaches, and scrubbed before it is cut: a secret the cap falls into
	// is redacted whole, and what the cut leaves does not depend on the
	// secret.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes+int64(cl.scrub.Reach())))
	if len(body) > maxErrorBodyBytes {
		body = []byte(cl.scrub.RedactPrefix(string(body), maxErrorBodyBytes))
	}
	d := parseErrorBody(body, resp.Header.Get("Content-Type"))
	if d.RequestID == "" {
		d.RequestID = resp.Header.Get("X-Request-ID")
	}
	words := ownWords(d, resp.Header)
	redirect := resp.StatusCode >= 300 && resp.StatusCode <= 399
	if redirect {
		words = reducedURLs(words) // they name its Location, query and all
	}
	e := &Error{
		Reason:     reasonForResponse(resp.StatusCode, d, cl.op),
		StatusCode: resp.StatusCode,
		RequestID:  cl.scrub.Clean(d.RequestID),
		Message:    cl.scrub.Clean(words),
		Operation:  cl.op,
		fromAPI:    d.Shape == shapeJSONObject,
	}
	if redirect {
		e.Location = cl.scrub.Fit(cl.scrub.Redact(reducedLocation(cl.url, resp.Header.Get("Location"))), maxLocationRunes)
	}
	if resp.StatusCode == http.StatusFailedDependency {
		e.ServiceState = cl.scrub.Fit(cl.scrub.Clean(serviceStateOf(d)), maxServiceStateRunes)
	}
	if err := cl.scrub.Err(); err != nil {
		e.Message = "the service's message is not shown: " + err.Error()
		e.Location = ""
	}
	c.honourRetryAfter(cl, resp, e)
	return e
}

// honourRetryAfter records the wait a 429 or a 503 asks for (Retry-After,
// bounded by ratebudget.MaxHold). A 429 speaks of the credential's budget
// at the host, so every call of that budget is held back. A 503 speaks of
// what answered this one call (a service in maintenance, a gateway without
// a healthy backend for this path): it holds back only the caller of this
// call, through Error.RetryAfter, so that one service's outage does not
// stall the other services read with the same key. Only Retry-After
// counts on a 503: a rate limit's reset headers say nothing of an outage.
func (c *Client) honourRetryAfter(cl prepared, resp *http.Response, e *Error) {
	now := c.now()
	switch {
	case e.Reason == ReasonRateLimited:
		e.RetryAfter = ratebudget.RetryAfter(resp.Header, now)
		// Every 429 is told with its cause; one without a wait holds nothing.
		cause := c.budgets.RateLimited(cl.api, cl.baseURL, cl.cred, now.Add(max(0, e.RetryAfter)))
		if o, ok := c.opts.Observer.(RateLimitObserver); ok {
			o.ObserveRateLimited(cl.api, cause)
		}
	case resp.StatusCode == http.StatusServiceUnavailable:
		e.RetryAfter = ratebudget.RetryAfter(http.Header{"Retry-After": resp.Header.Values("Retry-After")}, now)
	}
	if e.RetryAfter > 0 {
		e.RetryAt = now.Add(e.RetryAfter)
	}
}

// maxLocationRunes bounds Error.Location: room for a host and the API's
// longest path, so that the user sees the whole URL to put in the spec.
const maxLocationRunes = 400

// reducedLocation is where a redirect points, resolved against the URL
// called, as scheme, host and path only: user info, query and fragment may
// hold a token of the redirecting party's (a signed URL, a session) and
// tell nothing of the URL to configure. "" when there is no Location; an
// unparseable one is named so, not shown.
func reducedLocation(called *url.URL, location string) string {
	if strings.TrimSpace(location) == "" {
		return ""
	}
	ref, err := url.Parse(strings.TrimSpace(location))
	if err != nil {
		return "an unparseable Location"
	}
	return reducedURL(called.ResolveReference(ref))
}

// reducedURL is u as scheme, host and path.
func reducedURL(u *url.URL) string {
	out := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return out.String()
}

// urlRE finds the URLs in a service's words.
var urlRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+`)

// reducedURLs reduces each URL in a redirect's words as its Location is
// (reducedURL): a page that says where it redirects ("Redirecting to
// https://...") names the same URL, query and user info included.
func reducedURLs(words string) string {
	return urlRE.ReplaceAllStringFunc(words, func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			scheme, _, _ := strings.Cut(raw, "://")
			return scheme + "://…"
		}
		return reducedURL(u)
	})
}

var errTooLarge = errors.New("response body too large")

// cappedBody reads a response body of at most limit bytes. It reads one byte
// past the limit, to tell a body of exactly limit bytes from a larger one,
// and then fails with errTooLarge. err records the first failure other than
// the end of the body, so the caller can tell a body that did not arrive
// from one that arrived and could not be decoded.
type cappedBody struct {
	r     io.Reader
	limit int64
	read  int64
	err   error
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if room := b.limit + 1 - b.read; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.r.Read(p)
	b.read += int64(n)
	if b.read > b.limit {
		b.err = fmt.Errorf("%w: more than %d bytes", errTooLarge, b.limit)
		return n - 1, b.err
	}
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// heldBack returns a RateLimited *Error while the call's budget is held
// after a 429: nothing is sent until the wait the service asked for is over.
func (c *Client) heldBack(cl prepared) *Error {
	until := c.budgets.HeldUntil(cl.api, cl.baseURL, cl.cred)
	if until.IsZero() {
		return nil
	}
	return &Error{Reason: ReasonRateLimited, RetryAfter: until.Sub(c.now()), RetryAt: until, Operation: cl.op,
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
