package cloudapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// What the CDNs, ingress controllers, frameworks and gateways in front of
// the services answer reaches the user with their own words, where a
// redirect points, and the wait a 503 asks for.
func TestWhatTheHTTPInFrontSays(t *testing.T) {
	const json = "application/json"
	at := time.Date(2026, time.November, 23, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		call       callFunc
		reply      reply
		reason     cloudapi.Reason
		message    string
		location   string // a prefix, "<srv>" standing for the server's URL
		retryAfter time.Duration
		// inError must show in the error's text (the condition message).
		inError []string
		// notInError must not.
		notInError []string
	}{
		{name: "301 with a body still says where to", call: listPipes,
			reply: reply{status: 301, contentType: "text/html", header: map[string]string{
				"Location": "https://user:pw@new.example.invalid/v2/organizations/o/services/s/clickpipes?sig=t0ken#f"},
				body: `<p>Moved Permanently. Redirecting to https://user:pw@new.example.invalid/v2/x?sig=t0ken</p>`},
			reason:     cloudapi.ReasonUnexpectedStatus,
			message:    "Moved Permanently. Redirecting to https://new.example.invalid/v2/x",
			location:   "https://new.example.invalid/v2/organizations/o/services/s/clickpipes",
			inError:    []string{"(redirect to https://new.example.invalid/v2/organizations/o/services/s/clickpipes not followed)"},
			notInError: []string{"t0ken", "user:pw", "#f"}},
		{name: "308 with a relative Location", call: listEndpoints,
			reply:    reply{status: 308, header: map[string]string{"Location": "/api/v1/organizations/o"}},
			reason:   cloudapi.ReasonUnexpectedStatus,
			location: "<srv>/api/v1/organizations/o"},
		{name: "307 of the alert API", call: getAlert,
			reply:  reply{status: 307, contentType: json, header: map[string]string{"Location": "https://alerts.example.invalid/api/v2/alerts/x"}, body: `{"message":"Temporary Redirect"}`},
			reason: cloudapi.ReasonUnexpectedStatus, message: "Temporary Redirect",
			location: "https://alerts.example.invalid/api/v2/alerts/x"},
		{name: "302 carrying the credential in its Location", call: listPipes,
			reply:      reply{status: 302, header: map[string]string{"Location": "https://evil.example.invalid/" + testKeySecret}},
			reason:     cloudapi.ReasonUnexpectedStatus,
			location:   "https://evil.example.invalid/",
			notInError: []string{testKeySecret}},
		{name: "HTML page without a title shows its text", call: listPipes,
			reply: reply{status: 502, contentType: "text/html",
				body: "<html><head><style>p{}</style><script>var t='x'</script></head><body>\n<center>upstream connect error or disconnect/reset before headers</center>\n<!-- trace 1 --></body></html>"},
			reason:  cloudapi.ReasonServerError,
			message: "upstream connect error or disconnect/reset before headers"},
		{name: "HTML page with a title shows the title", call: listPipes,
			reply:   reply{status: 502, contentType: "text/html", body: "<html><head><title>502 Bad Gateway</title></head><body><p>long text</p></body></html>"},
			reason:  cloudapi.ReasonServerError,
			message: "502 Bad Gateway"},
		{name: "WWW-Authenticate error_description with an empty body", call: getAlert,
			reply: reply{status: 401, header: map[string]string{
				"WWW-Authenticate": `Bearer realm="alerts", error="invalid_token", error_description="The access token expired \"at noon\""`}},
			reason: cloudapi.ReasonUnauthorized, message: `The access token expired "at noon"`},
		{name: "WWW-Authenticate error_description beside the body's words", call: listPipes,
			reply: reply{status: 401, contentType: json, header: map[string]string{
				"WWW-Authenticate": `Basic realm="api", error_description=key_revoked`},
				body: `{"status":401,"error":"Unauthorized"}`},
			reason: cloudapi.ReasonUnauthorized, message: "Unauthorized; key_revoked"},
		{name: "503 with Retry-After in seconds", call: listPipes,
			reply:  reply{status: 503, contentType: json, header: map[string]string{"Retry-After": "120"}, body: `{"status":503,"error":"maintenance"}`},
			reason: cloudapi.ReasonServerError, message: "maintenance", retryAfter: 2 * time.Minute,
			inError: []string{"(retry after 2m0s)"}},
		{name: "503 with Retry-After as an HTTP date", call: getAlert,
			reply:  reply{status: 503, header: map[string]string{"Retry-After": at.Add(90 * time.Second).Format(http.TimeFormat)}},
			reason: cloudapi.ReasonServerError, retryAfter: 90 * time.Second},
		{name: "503 with an absurd Retry-After waits at most a day", call: listPipes,
			reply:  reply{status: 503, header: map[string]string{"Retry-After": "99999999999"}},
			reason: cloudapi.ReasonServerError, retryAfter: ratebudget.MaxHold},
		{name: "503 ignores a rate limit's reset header", call: listPipes,
			reply:  reply{status: 503, header: map[string]string{"X-RateLimit-Reset": "600"}},
			reason: cloudapi.ReasonServerError},
		{name: "envelope status disagrees: its words show", call: listPipes,
			reply:  reply{status: 200, contentType: json, body: `{"status":500,"requestId":"r-1","error":"INTERNAL: database unavailable"}`},
			reason: cloudapi.ReasonInvalidResponse, message: "INTERNAL: database unavailable",
			inError: []string{"envelope status 500 disagrees with HTTP status 200"}},
		{name: "envelope words before its status, as an object", call: listEndpoints,
			reply:  reply{status: 200, contentType: json, body: `{"error":{"message":"quota of ` + testKeySecret + ` exceeded"},"status":403}`},
			reason: cloudapi.ReasonInvalidResponse, message: "quota of <redacted> exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := serve(t, tt.reply)
			c := newClient(cloudapi.Options{})
			cloudapi.SetClock(c, func() time.Time { return at })
			err := tt.call(context.Background(), c, srv.URL)
			e := asError(t, err)
			if e.Reason != tt.reason || e.StatusCode != tt.reply.status {
				t.Errorf("got %s %d, want %s %d (%v)", e.Reason, e.StatusCode, tt.reason, tt.reply.status, err)
			}
			if e.Message != tt.message {
				t.Errorf("Message = %q, want %q", e.Message, tt.message)
			}
			if want := strings.ReplaceAll(tt.location, "<srv>", srv.URL); !strings.HasPrefix(e.Location, want) || (want == "") != (e.Location == "") {
				t.Errorf("Location = %q, want %q", e.Location, want)
			}
			if e.RetryAfter != tt.retryAfter {
				t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, tt.retryAfter)
			}
			if tt.retryAfter > 0 && !e.RetryAt.Equal(at.Add(tt.retryAfter)) {
				t.Errorf("RetryAt = %v, want %v", e.RetryAt, at.Add(tt.retryAfter))
			}
			for _, s := range tt.inError {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
			for _, s := range tt.notInError {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error %q shows %q", err, s)
				}
			}
		})
	}
}

// A 503's wait holds back the call that got it (its caller schedules by
// Error.RetryAfter), not the credential's budget: the other services read
// with the same key at the same host are still called.
func TestServiceUnavailableHoldsNoBudget(t *testing.T) {
	srv, _ := serve(t, reply{status: 503, header: map[string]string{"Retry-After": "300"}})
	budgets := cloudapi.NewBudgets(ratebudget.RateLimit{Requests: -1}, ratebudget.RateLimit{Requests: -1})
	c := newClient(cloudapi.Options{Budgets: budgets})
	if e := asError(t, listPipes(context.Background(), c, srv.URL)); e.RetryAfter != 5*time.Minute {
		t.Fatalf("RetryAfter = %v, want 5m", e.RetryAfter)
	}
	if until := budgets.HeldUntil(cloudapi.APIManagement, srv.URL, testCreds); !until.IsZero() {
		t.Errorf("the budget is held until %v after a 503, want no hold", until)
	}
}

// A null result is an empty list, as the vendor's own clients read it.
func TestNullResultIsAnEmptyList(t *testing.T) {
	srv, _ := serve(t, reply{status: 200, contentType: "application/json", body: `{"status":200,"requestId":"r-null","result":null}`})
	list, err := newClient(cloudapi.Options{}).ListPipes(context.Background(), srv.URL, testCreds, orgID, svcID, pipeOptions{})
	if err != nil {
		t.Fatalf("ListPipes: %v, want an empty list", err)
	}
	if len(list.Items) != 0 || list.Total != 0 || list.RequestID != "r-null" {
		t.Errorf("list = %+v, want no items, total 0, requestId r-null", list)
	}
}
