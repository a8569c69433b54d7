package cloudapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// callFunc makes one client call against baseURL.
type callFunc func(ctx context.Context, c *cloudapi.Client, baseURL string) error

var (
	listPipes callFunc = func(ctx context.Context, c *cloudapi.Client, u string) error {
		_, err := c.ListPipes(ctx, u, testCreds, orgID, svcID, pipeOptions{})
		return err
	}
	listEndpoints callFunc = func(ctx context.Context, c *cloudapi.Client, u string) error {
		_, err := c.ListReversePrivateEndpoints(ctx, u, testCreds, orgID, svcID, endpointOptions{})
		return err
	}
	getAlert callFunc = func(ctx context.Context, c *cloudapi.Client, u string) error {
		_, err := c.GetAlert(ctx, u, testToken, "65f1a2b3c4d5e6f708192a3b")
		return err
	}
)

func asError(t *testing.T, err error) *cloudapi.Error {
	t.Helper()
	var e *cloudapi.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *cloudapi.Error", err, err)
	}
	return e
}

func TestStatusAndBodyMapToReason(t *testing.T) {
	const json = "application/json"
	// The client reads the answers at a fixed instant: an HTTP date and a
	// Unix reset time have whole seconds, so with the real clock the waits
	// they give would lose the fraction of the second the table was built
	// in, and the time the rows before took.
	at := time.Date(2026, time.November, 23, 12, 0, 0, 0, time.UTC)
	httpDate := at.Add(30 * time.Second).Format(http.TimeFormat)
	tests := []struct {
		name       string
		call       callFunc
		reply      reply
		opts       cloudapi.Options
		reason     cloudapi.Reason
		status     int
		message    string
		requestID  string
		retryAfter time.Duration // checked to within a second
	}{
		{name: "401 plain text", call: listPipes, reply: reply{status: 401, contentType: "text/plain", body: "Unauthorized\n"},
			reason: cloudapi.ReasonUnauthorized, status: 401, message: "Unauthorized"},
		{name: "401 alert JSON", call: getAlert, reply: reply{status: 401, contentType: json, body: `{"message":"Invalid token"}`},
			reason: cloudapi.ReasonUnauthorized, status: 401, message: "Invalid token"},
		{name: "403 management JSON", call: listPipes,
			reply:  reply{status: 403, contentType: json, body: `{"status":403,"requestId":"req-403","error":"key lacks permission"}`},
			reason: cloudapi.ReasonForbidden, status: 403, message: "key lacks permission", requestID: "req-403"},
		{name: "404 management JSON", call: listEndpoints,
			reply:  reply{status: 404, contentType: json, body: `{"status":404,"requestId":"req-404","error":"service not found"}`},
			reason: cloudapi.ReasonNotFound, status: 404, message: "service not found", requestID: "req-404"},
		{name: "404 alert JSON", call: getAlert, reply: reply{status: 404, contentType: json, body: `{"message":"Alert not found"}`},
			reason: cloudapi.ReasonNotFound, status: 404, message: "Alert not found"},
		{name: "the status code decides, not the body", call: listPipes,
			reply:  reply{status: 404, contentType: json, body: `{"status":500,"error":"boom"}`},
			reason: cloudapi.ReasonNotFound, status: 404, message: "boom"},
		{name: "429 Retry-After seconds", call: listPipes,
			reply:  reply{status: 429, contentType: json, header: map[string]string{"Retry-After": "7"}, body: `{"status":429,"error":"slow down"}`},
			reason: cloudapi.ReasonRateLimited, status: 429, message: "slow down", retryAfter: 7 * time.Second},
		{name: "429 Retry-After HTTP date", call: getAlert,
			reply:  reply{status: 429, header: map[string]string{"Retry-After": httpDate}},
			reason: cloudapi.ReasonRateLimited, status: 429, retryAfter: 30 * time.Second},
		{name: "429 RateLimit-Reset", call: listPipes,
			reply:  reply{status: 429, header: map[string]string{"RateLimit-Reset": "12"}},
			reason: cloudapi.ReasonRateLimited, status: 429, retryAfter: 12 * time.Second},
		{name: "429 X-RateLimit-Reset", call: getAlert,
			reply:  reply{status: 429, header: map[string]string{"X-RateLimit-Reset": "5"}},
			reason: cloudapi.ReasonRateLimited, status: 429, retryAfter: 5 * time.Second},
		{name: "429 X-RateLimit-Reset as Unix time", call: getAlert,
			reply:  reply{status: 429, header: map[string]string{"X-RateLimit-Reset": fmt.Sprint(at.Add(20 * time.Second).Unix())}},
			reason: cloudapi.ReasonRateLimited, status: 429, retryAfter: 20 * time.Second},
		{name: "429 without a hint", call: listPipes, reply: reply{status: 429},
			reason: cloudapi.ReasonRateLimited, status: 429},
		{name: "500", call: listPipes, reply: reply{status: 500, contentType: json, body: `{"status":500,"requestId":"r5","error":"internal"}`},
			reason: cloudapi.ReasonServerError, status: 500, message: "internal", requestID: "r5"},
		{name: "503 empty body", call: getAlert, reply: reply{status: 503}, reason: cloudapi.ReasonServerError, status: 503},
		{name: "504 HTML from a CDN", call: listPipes,
			reply: reply{status: 504, contentType: "text/html; charset=utf-8",
				body: "<!DOCTYPE html><html><head><title>504 Gateway Time-out</title></head><body><h1>504</h1>" + strings.Repeat("<p>x</p>", 500) + "</body></html>"},
			reason: cloudapi.ReasonServerError, status: 504, message: "504 Gateway Time-out"},
		{name: "HTML without a title says nothing", call: listPipes,
			reply:  reply{status: 502, contentType: "text/html", body: "<html><body><script>x()</script></body></html>"},
			reason: cloudapi.ReasonServerError, status: 502},
		{name: "long plain text is cut", call: listPipes,
			reply:  reply{status: 500, contentType: "text/plain", body: strings.Repeat("word ", 100)},
			reason: cloudapi.ReasonServerError, status: 500, message: strings.Repeat("word ", 39) + "word…"},
		{name: "request ID from a header", call: getAlert,
			reply:  reply{status: 500, header: map[string]string{"X-Request-Id": "hdr-1"}, body: `{"message":"oops"}`},
			reason: cloudapi.ReasonServerError, status: 500, message: "oops", requestID: "hdr-1"},
		{name: "418 other status", call: listPipes, reply: reply{status: 418, body: "teapot"},
			reason: cloudapi.ReasonUnexpectedStatus, status: 418, message: "teapot"},
		{name: "400 is a bad request", call: getAlert, reply: reply{status: 400, contentType: json, body: `{"message":"bad id"}`},
			reason: cloudapi.ReasonBadRequest, status: 400, message: "bad id"},
		{name: "redirect is not followed", call: listPipes,
			reply:  reply{status: 302, header: map[string]string{"Location": "https://elsewhere.example.invalid/"}},
			reason: cloudapi.ReasonUnexpectedStatus, status: 302}, // where to: TestWhatTheHTTPInFrontSays
		{name: "200 HTML content type", call: listPipes,
			reply:  reply{status: 200, contentType: "text/html", body: `{"status":200,"result":[]}`},
			reason: cloudapi.ReasonInvalidResponse, status: 200},
		{name: "200 malformed JSON", call: listPipes,
			reply:  reply{status: 200, contentType: json, body: `{"status":200,"result":[{"id":"`},
			reason: cloudapi.ReasonInvalidResponse, status: 200},
		{name: "200 empty body", call: getAlert, reply: reply{status: 200, contentType: json},
			reason: cloudapi.ReasonInvalidResponse, status: 200},
		{name: "200 result not an array", call: listEndpoints,
			reply:  reply{status: 200, contentType: json, body: `{"status":200,"requestId":"r-obj","result":{}}`},
			reason: cloudapi.ReasonInvalidResponse, status: 200, requestID: "r-obj"},
		{name: "200 result missing", call: listPipes,
			reply:  reply{status: 200, contentType: json, body: `{"status":200,"requestId":"r"}`},
			reason: cloudapi.ReasonInvalidResponse, status: 200, requestID: "r"},
		{name: "200 body status disagrees", call: listPipes,
			reply:  reply{status: 200, contentType: json, body: `{"status":404,"requestId":"r-dis","result":[]}`},
			reason: cloudapi.ReasonInvalidResponse, status: 200, requestID: "r-dis"},
		{name: "200 alert data null", call: getAlert, reply: reply{status: 200, contentType: json, body: `{"data":null}`},
			reason: cloudapi.ReasonInvalidResponse, status: 200},
		{name: "200 alert data array", call: getAlert, reply: reply{status: 200, contentType: json, body: `{"data":[]}`},
			reason: cloudapi.ReasonInvalidResponse, status: 200},
		{name: "200 alert envelope is an array", call: getAlert, reply: reply{status: 200, contentType: json, body: `[]`},
			reason: cloudapi.ReasonInvalidResponse, status: 200},
		{name: "200 body over the cap", call: listPipes, opts: cloudapi.Options{MaxResponseBytes: 1024},
			reply:  reply{status: 200, contentType: json, body: `{"status":200,"result":[],"pad":"` + strings.Repeat("x", 2048) + `"}`},
			reason: cloudapi.ReasonInvalidResponse, status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := serve(t, tt.reply)
			c := newClient(tt.opts)
			cloudapi.SetClock(c, func() time.Time { return at })
			err := tt.call(context.Background(), c, srv.URL)
			e := asError(t, err)
			if e.Reason != tt.reason || e.StatusCode != tt.status {
				t.Errorf("got %s %d, want %s %d (%v)", e.Reason, e.StatusCode, tt.reason, tt.status, err)
			}
			if e.Message != tt.message {
				t.Errorf("Message = %q, want %q", e.Message, tt.message)
			}
			if e.RequestID != tt.requestID {
				t.Errorf("RequestID = %q, want %q", e.RequestID, tt.requestID)
			}
			if d := e.RetryAfter - tt.retryAfter; d < -time.Second || d > time.Second {
				t.Errorf("RetryAfter = %v, want about %v", e.RetryAfter, tt.retryAfter)
			}
			if got := cloudapi.ReasonOf(err); got != tt.reason {
				t.Errorf("ReasonOf = %q, want %q", got, tt.reason)
			}
			if len(err.Error()) > 600 || strings.Contains(err.Error(), "<") {
				t.Errorf("error message too long or has markup: %q", err.Error())
			}
		})
	}
}

func TestErrorString(t *testing.T) {
	srv, _ := serve(t, reply{status: 404, contentType: "application/json",
		body: `{"status":404,"requestId":"1234","error":"service not found"}`})
	err := listPipes(context.Background(), newClient(cloudapi.Options{}), srv.URL)
	if want := "list pipes: 404 NotFound: service not found (requestId 1234)"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	srv, _ = serve(t, reply{status: 429, header: map[string]string{"Retry-After": "30"}})
	err = getAlert(context.Background(), newClient(cloudapi.Options{}), srv.URL)
	if want := "get alert: 429 RateLimited (retry after 30s)"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}

// An error message never carries a credential, even when the service echoes
// it back.
func TestErrorNeverContainsCredentials(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Echo the header, and the secret in clear as a careless service might.
		_, secret, _ := r.BasicAuth()
		_, token, _ := strings.Cut(r.Header.Get("Authorization"), "Bearer ")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = fmt.Fprintf(w, "bad credentials: %s (secret %q, token %q)", r.Header.Get("Authorization"), secret, token)
	}))
	defer echo.Close()
	c := newClient(cloudapi.Options{})
	for name, call := range map[string]callFunc{"management": listPipes, "alert": getAlert} {
		err := call(context.Background(), c, echo.URL)
		msg := err.Error() + fmt.Sprintf(" %+v %#v", err, err)
		for _, secret := range []string{testKeySecret, testTokenValue, "ZmFrZS1rZXktaWQ6ZmFrZS1rZXktc2VjcmV0"} {
			if strings.Contains(msg, secret) {
				t.Errorf("%s: error %q contains a credential", name, msg)
			}
		}
		if !strings.Contains(err.Error(), "<redacted>") {
			t.Errorf("%s: error %q: want the echoed credential replaced by <redacted>", name, err)
		}
	}
}

func TestTransportFailuresAreUnreachable(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	tlsSrv := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake failure is expected
	tlsSrv.StartTLS()
	defer tlsSrv.Close()

	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer hang.Close()

	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"status":200,`))
		conn, _, _ := http.NewResponseController(w).Hijack()
		_ = conn.Close()
	}))
	defer cut.Close()

	canceled, cancel := context.WithCancel(context.Background())
	cancel()

	tests := []struct {
		name    string
		url     string
		ctx     context.Context
		timeout time.Duration
		code    string // reported to the Observer
		is      error
	}{
		{name: "connection refused", url: closedURL, code: "error"},
		{name: "DNS", url: "http://name-that-does-not-exist.invalid", code: "error"},
		{name: "TLS: unknown authority", url: tlsSrv.URL, code: "error"},
		{name: "per-call timeout", url: hang.URL, timeout: 100 * time.Millisecond, code: "timeout", is: context.DeadlineExceeded},
		{name: "body cut short", url: cut.URL, code: "error"},
		{name: "caller canceled", url: hang.URL, ctx: canceled, code: "canceled", is: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obs := &observer{}
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 10 * time.Second // bounds a resolver that hangs instead of failing
			}
			c := newClient(cloudapi.Options{Timeout: timeout, Observer: obs})
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			start := time.Now()
			err := listPipes(ctx, c, tt.url)
			e := asError(t, err)
			if e.Reason != cloudapi.ReasonUnreachable {
				t.Errorf("Reason = %s, want Unreachable (%v)", e.Reason, err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if tt.timeout > 0 && time.Since(start) > 5*tt.timeout {
				t.Errorf("took %v with a %v timeout", time.Since(start), tt.timeout)
			}
			if got := obs.codes(); len(got) != 1 || got[0] != "management/list_pipes/"+tt.code {
				t.Errorf("observed %v, want one management/list_pipes/%s", got, tt.code)
			}
		})
	}
}

func TestConfigurationErrorsSendNothing(t *testing.T) {
	srv, rec := serve(t, reply{status: 200, body: `{"status":200,"result":[]}`})
	c := newClient(cloudapi.Options{})
	ctx := context.Background()
	tests := []struct {
		name string
		call func() error
	}{
		{"relative base URL", func() error {
			_, err := c.ListPipes(ctx, "api.example.com", testCreds, orgID, svcID, pipeOptions{})
			return err
		}},
		{"ftp base URL", func() error {
			_, err := c.ListPipes(ctx, "ftp://api.example.com", testCreds, orgID, svcID, pipeOptions{})
			return err
		}},
		{"empty organization", func() error { _, err := c.ListPipes(ctx, srv.URL, testCreds, "", svcID, pipeOptions{}); return err }},
		{"empty service", func() error {
			_, err := c.ListReversePrivateEndpoints(ctx, srv.URL, testCreds, orgID, "", endpointOptions{})
			return err
		}},
		{"empty key secret", func() error {
			_, err := c.ListPipes(ctx, srv.URL, cloudapi.NewBasicCredentials("id", ""), orgID, svcID, pipeOptions{})
			return err
		}},
		{"colon in key ID", func() error {
			_, err := c.ListPipes(ctx, srv.URL, cloudapi.NewBasicCredentials("a:b", "s"), orgID, svcID, pipeOptions{})
			return err
		}},
		{"newline in token", func() error {
			_, err := c.GetAlert(ctx, srv.URL, cloudapi.NewBearerToken("tok\nX-Evil: 1"), "a")
			return err
		}},
		{"empty token", func() error { _, err := c.GetAlert(ctx, srv.URL, cloudapi.BearerToken{}, "a"); return err }},
		{"token longer than the bound", func() error {
			_, err := c.GetAlert(ctx, srv.URL, cloudapi.NewBearerToken(strings.Repeat("t", cloudapi.MaxCredentialBytes+1)), "a")
			return err
		}},
		{"key secret longer than the bound", func() error {
			_, err := c.ListPipes(ctx, srv.URL, cloudapi.NewBasicCredentials("id", strings.Repeat("s", cloudapi.MaxCredentialBytes+1)), orgID, svcID, pipeOptions{})
			return err
		}},
		{"key ID longer than the bound", func() error {
			_, err := c.ListPipes(ctx, srv.URL, cloudapi.NewBasicCredentials(strings.Repeat("i", cloudapi.MaxCredentialBytes+1), "s"), orgID, svcID, pipeOptions{})
			return err
		}},
		{"empty alert ID", func() error { _, err := c.GetAlert(ctx, srv.URL, testToken, ""); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r := cloudapi.ReasonOf(tt.call()); r != cloudapi.ReasonConfigurationError {
				t.Errorf("reason %q, want ConfigurationError", r)
			}
		})
	}
	if n := len(rec.all()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

func TestReasonOfAndRetryAfterOf(t *testing.T) {
	rl := &cloudapi.Error{Reason: cloudapi.ReasonRateLimited, RetryAfter: 3 * time.Second, Operation: cloudapi.OperationGetAlert}
	wrapped := fmt.Errorf("sync alerts: %w", rl)
	tests := []struct {
		err        error
		reason     cloudapi.Reason
		retryAfter time.Duration
	}{
		{nil, "", 0},
		{wrapped, cloudapi.ReasonRateLimited, 3 * time.Second},
		{&cloudapi.Error{Reason: cloudapi.ReasonServerError, RetryAfter: time.Second}, cloudapi.ReasonServerError, 0},
		{errors.New("something else"), cloudapi.ReasonUnreachable, 0},
	}
	for _, tt := range tests {
		if got := cloudapi.ReasonOf(tt.err); got != tt.reason {
			t.Errorf("ReasonOf(%v) = %q, want %q", tt.err, got, tt.reason)
		}
		if got := cloudapi.RetryAfterOf(tt.err); got != tt.retryAfter {
			t.Errorf("RetryAfterOf(%v) = %v, want %v", tt.err, got, tt.retryAfter)
		}
	}
}

// A paused service answers 424 saying it is idle: that is not an unexpected
// status but a state the user should recognize. A 424 that names no state
// of the service stays UnexpectedStatus, and "idle" under another status
// changes nothing.
func TestIdleServiceIsReportedAsServiceIdle(t *testing.T) {
	const realBody = `{"status":424,"requestId":"5f0c8e2a-3b1d-4c6e-9a7f-2d4b6c8e0a1f","error":"FAILED_DEPENDENCY: Service is not running. Current state: idle"}`
	tests := []struct {
		name   string
		reply  reply
		reason cloudapi.Reason
	}{
		{"the cloud's 424 for an idle service", reply{status: 424, contentType: "application/json", body: realBody}, cloudapi.ReasonServiceIdle},
		{"plain text, upper case", reply{status: 424, contentType: "text/plain", body: "Service is IDLE"}, cloudapi.ReasonServiceIdle},
		{"alert API message", reply{status: 424, contentType: "application/json", body: `{"message":"Service idle; resume it first"}`}, cloudapi.ReasonServiceIdle},
		{"a stopping service is not running", reply{status: 424, contentType: "application/json", body: `{"status":424,"error":"FAILED_DEPENDENCY: Service is stopping"}`}, cloudapi.ReasonServiceNotRunning},
		{"other 424", reply{status: 424, contentType: "application/json", body: `{"status":424,"error":"FAILED_DEPENDENCY: Service is unavailable"}`}, cloudapi.ReasonUnexpectedStatus},
		{"424 without a body", reply{status: 424}, cloudapi.ReasonUnexpectedStatus},
		{"idle within another word", reply{status: 424, contentType: "text/plain", body: "idleness timeout"}, cloudapi.ReasonUnexpectedStatus},
		{"idle under a 503", reply{status: 503, contentType: "text/plain", body: "Service is idle"}, cloudapi.ReasonServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := serve(t, tt.reply)
			err := listPipes(context.Background(), newClient(cloudapi.Options{}), srv.URL)
			if e := asError(t, err); e.Reason != tt.reason || e.StatusCode != tt.reply.status {
				t.Errorf("got %v, want %s with status %d", err, tt.reason, tt.reply.status)
			}
		})
	}
	srv, _ := serve(t, reply{status: 424, contentType: "application/json", body: realBody})
	err := listPipes(context.Background(), newClient(cloudapi.Options{}), srv.URL)
	want := "list pipes: 424 ServiceIdle: FAILED_DEPENDENCY: Service is not running. Current state: idle (requestId 5f0c8e2a-3b1d-4c6e-9a7f-2d4b6c8e0a1f)"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}

// Errors named for what they are, over bodies the services send today: a
// service that is stopped or waking is ServiceNotRunning (with its state),
// not UnexpectedStatus; a structured idle body is ServiceIdle; a 404 page
// that is not the API's JSON means the URL reaches no such route; a
// malformed alert ID is a BadRequest with the cloud's words.
func TestErrorsAreNamedForWhatTheyAre(t *testing.T) {
	const (
		json = "application/json"
		// The route of a base URL with a wrong path prefix.
		missingRoute = "/v1/organizations/7f0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d/services/4e2c6a1b-9d8f-4c3b-a2e1-0f9e8d7c6b5a/pipes"
	)
	// Express's page for a route it does not have, as the fake cloud serves it.
	cannotGet := fakecloud.RouteNotFoundFault(missingRoute)
	tests := []struct {
		name    string
		call    callFunc
		reply   reply
		reason  cloudapi.Reason
		state   string
		message string
		errText string // a part of Error()
	}{
		{name: "424 stopped, in the words", call: listPipes,
			reply: reply{status: 424, contentType: json,
				body: `{"error":"FAILED_DEPENDENCY: Service is not running. Current state: stopped","status":424,"requestId":"0b9c1a2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d"}`},
			reason: cloudapi.ReasonServiceNotRunning, state: "stopped",
			message: "FAILED_DEPENDENCY: Service is not running. Current state: stopped",
			errText: "424 ServiceNotRunning: FAILED_DEPENDENCY: Service is not running. Current state: stopped (requestId 0b9c1a2d"},
		{name: "424 structured: awaking", call: listEndpoints,
			reply: reply{status: 424, contentType: json,
				body: `{"error":"Service is waking up, try again shortly","code":"SERVICE_NOT_RUNNING","serviceState":"awaking","canWake":false,"status":424}`},
			reason: cloudapi.ReasonServiceNotRunning, state: "awaking", message: "Service is waking up, try again shortly",
			errText: "424 ServiceNotRunning: Service is waking up, try again shortly (service state awaking)"},
		{name: "424 stopping, in the words", call: listPipes,
			reply:  reply{status: 424, contentType: json, body: `{"status":424,"error":"FAILED_DEPENDENCY: Service is stopping"}`},
			reason: cloudapi.ReasonServiceNotRunning, state: "stopping", message: "FAILED_DEPENDENCY: Service is stopping"},
		{name: "424 structured without a state", call: listPipes,
			reply:  reply{status: 424, contentType: json, body: `{"error":"Service unavailable","code":"SERVICE_NOT_RUNNING","status":424}`},
			reason: cloudapi.ReasonServiceNotRunning, message: "Service unavailable"},
		{name: "424 structured idle", call: listPipes,
			reply:  reply{status: 424, contentType: json, body: `{"error":"Service is idle","code":"SERVICE_IDLE","serviceState":"idle","canWake":true,"status":424}`},
			reason: cloudapi.ReasonServiceIdle, state: "idle", message: "Service is idle"},
		{name: "424 idle state with a generic code", call: listPipes,
			reply:  reply{status: 424, contentType: json, body: `{"error":"FAILED_DEPENDENCY","code":"SERVICE_NOT_RUNNING","serviceState":"idle","status":424}`},
			reason: cloudapi.ReasonServiceIdle, state: "idle", message: "FAILED_DEPENDENCY"},
		{name: "424 state from the cloud is bounded", call: listPipes,
			reply:  reply{status: 424, contentType: json, body: `{"error":"x","serviceState":"` + strings.Repeat("s", 100) + `"}`},
			reason: cloudapi.ReasonServiceNotRunning, state: strings.Repeat("s", 31) + "…", message: "x"},
		{name: "404 HTML Cannot GET: no such route", call: listPipes,
			reply:   reply{status: 404, contentType: cannotGet.ContentType, body: cannotGet.Body},
			reason:  cloudapi.ReasonEndpointNotFound,
			message: "Cannot GET " + missingRoute},
		{name: "404 HTML of a proxy", call: getAlert,
			reply:  reply{status: 404, contentType: "text/html", body: "<html><head><title>404 Not Found</title></head><body><center><h1>404 Not Found</h1></center><hr><center>nginx</center></body></html>"},
			reason: cloudapi.ReasonEndpointNotFound, message: "404 Not Found"},
		{name: "404 plain text of a router", call: listEndpoints,
			reply:  reply{status: 404, contentType: "text/plain; charset=utf-8", body: "404 page not found\n"},
			reason: cloudapi.ReasonEndpointNotFound, message: "404 page not found"},
		{name: "404 plain text on the alert route", call: getAlert,
			reply:  reply{status: 404, contentType: "text/plain; charset=utf-8", body: "Cannot GET /api/v2/alertz/65f1a2b3c4d5e6f708192a3b"},
			reason: cloudapi.ReasonEndpointNotFound, message: "Cannot GET /api/v2/alertz/65f1a2b3c4d5e6f708192a3b"},
		{name: "404 JSON of the management API: a missing service", call: listPipes,
			reply:  reply{status: 404, contentType: json, body: `{"status":404,"requestId":"r-404","error":"Service not found"}`},
			reason: cloudapi.ReasonNotFound, message: "Service not found"},
		{name: "404 of the alert API for a missing alert: its bare status text", call: getAlert,
			reply:  reply{status: 404, contentType: "text/plain; charset=utf-8", body: "Not Found"},
			reason: cloudapi.ReasonNotFound, message: "Not Found"},
		{name: "404 bare status text from the management URL", call: listPipes,
			reply:  reply{status: 404, contentType: "text/plain; charset=utf-8", body: "Not Found"},
			reason: cloudapi.ReasonEndpointNotFound, message: "Not Found"},
		{name: "404 without a body", call: listPipes, reply: reply{status: 404}, reason: cloudapi.ReasonNotFound},
		{name: "400 for a malformed alert ID", call: getAlert,
			reply:  reply{status: 400, contentType: json, body: `{"message":"Params validation failed: id: Invalid ObjectId"}`},
			reason: cloudapi.ReasonBadRequest, message: "Params validation failed: id: Invalid ObjectId",
			errText: "get alert: 400 BadRequest: Params validation failed: id: Invalid ObjectId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := serve(t, tt.reply)
			err := tt.call(context.Background(), newClient(cloudapi.Options{}), srv.URL)
			e := asError(t, err)
			if e.Reason != tt.reason || e.StatusCode != tt.reply.status {
				t.Errorf("got %s %d, want %s %d (%v)", e.Reason, e.StatusCode, tt.reason, tt.reply.status, err)
			}
			if e.ServiceState != tt.state {
				t.Errorf("ServiceState = %q, want %q", e.ServiceState, tt.state)
			}
			if e.Message != tt.message {
				t.Errorf("Message = %q, want %q", e.Message, tt.message)
			}
			if !strings.Contains(err.Error(), tt.errText) {
				t.Errorf("Error() = %q, want it to contain %q", err.Error(), tt.errText)
			}
		})
	}
}
