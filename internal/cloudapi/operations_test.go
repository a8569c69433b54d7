package cloudapi_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// The two sources of the tests, at a base URL.
func alertHost(u string) cloudapi.AlertSource {
	return cloudapi.AlertSource{API: cloudapi.APIAlert, BaseURL: u, Token: testToken}
}

func managementHost(u string) cloudapi.AlertSource {
	return cloudapi.AlertSource{API: cloudapi.APIManagement, BaseURL: u, Key: testCreds, OrganizationID: orgID, ServiceID: svcID}
}

// The newest alert shape names alerts with displayName beside or instead of
// name, and tags them: status shows each name under the cloud's own member
// name (displayName as displayName, a null name absent), and the tags,
// bounded and scrubbed.
func TestGetAlertShowsTheCloudsNamesAndTags(t *testing.T) {
	long := strings.Repeat("t", 100)
	many := make([]string, 25)
	for i := range many {
		many[i] = fmt.Sprintf("%q", fmt.Sprintf("tag-%d", i))
	}
	tests := []struct {
		name        string
		members     string
		want        *string // name
		displayName *string
		tags        []string
		leftOut     []string
	}{
		{"older servers: name", `"name":"Lag"`, ptr("Lag"), nil, nil, nil},
		{"newest servers: displayName only", `"displayName":"Ingest lag"`, nil, ptr("Ingest lag"), nil, nil},
		{"a null name stays absent beside displayName", `"name":null,"displayName":"Checkout error rate (inline)"`, nil, ptr("Checkout error rate (inline)"), nil, nil},
		{"both: each under its own name", `"name":"ingest_lag_v2","displayName":"Ingest lag"`, ptr("ingest_lag_v2"), ptr("Ingest lag"), nil, nil},
		{"both, in the other order", `"displayName":"Ingest lag","name":"ingest_lag_v2"`, ptr("ingest_lag_v2"), ptr("Ingest lag"), nil, nil},
		{"an empty displayName is kept as sent", `"displayName":"","name":"ingest_lag_v2"`, ptr("ingest_lag_v2"), ptr(""), nil, nil},
		{"displayName of an unusable type: left out and named", `"displayName":{"en":"x"},"name":"n"`, ptr("n"), nil, nil, []string{"displayName"}},
		{"tags in the order sent", `"tags":["ingest","p1"]`, nil, nil, []string{"ingest", "p1"}, nil},
		{"a tag of an unusable type is left out alone", `"tags":["ingest",7,"p1"]`, nil, nil, []string{"ingest", "p1"}, []string{"tags[1]"}},
		{"tags of an unusable type", `"tags":{"team":"data"}`, nil, nil, nil, []string{"tags"}},
		{"at most 20 tags", `"tags":[` + strings.Join(many, ",") + `]`, nil, nil, func() []string {
			out := make([]string, 20)
			for i := range out {
				out[i] = fmt.Sprintf("tag-%d", i)
			}
			return out
		}(), nil},
		{"a tag is cut to 64 characters", `"tags":["` + long + `"]`, nil, nil, []string{strings.Repeat("t", 63) + "…"}, nil},
		{"the token is redacted from a tag and the names", `"name":"` + testTokenValue + `","displayName":"sent with ` + testTokenValue + `","tags":["Bearer ` + testTokenValue + `"]`,
			ptr("<redacted>"), ptr("sent with <redacted>"), []string{"Bearer <redacted>"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := getAlertFrom(t, `{"data":{"id":"a1",`+tt.members+`}}`)
			if err != nil {
				t.Fatal(err)
			}
			assertEqual(t, got.Alert.Name, tt.want)
			assertEqual(t, got.Alert.DisplayName, tt.displayName)
			assertEqual(t, got.Alert.Tags, tt.tags)
			assertEqual(t, got.LeftOut, tt.leftOut)
		})
	}
}

// The managed service serves one alert through the management API: the
// organization key as HTTP Basic, the management path, the envelope, its
// request ID; the alert read as the alert API's is.
func TestGetAlertFromTheManagementAPI(t *testing.T) {
	srv, rec := serve(t, reply{status: 200, contentType: "application/json", body: `{"status":200,"requestId":"req-7",` +
		`"result":{"id":"65f5e4a3b9e77c001a123456","displayName":"Ingest lag","teamId":"t1","state":"ALERT","threshold":"x",` +
		`"message":"key ` + testKeySecret + `"}}`})
	got, err := newClient(cloudapi.Options{}).GetAlertFrom(context.Background(), managementHost(srv.URL+"/prefix/"), "65f5e4a3b9e77c001a123456")
	if err != nil {
		t.Fatal(err)
	}
	want := cloudapi.AlertResult{RequestID: "req-7", LeftOut: []string{"threshold"}}
	want.Alert.ID = "65f5e4a3b9e77c001a123456"
	want.Alert.DisplayName, want.Alert.Team, want.Alert.State = ptr("Ingest lag"), ptr("t1"), ptr("ALERT")
	want.Alert.Message = ptr("key <redacted>")
	assertEqual(t, got, want)
	req := rec.all()[0]
	if p := req.URL.EscapedPath(); p != "/prefix/v1/organizations/"+orgID+"/services/"+svcID+"/observability/alerts/65f5e4a3b9e77c001a123456" {
		t.Errorf("path %s", p)
	}
	if a := req.Header.Get("Authorization"); a != "Basic "+base64.StdEncoding.EncodeToString([]byte("fake-key-id:"+testKeySecret)) {
		t.Errorf("Authorization %q, want the management key as HTTP Basic", a)
	}
}

// The management host's failures read as the management API's: its
// envelope's words and request ID, a 424 of an idle service, a 429's
// X-RateLimit-Reset holding the management key's budget (the one pipes
// and endpoints spend), never the alert token's.
func TestGetAlertFromTheManagementAPIFailsAsTheManagementAPI(t *testing.T) {
	// The budgets' hold ends on the real clock: the client answers at now.
	at := time.Now()
	tests := []struct {
		name   string
		reply  reply
		reason cloudapi.Reason
		text   string
	}{
		{"unknown alert", reply{status: 404, contentType: "application/json", body: `{"status":404,"requestId":"r1","error":"Not found: alert x"}`},
			cloudapi.ReasonNotFound, "get alert: 404 NotFound: Not found: alert x (requestId r1)"},
		{"idle service", reply{status: 424, contentType: "application/json", body: `{"status":424,"error":"FAILED_DEPENDENCY: Service is not running. Current state: idle"}`},
			cloudapi.ReasonServiceIdle, "get alert: 424 ServiceIdle: FAILED_DEPENDENCY: Service is not running. Current state: idle"},
		{"rate limited", reply{status: 429, contentType: "application/json", header: map[string]string{"X-RateLimit-Reset": "7"},
			body: `{"status":429,"error":"Too many requests"}`},
			cloudapi.ReasonRateLimited, "get alert: 429 RateLimited: Too many requests (retry after 7s)"},
		{"envelope disagrees", reply{status: 200, contentType: "application/json", body: `{"status":500,"requestId":"r2","error":"boom with ` + testKeySecret + `"}`},
			cloudapi.ReasonInvalidResponse, "get alert: 200 InvalidResponse: boom with <redacted>: envelope status 500 disagrees with HTTP status 200 (requestId r2)"},
		{"result not an alert", reply{status: 200, contentType: "application/json", body: `{"status":200,"result":[]}`},
			cloudapi.ReasonInvalidResponse, "get alert: 200 InvalidResponse: management envelope result is not an alert object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := serve(t, tt.reply)
			off := ratebudget.RateLimit{Requests: -1}
			budgets := cloudapi.NewBudgets(off, off)
			c := newClient(cloudapi.Options{Budgets: budgets})
			cloudapi.SetClock(c, func() time.Time { return at })
			_, err := c.GetAlertFrom(context.Background(), managementHost(srv.URL), "a1")
			e := asError(t, err)
			if e.Reason != tt.reason || err.Error() != tt.text {
				t.Errorf("got %s %q\nwant %s %q", e.Reason, err.Error(), tt.reason, tt.text)
			}
			held := budgets.HeldUntil(cloudapi.APIManagement, srv.URL, testCreds)
			if tt.reason == cloudapi.ReasonRateLimited && !held.Equal(at.Add(7*time.Second)) {
				t.Errorf("management key held until %v, want %v", held, at.Add(7*time.Second))
			}
			if tt.reason != cloudapi.ReasonRateLimited && !held.IsZero() {
				t.Errorf("management key held until %v", held)
			}
			if alertHeld := budgets.HeldUntil(cloudapi.APIAlert, srv.URL, testToken); !alertHeld.IsZero() {
				t.Errorf("the alert token is held until %v: the management host's alerts are the key's", alertHeld)
			}
		})
	}
}

// An alert source is checked before anything is sent.
func TestAlertSourceIsCheckedBeforeSending(t *testing.T) {
	srv, rec := serve(t, reply{status: 200, body: `{}`})
	c := newClient(cloudapi.Options{})
	for name, src := range map[string]cloudapi.AlertSource{
		"no API":                 {BaseURL: srv.URL, Token: testToken},
		"alert host, no token":   {API: cloudapi.APIAlert, BaseURL: srv.URL},
		"management, no key":     {API: cloudapi.APIManagement, BaseURL: srv.URL, OrganizationID: orgID, ServiceID: svcID},
		"management, no service": {API: cloudapi.APIManagement, BaseURL: srv.URL, Key: testCreds, OrganizationID: orgID},
		"an ID climbing out":     {API: cloudapi.APIManagement, BaseURL: srv.URL, Key: testCreds, OrganizationID: orgID, ServiceID: ".."},
	} {
		_, getErr := c.GetAlertFrom(context.Background(), src, "a1")
		_, listErr := c.ListAlerts(context.Background(), src, cloudapi.AlertPageRequest{})
		for _, err := range []error{getErr, listErr} {
			if cloudapi.ReasonOf(err) != cloudapi.ReasonConfigurationError || errors.Is(err, cloudapi.ErrNoListRoute) {
				t.Errorf("%s: %v, want a ConfigurationError", name, err)
			}
		}
	}
	for _, page := range []cloudapi.AlertPageRequest{{Limit: -1}, {Limit: 1001}, {Offset: -1}} {
		_, err := c.ListAlerts(context.Background(), alertHost(srv.URL), page)
		if cloudapi.ReasonOf(err) != cloudapi.ReasonConfigurationError {
			t.Errorf("%+v: %v, want a ConfigurationError", page, err)
		}
	}
	if n := len(rec.all()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// fmt prints the unexported fields of a struct by reflection, without calling
// their Format or String methods, so redaction there cannot rely on them.
func TestCredentialsRedactedAsUnexportedFields(t *testing.T) {
	const secret, token = "s3cr3t-value", "t0ken-value"
	type holder struct {
		c cloudapi.BasicCredentials
		t cloudapi.BearerToken
		p *cloudapi.BasicCredentials
		s []cloudapi.BearerToken
		m map[string]cloudapi.BasicCredentials
	}
	creds := cloudapi.NewBasicCredentials("key-id-1", secret)
	tok := cloudapi.NewBearerToken(token)
	h := holder{c: creds, t: tok, p: &creds, s: []cloudapi.BearerToken{tok}, m: map[string]cloudapi.BasicCredentials{"k": creds}}
	type nested struct{ h holder }
	forbidden := []string{secret, token, fmt.Sprintf("%x", secret), fmt.Sprintf("%x", token), fmt.Sprintf("%X", secret), fmt.Sprintf("%X", token)}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T"} {
		for _, v := range []any{h, &h, nested{h}, struct{ c cloudapi.BasicCredentials }{creds}, struct{ t cloudapi.BearerToken }{tok}} {
			out := fmt.Sprintf(verb, v)
			for _, f := range forbidden {
				if strings.Contains(out, f) {
					t.Errorf("fmt %s of %T printed a secret: %s", verb, v, out)
				}
			}
		}
	}
}
