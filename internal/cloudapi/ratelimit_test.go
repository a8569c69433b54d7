package cloudapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

func startFake(t *testing.T) *fakecloud.Server {
	t.Helper()
	fake := fakecloud.Start(fakecloud.DefaultData())
	t.Cleanup(fake.Close)
	return fake
}

func TestRateLimiterWaitsForItsTurn(t *testing.T) {
	fake := startFake(t)
	const per = 300 * time.Millisecond
	c := cloudapi.New(cloudapi.Options{ManagementRate: cloudapi.RateLimit{Requests: 2, Per: per, Burst: 2}})
	for range 5 {
		if err := listPipes(context.Background(), c, fake.URL); err != nil {
			t.Fatal(err)
		}
	}
	log := fake.CallLog()
	if len(log) != 5 {
		t.Fatalf("%d calls, want 5", len(log))
	}
	// At most 2 calls in any window of 300ms (less a little for clock slop
	// between sending and the fake recording).
	for i := 2; i < len(log); i++ {
		if gap := log[i].Time.Sub(log[i-2].Time); gap < per-20*time.Millisecond {
			t.Errorf("calls %d and %d are %v apart, want at least %v", i-2, i, gap, per)
		}
	}
}

func TestRateLimiterFailsFastWhenTheDeadlineIsTooShort(t *testing.T) {
	fake := startFake(t)
	obs := &observer{}
	c := cloudapi.New(cloudapi.Options{ManagementRate: cloudapi.RateLimit{Requests: 1, Per: time.Hour}, Observer: obs})
	if err := listPipes(context.Background(), c, fake.URL); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	err := listEndpoints(ctx, c, fake.URL) // same key, other operation: same limiter
	e := asError(t, err)
	if e.Reason != cloudapi.ReasonRateLimited || e.StatusCode != 0 {
		t.Errorf("got %v, want a local RateLimited", err)
	}
	if e.RetryAfter < 59*time.Minute || e.RetryAfter > time.Hour {
		t.Errorf("RetryAfter = %v, want about 1h", e.RetryAfter)
	}
	if time.Since(start) > 100*time.Millisecond {
		t.Errorf("took %v, want an immediate failure", time.Since(start))
	}
	if n := fake.Calls(fakecloud.OpListReversePrivateEndpoints); n != 0 {
		t.Errorf("%d calls reached the fake, want 0", n)
	}
	if got := obs.codes(); len(got) != 2 || got[1] != "management/list_reverse_private_endpoints/rate_limited_locally" {
		t.Errorf("observed %v", got)
	}
	// Another key has its own limiter, and the alert API its own.
	other := cloudapi.BasicCredentials{KeyID: "other", KeySecret: "other"}
	if _, err := c.ListPipes(ctx, fake.URL, other, orgID, svcID, pipeOptions{}); cloudapi.ReasonOf(err) != cloudapi.ReasonUnauthorized {
		t.Errorf("other key: %v, want the fake's Unauthorized", err)
	}
	if _, err := c.GetAlert(ctx, fake.URL, fakecloud.DefaultAlertToken, fakecloud.DefaultAlertID); err != nil {
		t.Errorf("alert API: %v", err)
	}
}

func TestRateLimiterWaitEndsWithTheContext(t *testing.T) {
	fake := startFake(t)
	c := cloudapi.New(cloudapi.Options{AlertRate: cloudapi.RateLimit{Requests: 1, Per: time.Hour}})
	if err := getAlert(context.Background(), c, fake.URL); err != nil {
		t.Fatalf("first call: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	err := getAlert(ctx, c, fake.URL)
	if cloudapi.ReasonOf(err) != cloudapi.ReasonUnreachable {
		t.Errorf("got %v, want Unreachable after cancel", err)
	}
	if n := fake.Calls(fakecloud.OpGetAlert); n != 1 {
		t.Errorf("%d calls, want 1", n)
	}
}

// After a 429, nothing goes out with that credential on that API until the
// wait the service asked for is over.
func TestRateLimitedCredentialIsHeldBack(t *testing.T) {
	fake := startFake(t)
	c := newClient(cloudapi.Options{})
	fake.SetFault(fakecloud.OpListPipes, fakecloud.Fault{Status: 429, RetryAfter: "2", Times: 1})

	err := listPipes(context.Background(), c, fake.URL)
	if e := asError(t, err); e.StatusCode != 429 || e.RetryAfter != 2*time.Second {
		t.Fatalf("first call: %v, want 429 with RetryAfter 2s", err)
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
	other := cloudapi.BasicCredentials{KeyID: "other", KeySecret: "x"}
	if _, err := c.ListPipes(context.Background(), fake.URL, other, orgID, svcID, pipeOptions{}); cloudapi.ReasonOf(err) != cloudapi.ReasonUnauthorized {
		t.Errorf("other key: %v, want it sent", err)
	}
}
