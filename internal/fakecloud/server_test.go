package fakecloud_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/google/uuid"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/fakecloud/fakecloudtest"
)

const (
	org = fakecloud.DefaultOrganizationID
	svc = fakecloud.DefaultServiceID
)

var (
	pipesPath     = "/v1/organizations/" + org + "/services/" + svc + "/pipes"
	endpointsPath = "/v1/organizations/" + org + "/services/" + svc + "/pipesReversePrivateEndpoints"
	alertPath     = "/api/v2/alerts/" + fakecloud.DefaultAlertID
)

var (
	basicAuth  = fakecloudtest.BasicAuth
	bearerAuth = fakecloudtest.BearerAuth
)

func start(t *testing.T) *fakecloud.Server {
	t.Helper()
	s := fakecloud.Start(fakecloud.DefaultData())
	t.Cleanup(s.Close)
	return s
}

type result struct {
	status int
	header http.Header
	body   []byte
}

func get(t *testing.T, s *fakecloud.Server, path, auth string) result {
	t.Helper()
	r := fakecloudtest.Do(t, http.MethodGet, s.URL+path, auth, "")
	return result{r.Status, r.Header, r.Body}
}

// envelope holds the members of both APIs' bodies.
type envelope struct {
	Status    int              `json:"status"`
	RequestID string           `json:"requestId"`
	Result    []map[string]any `json:"result"`
	Error     string           `json:"error"`
	Message   string           `json:"message"`
}

func decode(t *testing.T, r result) envelope {
	t.Helper()
	var e envelope
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
	return e
}

func assertUUIDv4(t *testing.T, s string) {
	t.Helper()
	u, err := uuid.Parse(s)
	if err != nil || u.Version() != 4 || u.Variant() != uuid.RFC4122 {
		t.Errorf("requestId %q is not a UUID v4", s)
	}
}

func TestOperationsAnswerAsTheSpecSays(t *testing.T) {
	s := start(t)
	tests := []struct {
		path, auth string
		items      int
	}{
		{pipesPath, basicAuth, 8},
		{endpointsPath, basicAuth, 1},
		{"/v1/organizations/" + org + "/services/" + fakecloud.EmptyServiceID + "/pipes", basicAuth, 0},
		{"/v1/organizations/" + org + "/services/" + fakecloud.EmptyServiceID + "/pipesReversePrivateEndpoints", basicAuth, 0},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		r := get(t, s, tt.path, tt.auth)
		if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %q", tt.path, r.status, r.header.Get("Content-Type"))
		}
		e := decode(t, r)
		if e.Status != 200 || e.Result == nil || len(e.Result) != tt.items {
			t.Errorf("%s: status %d, %d items (nil %v), want 200 and %d", tt.path, e.Status, len(e.Result), e.Result == nil, tt.items)
		}
		assertUUIDv4(t, e.RequestID)
		if seen[e.RequestID] {
			t.Errorf("requestId %s reused", e.RequestID)
		}
		seen[e.RequestID] = true
	}

	r := get(t, s, alertPath, bearerAuth)
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("alert: %d %q", r.status, r.header.Get("Content-Type"))
	}
	var alert map[string]map[string]any
	if err := json.Unmarshal(r.body, &alert); err != nil || len(alert) != 1 || alert["data"]["id"] != fakecloud.DefaultAlertID {
		t.Errorf("alert body %s (%v), want {\"data\": {...}} only", r.body, err)
	}
	if !strings.Contains(string(r.body), `"threshold":12.25`) {
		t.Errorf("decimal threshold not served exactly: %s", r.body)
	}
}

func TestAuthentication(t *testing.T) {
	s := start(t)
	tests := []struct {
		name, path, auth string
		want             int
	}{
		{"management ok", pipesPath, basicAuth, 200},
		{"management missing", pipesPath, "", 401},
		{"management wrong secret", pipesPath, "Basic ZmFrZS1rZXktaWQ6d3Jvbmc=", 401},
		{"management Bearer scheme", endpointsPath, "Bearer ZmFrZS1rZXktaWQ6ZmFrZS1rZXktc2VjcmV0", 401},
		{"management token as Bearer", pipesPath, bearerAuth, 401},
		{"management garbage", pipesPath, "Basic !!!", 401},
		{"alert ok", alertPath, bearerAuth, 200},
		{"alert missing", alertPath, "", 401},
		{"alert wrong token", alertPath, "Bearer nope", 401},
		{"alert Basic scheme", alertPath, basicAuth, 401},
		{"alert empty bearer", alertPath, "Bearer ", 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := get(t, s, tt.path, tt.auth)
			if r.status != tt.want {
				t.Fatalf("status %d, want %d", r.status, tt.want)
			}
			if tt.want != 401 {
				return
			}
			if r.header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
			e := decode(t, r)
			if strings.HasPrefix(tt.path, "/api/") {
				if e.Message == "" || e.Error != "" {
					t.Errorf("alert 401 body %s, want {\"message\": ...}", r.body)
				}
				return
			}
			if e.Status != 401 || e.Error == "" {
				t.Errorf("management 401 body %s, want status 401 and error", r.body)
			}
			assertUUIDv4(t, e.RequestID)
		})
	}
}

func TestNotFound(t *testing.T) {
	s := start(t)
	tests := []struct{ name, path, auth string }{
		{"unknown organization", "/v1/organizations/00000000-0000-4000-8000-000000000000/services/" + svc + "/pipes", basicAuth},
		{"unknown service", "/v1/organizations/" + org + "/services/00000000-0000-4000-8000-000000000000/pipesReversePrivateEndpoints", basicAuth},
		{"unknown alert", "/api/v2/alerts/nope", bearerAuth},
		{"unknown path", "/v2/other", basicAuth},
	}
	for _, tt := range tests {
		r := get(t, s, tt.path, tt.auth)
		if r.status != 404 || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %q %s", tt.name, r.status, r.header.Get("Content-Type"), r.body)
		}
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+pipesPath, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", resp.StatusCode)
	}
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name  string
		op    fakecloud.Operation
		fault fakecloud.Fault
		path  string
		auth  string
		check func(t *testing.T, r result)
	}{
		{"429 with Retry-After", fakecloud.OpListPipes, fakecloud.Fault{Status: 429, RetryAfter: "30"}, pipesPath, basicAuth,
			func(t *testing.T, r result) {
				e := decode(t, r)
				if r.status != 429 || r.header.Get("Retry-After") != "30" || e.Status != 429 {
					t.Errorf("%d %q %s", r.status, r.header.Get("Retry-After"), r.body)
				}
			}},
		{"answers before checking credentials", fakecloud.OpListPipes, fakecloud.Fault{Status: 503}, pipesPath, "",
			func(t *testing.T, r result) {
				if r.status != 503 {
					t.Errorf("status %d", r.status)
				}
			}},
		{"alert error style", fakecloud.OpGetAlert, fakecloud.Fault{Status: 500}, alertPath, bearerAuth,
			func(t *testing.T, r result) {
				if e := decode(t, r); r.status != 500 || e.Message == "" {
					t.Errorf("%d %s", r.status, r.body)
				}
			}},
		{"malformed", fakecloud.OpListReversePrivateEndpoints, fakecloud.Fault{Malformed: true}, endpointsPath, basicAuth,
			func(t *testing.T, r result) {
				if r.status != 200 || json.Valid(r.body) {
					t.Errorf("%d valid=%v", r.status, json.Valid(r.body))
				}
			}},
		{"oversized", fakecloud.OpGetAlert, fakecloud.Fault{OversizedBytes: 1 << 20}, alertPath, bearerAuth,
			func(t *testing.T, r result) {
				if r.status != 200 || len(r.body) < 1<<20 || !json.Valid(r.body) {
					t.Errorf("%d, %d bytes, valid=%v", r.status, len(r.body), json.Valid(r.body))
				}
			}},
		{"plain text 401", fakecloud.OpListPipes, fakecloud.Fault{Status: 401, Body: fakecloud.PlainText401, ContentType: "text/plain"}, pipesPath, basicAuth,
			func(t *testing.T, r result) {
				if r.status != 401 || string(r.body) != fakecloud.PlainText401 || r.header.Get("Content-Type") != "text/plain" {
					t.Errorf("%d %q %s", r.status, r.header.Get("Content-Type"), r.body)
				}
			}},
		{"HTML 504", fakecloud.OpGetAlert, fakecloud.Fault{Status: 504, Body: fakecloud.HTML504, ContentType: "text/html"}, alertPath, bearerAuth,
			func(t *testing.T, r result) {
				if r.status != 504 || !strings.Contains(string(r.body), "<title>504") {
					t.Errorf("%d %s", r.status, r.body)
				}
			}},
		{"content type only decorates the normal answer", fakecloud.OpListPipes, fakecloud.Fault{ContentType: "text/html"}, pipesPath, basicAuth,
			func(t *testing.T, r result) {
				if e := decode(t, r); r.status != 200 || r.header.Get("Content-Type") != "text/html" || len(e.Result) != 8 {
					t.Errorf("%d %q", r.status, r.header.Get("Content-Type"))
				}
			}},
		{"latency", fakecloud.OpListPipes, fakecloud.Fault{Latency: 150 * time.Millisecond}, pipesPath, basicAuth,
			func(t *testing.T, r result) {
				if r.status != 200 {
					t.Errorf("status %d", r.status)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t)
			s.SetFault(tt.op, tt.fault)
			begin := time.Now()
			tt.check(t, get(t, s, tt.path, tt.auth))
			if time.Since(begin) < tt.fault.Latency {
				t.Errorf("answered after %v, want at least %v", time.Since(begin), tt.fault.Latency)
			}
			if n := s.Calls(tt.op); n != 1 {
				t.Errorf("Calls = %d, want 1", n)
			}
		})
	}
}

func TestFaultTimesAndAlertID(t *testing.T) {
	s := start(t)
	s.SetFault(fakecloud.OpListPipes, fakecloud.Fault{Status: 500, Times: 2})
	var got []int
	for range 4 {
		got = append(got, get(t, s, pipesPath, basicAuth).status)
	}
	if want := []int{500, 500, 200, 200}; !equalInts(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}

	s.SetFault(fakecloud.OpGetAlert, fakecloud.Fault{Status: 404})
	s.SetFault(fakecloud.OpGetAlert, fakecloud.Fault{Status: 503, AlertID: fakecloud.SecondAlertID})
	if r := get(t, s, "/api/v2/alerts/"+fakecloud.SecondAlertID, bearerAuth); r.status != 503 {
		t.Errorf("faulted alert: %d, want 503 (the specific fault wins)", r.status)
	}
	if r := get(t, s, alertPath, bearerAuth); r.status != 404 {
		t.Errorf("other alert: %d, want 404 from the general fault", r.status)
	}
	s.ClearFaults()
	if r := get(t, s, "/api/v2/alerts/"+fakecloud.SecondAlertID, bearerAuth); r.status != 200 {
		t.Errorf("after ClearFaults: %d", r.status)
	}
	log := s.CallLog()
	if len(log) != 7 || log[0].Operation != fakecloud.OpListPipes || log[0].Status != 500 || log[0].OrganizationID != org ||
		log[4].AlertID != fakecloud.SecondAlertID || log[4].Status != 503 {
		t.Errorf("call log %+v", log)
	}
	s.ResetCalls()
	if s.Calls(fakecloud.OpGetAlert) != 0 || len(s.CallLog()) != 0 {
		t.Error("ResetCalls kept calls")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestHangUntilTheClientGivesUp(t *testing.T) {
	s := start(t)
	s.SetFault(fakecloud.OpListPipes, fakecloud.Fault{Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+pipesPath, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", basicAuth)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the client's deadline", err)
	}
	// The handler notices and returns; the call is logged with no status.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if log := s.CallLog(); len(log) == 1 && log[0].Status == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("call log %+v", s.CallLog())
}

func TestCloseEndsHangingRequests(t *testing.T) {
	s := fakecloud.Start(fakecloud.DefaultData())
	s.SetFault(fakecloud.OpGetAlert, fakecloud.Fault{Hang: true})
	errc := make(chan error, 1)
	go func() {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL+alertPath, http.NoBody)
		if err != nil {
			errc <- err
			return
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	for s.Calls(fakecloud.OpGetAlert) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close blocked on a hanging request")
	}
	// Whether the client saw an error or an answer, its request has ended.
	if err := <-errc; err != nil {
		t.Logf("the hanging request ended with: %v", err)
	}
}

func TestSetters(t *testing.T) {
	s := start(t)
	raw := []map[string]any{{"id": "p1", "name": nil, "unknownField": true, "scaling": "wrong type"}}
	s.SetPipes(org, "new-service", raw)
	raw[0]["id"] = "changed after the call" // the fake keeps its own copy
	r := get(t, s, "/v1/organizations/"+org+"/services/new-service/pipes", basicAuth)
	if want := `"result":[{"id":"p1","name":null,"scaling":"wrong type","unknownField":true}]`; !strings.Contains(string(r.body), want) {
		t.Errorf("body %s, want %s", r.body, want)
	}
	if r := get(t, s, "/v1/organizations/"+org+"/services/new-service/pipesReversePrivateEndpoints", basicAuth); r.status != 200 {
		t.Errorf("endpoints of a service created by SetPipes: %d", r.status)
	}

	s.DeleteAlert(fakecloud.DefaultAlertID)
	if r := get(t, s, alertPath, bearerAuth); r.status != 404 {
		t.Errorf("deleted alert: %d", r.status)
	}
	s.SetAlert("new", map[string]any{"id": "new", "threshold": json.Number("0.10")})
	if r := get(t, s, "/api/v2/alerts/new", bearerAuth); string(r.body) != `{"data":{"id":"new","threshold":0.10}}` {
		t.Errorf("new alert: %s", r.body)
	}

	s.SetManagementKey("k2", "s2")
	if r := get(t, s, pipesPath, basicAuth); r.status != 401 {
		t.Errorf("old key after SetManagementKey: %d", r.status)
	}
	s.SetAlertToken("t2")
	if r := get(t, s, "/api/v2/alerts/new", "Bearer t2"); r.status != 200 {
		t.Errorf("new token: %d", r.status)
	}

	s.DeleteService(org, svc)
	if r := get(t, s, endpointsPath, "Basic azI6czI="); r.status != 404 {
		t.Errorf("deleted service: %d", r.status)
	}
	s.SetData(fakecloud.DefaultData())
	if r := get(t, s, endpointsPath, basicAuth); r.status != 200 {
		t.Errorf("after SetData: %d", r.status)
	}
}

// Run with -race: setters, faults and requests at once.
func TestConcurrentUse(t *testing.T) {
	s := start(t)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			switch i % 4 {
			case 0:
				s.SetPipes(org, svc, []map[string]any{{"id": "x"}})
			case 1:
				s.SetFault(fakecloud.OpGetAlert, fakecloud.Fault{Status: 500, Times: 1})
			case 2:
				_ = s.Calls(fakecloud.OpListPipes) + len(s.CallLog())
			}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL+pipesPath, http.NoBody)
			if err != nil {
				t.Error(err)
				return
			}
			req.Header.Set("Authorization", basicAuth)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	if n := s.Calls(fakecloud.OpListPipes); n != 20 {
		t.Errorf("Calls = %d, want 20", n)
	}
}

func TestBudgetsPerCredential(t *testing.T) {
	s := fakecloud.Start(withTenant(fakecloud.DefaultData()))
	t.Cleanup(s.Close)
	clk := clocktesting.NewFakeClock(time.Unix(1_699_999_980, 0)) // a multiple of a minute: a window boundary with phase 0
	s.SetClock(clk.Now)
	s.SetManagementBudget(fakecloud.Budget{Requests: 3, Window: 10 * time.Second, Phase: 4 * time.Second})
	s.SetAlertBudget(fakecloud.Budget{Requests: 1, Window: time.Minute})

	clk.Step(5 * time.Second) // 1 s into a window that ends at +14 s
	var got []int
	for _, path := range []string{pipesPath, endpointsPath, pipesPath, endpointsPath} {
		got = append(got, get(t, s, path, basicAuth).status)
	}
	if want := []int{200, 200, 200, 429}; !equalInts(got, want) {
		t.Fatalf("statuses %v, want %v: both management operations share the key's budget", got, want)
	}
	r := get(t, s, pipesPath, basicAuth)
	if e := decode(t, r); r.status != 429 || r.header.Get("Retry-After") != "9" || e.Status != 429 || e.RequestID == "" {
		t.Errorf("over budget: %d, Retry-After %q, body %s; want 429, 9 and the management error envelope",
			r.status, r.header.Get("Retry-After"), r.body)
	}
	if r := get(t, s, pipesPath, tenantBasicAuth); r.status != 200 {
		t.Errorf("another key: %d, want 200 from its own budget", r.status)
	}
	if r := get(t, s, alertPath, bearerAuth); r.status != 200 {
		t.Errorf("alert API: %d, want 200 from its own budget", r.status)
	}
	r = get(t, s, alertPath, bearerAuth)
	if e := decode(t, r); r.status != 429 || r.header.Get("Retry-After") != "55" || e.Message == "" {
		t.Errorf("second alert call: %d, Retry-After %q, body %s; want 429, 55 and the alert error style",
			r.status, r.header.Get("Retry-After"), r.body)
	}
	if r := get(t, s, pipesPath, "Basic "+base64.StdEncoding.EncodeToString([]byte("fake-key-id:wrong"))); r.status != 401 {
		t.Errorf("a wrong secret: %d, want 401 (a credential of its own, within its budget)", r.status)
	}

	clk.Step(9 * time.Second) // the next window
	if r := get(t, s, pipesPath, basicAuth); r.status != 200 {
		t.Errorf("next window: %d, want 200", r.status)
	}

	s.SetManagementBudget(fakecloud.Budget{})
	for range 5 {
		if r := get(t, s, pipesPath, basicAuth); r.status != 200 {
			t.Fatalf("budget off: %d, want 200", r.status)
		}
	}
}

func TestCallLogFingerprintsCredentials(t *testing.T) {
	s := fakecloud.Start(withTenant(fakecloud.DefaultData()))
	t.Cleanup(s.Close)
	clk := clocktesting.NewFakeClock(time.Unix(1_700_000_000, 0))
	s.SetClock(clk.Now)
	get(t, s, pipesPath, basicAuth)
	get(t, s, pipesPath, tenantBasicAuth)
	get(t, s, alertPath, bearerAuth)
	get(t, s, alertPath, "")

	defaultKey := fakecloud.ManagementKey{KeyID: fakecloud.DefaultKeyID, KeySecret: fakecloud.DefaultKeySecret}
	want := []string{defaultKey.Fingerprint(), tenantKey.Fingerprint(), fakecloud.TokenFingerprint(fakecloud.DefaultAlertToken), ""}
	log := s.CallLog()
	if len(log) != len(want) {
		t.Fatalf("%d calls logged, want %d", len(log), len(want))
	}
	for i, c := range log {
		if c.KeyFingerprint != want[i] || !c.Time.Equal(clk.Now()) {
			t.Errorf("call %d: fingerprint %q at %v, want %q at the fake's clock", i, c.KeyFingerprint, c.Time, want[i])
		}
		if strings.Contains(c.KeyFingerprint, fakecloud.DefaultKeySecret) || len(c.KeyFingerprint) > 12 {
			t.Errorf("call %d: fingerprint %q is not a short digest", i, c.KeyFingerprint)
		}
	}
	if want[0] == want[1] {
		t.Error("two keys share a fingerprint")
	}
}

func TestFaultLimitedToOneKey(t *testing.T) {
	s := fakecloud.Start(withTenant(fakecloud.DefaultData()))
	t.Cleanup(s.Close)
	s.SetFault(fakecloud.OpListPipes, fakecloud.Fault{Status: 500})
	s.SetFault(fakecloud.OpListPipes, fakecloud.Fault{Status: 503, KeyID: tenantKey.KeyID})
	if r := get(t, s, pipesPath, tenantBasicAuth); r.status != 503 {
		t.Errorf("the key's calls: %d, want 503 (the specific fault wins)", r.status)
	}
	if r := get(t, s, pipesPath, basicAuth); r.status != 500 {
		t.Errorf("other key: %d, want 500 from the general fault", r.status)
	}
	s.SetFault(fakecloud.OpListPipes, fakecloud.Fault{Status: 502, KeyID: tenantKey.KeyID})
	if r := get(t, s, pipesPath, tenantBasicAuth); r.status != 502 {
		t.Errorf("after replacing the key's fault: %d, want 502", r.status)
	}
	s.ClearFault(fakecloud.OpListPipes)
	s.SetFault(fakecloud.OpListPipes, fakecloud.Fault{Status: 503, KeyID: tenantKey.KeyID})
	if r := get(t, s, pipesPath, basicAuth); r.status != 200 {
		t.Errorf("other key with only a key-limited fault: %d, want 200", r.status)
	}
}

func TestMoreCredentials(t *testing.T) {
	s := fakecloud.Start(withTenant(fakecloud.DefaultData()))
	t.Cleanup(s.Close)
	if r := get(t, s, pipesPath, tenantBasicAuth); r.status != 200 {
		t.Errorf("a further key: %d, want 200", r.status)
	}
	if r := get(t, s, alertPath, "Bearer "+tenantToken); r.status != 200 {
		t.Errorf("a further token: %d, want 200", r.status)
	}
	if r := get(t, s, alertPath, "Bearer "); r.status != 401 {
		t.Errorf("an empty token: %d, want 401", r.status)
	}
	s.SetManagementKey("new-id", "new-secret")
	if r := get(t, s, pipesPath, basicAuth); r.status != 401 {
		t.Errorf("the replaced key: %d, want 401", r.status)
	}
	if r := get(t, s, pipesPath, tenantBasicAuth); r.status != 200 {
		t.Errorf("a further key after SetManagementKey: %d, want 200", r.status)
	}
}

var tenantKey = fakecloud.ManagementKey{KeyID: "tenant-key-id", KeySecret: "tenant-key-secret"}

const tenantToken = "tenant-alert-token"

var tenantBasicAuth = "Basic " + base64.StdEncoding.EncodeToString([]byte(tenantKey.KeyID+":"+tenantKey.KeySecret))

// withTenant adds a second key and token to d.
func withTenant(d fakecloud.Data) fakecloud.Data {
	d.MoreManagementKeys = append(d.MoreManagementKeys, tenantKey)
	d.MoreAlertTokens = append(d.MoreAlertTokens, tenantToken)
	return d
}
