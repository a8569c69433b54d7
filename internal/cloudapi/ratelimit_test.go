package cloudapi_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

func startFake(t *testing.T) *fakecloud.Server {
	t.Helper()
	fake := fakecloud.Start(fakecloud.DefaultData())
	t.Cleanup(fake.Close)
	return fake
}

// Admission is the caller's business: a call never sleeps on the client-side
// limit, even when the budget is spent, so reconcile workers never block in
// the client.
func TestCallsNeverWaitForTheLimiter(t *testing.T) {
	fake := startFake(t)
	obs := &observer{}
	budgets := cloudapi.NewBudgets(ratebudget.RateLimit{Requests: 1, Per: time.Hour}, ratebudget.RateLimit{})
	c := cloudapi.New(cloudapi.Options{Budgets: budgets, Observer: obs})
	creds := defaultCreds()
	if wait := budgets.Admit(cloudapi.APIManagement, fake.URL, creds, 1); wait != 0 {
		t.Fatalf("first admission: wait %v, want 0", wait)
	}
	if wait := budgets.Admit(cloudapi.APIManagement, fake.URL, creds, 1); wait < time.Hour {
		t.Fatalf("second admission: wait %v, want the rest of the stretched hour", wait)
	}
	start := time.Now()
	for range 5 {
		if _, err := c.ListPipes(context.Background(), fake.URL, creds, fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, pipeOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("5 calls took %v: they waited", d)
	}
	if n := fake.Calls(fakecloud.OpListPipes); n != 5 {
		t.Errorf("%d calls reached the fake, want 5", n)
	}
	for _, code := range obs.codes() {
		if code != "management/list_pipes/200" {
			t.Errorf("observed %s, want only 200s", code)
		}
	}
}

// Holds and budgets belong to a credential at an API host: a key used with
// two base URLs is two budgets, so a 429 from one host holds nothing at the
// other.
func TestRetryAfterHoldIsKeyedByHostAndCredential(t *testing.T) {
	limited, limitedRec := serve(t, reply{status: 429, header: map[string]string{"Retry-After": "86400"}})
	open, openRec := serve(t, reply{status: 200, contentType: "application/json", body: `{"status":200,"result":[]}`})
	off := ratebudget.RateLimit{Requests: -1}
	budgets := cloudapi.NewBudgets(off, off)
	c := newClient(cloudapi.Options{Budgets: budgets})
	before := time.Now()
	err := listPipes(context.Background(), c, limited.URL)
	e := asError(t, err)
	if e.StatusCode != http.StatusTooManyRequests || e.RetryAfter != 24*time.Hour {
		t.Fatalf("first call: %v, want 429 with RetryAfter 24h", err)
	}
	if e.RetryAt.Before(before.Add(24*time.Hour)) || e.RetryAt.After(time.Now().Add(24*time.Hour)) {
		t.Errorf("RetryAt = %v, want 24h after the answer", e.RetryAt)
	}

	// The same key at the other host: sent, and admitted.
	for _, call := range []callFunc{listPipes, listEndpoints} {
		if err := call(context.Background(), c, open.URL); err != nil {
			t.Errorf("call to the other host: %v, want it sent", err)
		}
	}
	if wait := budgets.Admit(cloudapi.APIManagement, open.URL, testCreds, 2); wait != 0 {
		t.Errorf("Admit at the other host: wait %v, want 0", wait)
	}
	// The limited host: held back, without a request.
	err = listEndpoints(context.Background(), c, limited.URL+"/")
	if e := asError(t, err); e.Reason != cloudapi.ReasonRateLimited || e.StatusCode != 0 || e.RetryAfter < 23*time.Hour {
		t.Errorf("call to the limited host: %v, want held back for about 24h", err)
	}
	if wait := budgets.Admit(cloudapi.APIManagement, limited.URL, testCreds, 1); wait < 23*time.Hour {
		t.Errorf("Admit at the limited host: wait %v, want about 24h", wait)
	}
	if n, m := len(limitedRec.all()), len(openRec.all()); n != 1 || m != 2 {
		t.Errorf("requests: %d to the limited host (want 1), %d to the other (want 2)", n, m)
	}
}

// A hold the controller persisted before a restart is given back with Hold
// and then acts as the 429 it came from did.
func TestHoldRestoresAPersistedRetryAfter(t *testing.T) {
	srv, rec := serve(t, reply{status: 200, contentType: "application/json", body: `{"data":{}}`})
	off := ratebudget.RateLimit{Requests: -1}
	budgets := cloudapi.NewBudgets(off, off)
	c := newClient(cloudapi.Options{Budgets: budgets})
	until := time.Now().Add(time.Hour).Truncate(time.Second)
	budgets.Hold(cloudapi.APIAlert, srv.URL, testToken, until)

	err := getAlert(context.Background(), c, srv.URL)
	e := asError(t, err)
	if e.Reason != cloudapi.ReasonRateLimited || !e.RetryAt.Equal(until) || cloudapi.RetryAfterOf(err) <= 59*time.Minute {
		t.Errorf("held call: %v (RetryAt %v), want RateLimited until %v", err, e.RetryAt, until)
	}
	if wait := budgets.Admit(cloudapi.APIAlert, srv.URL, testToken, 1); wait <= 59*time.Minute || wait > time.Hour {
		t.Errorf("Admit: wait %v, want the rest of the hour", wait)
	}
	// The management API with the same host is another budget.
	if wait := budgets.Admit(cloudapi.APIManagement, srv.URL, testCreds, 1); wait != 0 {
		t.Errorf("management Admit: wait %v, want 0", wait)
	}
	// A hold never shortens an earlier one, and one far away is capped.
	budgets.Hold(cloudapi.APIAlert, srv.URL, testToken, time.Now())
	budgets.Hold(cloudapi.APIAlert, srv.URL, cloudapi.NewBearerToken("other"), time.Now().Add(1000*time.Hour))
	if wait := budgets.Admit(cloudapi.APIAlert, srv.URL, testToken, 1); wait <= 59*time.Minute {
		t.Errorf("after a shorter Hold: wait %v, want the hour kept", wait)
	}
	if wait := budgets.Admit(cloudapi.APIAlert, srv.URL, cloudapi.NewBearerToken("other"), 1); wait > 24*time.Hour {
		t.Errorf("Hold of 1000h: wait %v, want at most 24h", wait)
	}
	if n := len(rec.all()); n != 0 {
		t.Errorf("%d requests sent while held, want 0", n)
	}
}

func TestFingerprintIdentifiesABudgetWithoutTheCredential(t *testing.T) {
	const base = "https://api.example.com/v1"
	fp := ratebudget.Fingerprint(cloudapi.APIManagement, base, testCreds)
	if len(fp) != 12 || strings.Trim(fp, "0123456789abcdef") != "" {
		t.Errorf("Fingerprint = %q, want 12 hex digits", fp)
	}
	same := []string{
		ratebudget.Fingerprint(cloudapi.APIManagement, base, cloudapi.NewBasicCredentials("fake-key-id", testKeySecret)),
		ratebudget.Fingerprint(cloudapi.APIManagement, "https://API.example.com:443/other/prefix", testCreds),
	}
	for _, s := range same {
		if s != fp {
			t.Errorf("Fingerprint of the same budget = %q, want %q", s, fp)
		}
	}
	different := map[string]string{
		"other API":    ratebudget.Fingerprint(cloudapi.APIAlert, base, testCreds),
		"other host":   ratebudget.Fingerprint(cloudapi.APIManagement, "https://eu.api.example.com/v1", testCreds),
		"other port":   ratebudget.Fingerprint(cloudapi.APIManagement, "https://api.example.com:8443/v1", testCreds),
		"other secret": ratebudget.Fingerprint(cloudapi.APIManagement, base, cloudapi.NewBasicCredentials("fake-key-id", "rotated")),
		"token":        ratebudget.Fingerprint(cloudapi.APIManagement, base, testToken),
	}
	for name, s := range different {
		if s == fp {
			t.Errorf("%s: same fingerprint %q", name, s)
		}
	}
	for _, s := range []string{testKeySecret, "fake-key-id", hex.EncodeToString([]byte(testKeySecret))[:12]} {
		if strings.Contains(fp, s) {
			t.Errorf("Fingerprint %q shows the credential", fp)
		}
	}
}

// After a 429, nothing goes out with that credential on that API until the
// wait the service asked for is over.
func TestRateLimitedCredentialIsHeldBack(t *testing.T) {
	fake := startFake(t)
	c := newClient(cloudapi.Options{})
	fake.SetFault(fakecloud.OpListPipes, fakecloud.Fault{Status: 429, RetryAfter: "2", Times: 1})

	err := listPipes(context.Background(), c, fake.URL)
	if e := asError(t, err); e.StatusCode != http.StatusTooManyRequests || e.RetryAfter != 2*time.Second || e.RetryAt.IsZero() {
		t.Fatalf("first call: %v, want 429 with RetryAfter 2s and RetryAt", err)
	}
	for _, call := range []callFunc{listPipes, listEndpoints} {
		err = call(context.Background(), c, fake.URL)
		e := asError(t, err)
		if e.Reason != cloudapi.ReasonRateLimited || e.StatusCode != 0 || e.RetryAfter <= time.Second || e.RetryAfter > 2*time.Second {
			t.Errorf("held-back call: %v, want RateLimited with 1s < RetryAfter <= 2s and no status", err)
		}
	}
	if n := fake.Calls(fakecloud.OpListPipes) + fake.Calls(fakecloud.OpListReversePrivateEndpoints); n != 1 {
		t.Errorf("%d management calls reached the fake, want 1", n)
	}
	// The alert API and other keys are not held back.
	if err := getAlert(context.Background(), c, fake.URL); err != nil {
		t.Errorf("alert call: %v, want it sent", err)
	}
	other := cloudapi.NewBasicCredentials("other", "x")
	if _, err := c.ListPipes(context.Background(), fake.URL, other, orgID, svcID, pipeOptions{}); cloudapi.ReasonOf(err) != cloudapi.ReasonUnauthorized {
		t.Errorf("other key: %v, want it sent", err)
	}
}

// MaxBatch is the most calls one Admit can ever reserve: the limit's
// Requests, 0 without a limit.
func TestMaxBatch(t *testing.T) {
	tests := []struct {
		name  string
		limit ratebudget.RateLimit
		want  int
	}{
		{"the requests, whatever the burst", ratebudget.RateLimit{Requests: 100, Per: time.Minute, Burst: 10}, 100},
		{"no burst", ratebudget.RateLimit{Requests: 7, Per: time.Minute}, 7},
		{"no limit", ratebudget.RateLimit{Requests: -1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cloudapi.NewBudgets(ratebudget.RateLimit{}, tt.limit)
			if got := c.MaxBatch(cloudapi.APIAlert); got != tt.want {
				t.Errorf("MaxBatch = %d, want %d", got, tt.want)
			}
			// A batch of MaxBatch calls is admitted by a rested budget; one
			// more is not.
			if tt.want > 0 {
				if wait := c.Admit(cloudapi.APIAlert, "https://alerts.example.com", cloudapi.NewBearerToken("t"), tt.want+1); wait == 0 {
					t.Errorf("a batch of %d was admitted", tt.want+1)
				}
				if wait := c.Admit(cloudapi.APIAlert, "https://alerts.example.com", cloudapi.NewBearerToken("t"), tt.want); wait != 0 {
					t.Errorf("a batch of MaxBatch (%d) waits %s on a rested budget", tt.want, wait)
				}
			}
		})
	}
}

// causeObserver records the causes of the 429s the client was told of.
type causeObserver struct {
	observer
	causes []string
}

func (o *causeObserver) ObserveRateLimited(api, cause string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.causes = append(o.causes, api+"/"+cause)
}

// A 429 the client gets while its budget's admissions kept under the
// manager's part is told as caused by others; one on a budget the manager
// does not pace (its limit disabled) as the manager's.
func TestRateLimitedTellsItsCause(t *testing.T) {
	fake := startFake(t)
	obs := &causeObserver{}
	budgets := cloudapi.NewReservingBudgets(ratebudget.RateLimit{}, ratebudget.RateLimit{Requests: -1}, 0.3)
	c := newClient(cloudapi.Options{Observer: obs, Budgets: budgets})
	fake.SetFault(fakecloud.OpListPipes, fakecloud.Fault{Status: 429, RetryAfter: "2", Times: 1})
	fake.SetFault(fakecloud.OpGetAlert, fakecloud.Fault{Status: 429, Times: 1})
	if budgets.Admit(cloudapi.APIManagement, fake.URL, testCreds, 1) != 0 {
		t.Fatal("a fresh budget did not admit one call")
	}
	_ = listPipes(context.Background(), c, fake.URL)
	_ = getAlert(context.Background(), c, fake.URL)
	if got, want := fmt.Sprint(obs.causes), "[management/others alert/manager]"; got != want {
		t.Errorf("429 causes = %s, want %s", got, want)
	}
}
