package cloudapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

const emptyList = `{"status":200,"requestId":"r","result":[]}`

func TestAuthorizationHeaders(t *testing.T) {
	srv, rec := serve(t, reply{status: 200, contentType: "application/json", body: emptyList})
	c := newClient(cloudapi.Options{})
	if err := listPipes(context.Background(), c, srv.URL); err != nil {
		t.Fatal(err)
	}
	if err := listEndpoints(context.Background(), c, srv.URL); err != nil {
		t.Fatal(err)
	}
	alertSrv, alertRec := serve(t, reply{status: 200, contentType: "application/json", body: `{"data":{}}`})
	if err := getAlert(context.Background(), c, alertSrv.URL); err != nil {
		t.Fatal(err)
	}
	// base64("fake-key-id:fake-key-secret"), as RFC 7617 builds it.
	const basic = "Basic ZmFrZS1rZXktaWQ6ZmFrZS1rZXktc2VjcmV0"
	for _, r := range rec.all() {
		if got := r.Header.Get("Authorization"); got != basic {
			t.Errorf("%s: Authorization = %q, want %q", r.URL.Path, got, basic)
		}
	}
	if got := alertRec.all()[0].Header.Get("Authorization"); got != "Bearer fake-alert-token" {
		t.Errorf("alert Authorization = %q", got)
	}
}

// The fake checks credentials as the spec says; the client's headers pass,
// and wrong ones are refused with Unauthorized.
func TestFakeCloudAcceptsClientCredentials(t *testing.T) {
	fake := fakecloud.Start(fakecloud.DefaultData())
	defer fake.Close()
	c := newClient(cloudapi.Options{})
	ctx := context.Background()
	good := cloudapi.NewBasicCredentials(fakecloud.DefaultKeyID, fakecloud.DefaultKeySecret)
	pipes, err := c.ListPipes(ctx, fake.URL, good, fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, pipeOptions{})
	if err != nil || len(pipes.Items) != 8 {
		t.Fatalf("ListPipes = %d pipes, %v; want 8 (one per kind of source)", len(pipes.Items), err)
	}
	eps, err := c.ListReversePrivateEndpoints(ctx, fake.URL, good, fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, endpointOptions{})
	if err != nil || len(eps.Items) != 1 {
		t.Fatalf("ListReversePrivateEndpoints = %d, %v; want 1", len(eps.Items), err)
	}
	alert, err := c.GetAlert(ctx, fake.URL, cloudapi.NewBearerToken(fakecloud.DefaultAlertToken), fakecloud.DefaultAlertID)
	if err != nil || alert.Alert.ID != fakecloud.DefaultAlertID {
		t.Fatalf("GetAlert = %+v, %v", alert, err)
	}

	bad := cloudapi.NewBasicCredentials(fakecloud.DefaultKeyID, "wrong")
	_, err = c.ListPipes(ctx, fake.URL, bad, fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, pipeOptions{})
	if cloudapi.ReasonOf(err) != cloudapi.ReasonUnauthorized {
		t.Errorf("wrong secret: %v, want Unauthorized", err)
	}
	_, err = c.GetAlert(ctx, fake.URL, cloudapi.NewBearerToken("wrong"), fakecloud.DefaultAlertID)
	if cloudapi.ReasonOf(err) != cloudapi.ReasonUnauthorized {
		t.Errorf("wrong token: %v, want Unauthorized", err)
	}
}

func TestURLs(t *testing.T) {
	tests := []struct {
		name, prefix string
		call         func(c *cloudapi.Client, base string) error
		wantPath     string // escaped, as sent
	}{
		{"pipes", "", listPipes.bind(),
			"/v1/organizations/" + orgID + "/services/" + svcID + "/pipes"},
		{"pipes, trailing slash", "/", listPipes.bind(),
			"/v1/organizations/" + orgID + "/services/" + svcID + "/pipes"},
		{"endpoints under a path prefix", "/proxy/cloud/", listEndpoints.bind(),
			"/proxy/cloud/v1/organizations/" + orgID + "/services/" + svcID + "/pipesReversePrivateEndpoints"},
		{"alert", "", getAlert.bind(), "/api/v2/alerts/65f1a2b3c4d5e6f708192a3b"},
		{"alert under an escaped prefix", "/a%20b", getAlert.bind(), "/a%20b/api/v2/alerts/65f1a2b3c4d5e6f708192a3b"},
		{"alert ID with a query, a fragment and a space", "", func(c *cloudapi.Client, base string) error {
			_, err := c.GetAlert(context.Background(), base, testToken, "a?c=d e#f")
			return err
		}, "/api/v2/alerts/a%3Fc=d%20e%23f"},
		{"alert ID with dots and a percent sign", "/x", func(c *cloudapi.Client, base string) error {
			_, err := c.GetAlert(context.Background(), base, testToken, "...50%")
			return err
		}, "/x/api/v2/alerts/...50%25"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, rec := serve(t, reply{status: 404})
			_ = tt.call(newClient(cloudapi.Options{}), srv.URL+tt.prefix)
			reqs := rec.all()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			if got := reqs[0].URL.EscapedPath(); got != tt.wantPath {
				t.Errorf("path %q, want %q", got, tt.wantPath)
			}
			if reqs[0].Method != http.MethodGet || reqs[0].URL.RawQuery != "" {
				t.Errorf("request %s %s, want a GET without query", reqs[0].Method, reqs[0].URL)
			}
		})
	}
}

// An ID that a normalizing gateway in front of the API could read as a dot
// segment or as more than one segment is never sent: the call fails as a
// configuration error that names the ID, and no request leaves.
func TestIDsThatCouldLeaveTheirSegmentAreRefused(t *testing.T) {
	for _, id := range []string{".", "..", "../..", "..%2f..", "%2e%2e", "..;", "..;x", "a/b", `..\..`, "x;y", "%252e"} {
		t.Run(id, func(t *testing.T) {
			srv, rec := serve(t, reply{status: 404})
			c := newClient(cloudapi.Options{})
			_, alertErr := c.GetAlert(context.Background(), srv.URL+"/alerts", testToken, id)
			_, listErr := c.ListPipes(context.Background(), srv.URL, testCreds, orgID, id, pipeOptions{})
			for _, err := range []error{alertErr, listErr} {
				if cloudapi.ReasonOf(err) != cloudapi.ReasonConfigurationError || !strings.Contains(err.Error(), "cannot stay one path segment") &&
					!strings.Contains(err.Error(), "dot segment") {
					t.Errorf("%v, want a ConfigurationError saying the ID cannot stay one segment", err)
				}
			}
			if n := len(rec.all()); n != 0 {
				t.Errorf("%d requests sent, want none", n)
			}
		})
	}
}

// bind adapts a callFunc to the shape TestURLs uses.
func (f callFunc) bind() func(*cloudapi.Client, string) error {
	return func(c *cloudapi.Client, base string) error { return f(context.Background(), c, base) }
}

func TestHeaders(t *testing.T) {
	srv, rec := serve(t, reply{status: 200, body: emptyList})
	_ = listPipes(context.Background(), newClient(cloudapi.Options{}), srv.URL)
	_ = listPipes(context.Background(), newClient(cloudapi.Options{UserAgent: "custom/1"}), srv.URL)
	reqs := rec.all()
	if ua := reqs[0].UserAgent(); !strings.HasPrefix(ua, "servicewatch/") {
		t.Errorf("default User-Agent %q, want servicewatch/<version>", ua)
	}
	if ua := reqs[1].UserAgent(); ua != "custom/1" {
		t.Errorf("User-Agent %q, want custom/1", ua)
	}
	if a := reqs[0].Header.Get("Accept"); a != "application/json" {
		t.Errorf("Accept %q", a)
	}
}

func TestContentTypesAccepted(t *testing.T) {
	for _, ct := range []string{"", "application/json", "application/json; charset=utf-8", "application/vnd.cloud.v1+json", "text/plain"} {
		srv, _ := serve(t, reply{status: 200, contentType: ct, body: emptyList})
		if err := listPipes(context.Background(), newClient(cloudapi.Options{}), srv.URL); err != nil {
			t.Errorf("content type %q: %v", ct, err)
		}
	}
}

func TestObserver(t *testing.T) {
	fake := fakecloud.Start(fakecloud.DefaultData())
	defer fake.Close()
	obs := &observer{}
	c := newClient(cloudapi.Options{Observer: obs})
	_ = listPipes(context.Background(), c, fake.URL)
	_ = listEndpoints(context.Background(), c, fake.URL)
	fake.SetFault(fakecloud.OpGetAlert, fakecloud.Fault{Status: 503})
	_ = getAlert(context.Background(), c, fake.URL)
	want := []string{"management/list_pipes/200", "management/list_reverse_private_endpoints/200", "alert/get_alert/503"}
	if got := obs.codes(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("observed %v, want %v", got, want)
	}
}

func TestCredentialsNeverPrinted(t *testing.T) {
	creds := cloudapi.NewBasicCredentials("key-id-1", "s3cr3t-value")
	tok := cloudapi.NewBearerToken("t0ken-value")
	type holder struct {
		C cloudapi.BasicCredentials
		T cloudapi.BearerToken
		P *cloudapi.BasicCredentials
	}
	h := holder{creds, tok, &creds}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		for _, v := range []any{creds, tok, h, &h} {
			out := fmt.Sprintf(verb, v)
			if strings.Contains(out, "s3cr3t") || strings.Contains(out, "t0ken") ||
				strings.Contains(out, fmt.Sprintf("%x", "s3cr3t")) || strings.Contains(out, fmt.Sprintf("%x", "t0ken")) {
				t.Errorf("fmt %s of %T printed a secret: %s", verb, v, out)
			}
		}
	}
	if got := creds.String(); !strings.Contains(got, "key-id-1") || !strings.Contains(got, "<redacted>") {
		t.Errorf("String() = %q, want the key ID and <redacted>", got)
	}
	if tok.String() != "<redacted>" {
		t.Errorf("token String() = %q", tok.String())
	}
}

// The client never retries: one call, one request, whatever the failure.
func TestNoRetries(t *testing.T) {
	fake := fakecloud.Start(fakecloud.DefaultData())
	defer fake.Close()
	c := newClient(cloudapi.Options{Timeout: 200 * time.Millisecond})
	for _, f := range []fakecloud.Fault{{Status: 500}, {Status: 502, Body: fakecloud.HTML504, ContentType: "text/html"}, {Hang: true}, {Malformed: true}} {
		fake.ResetCalls()
		fake.SetFault(fakecloud.OpListPipes, f)
		_, err := c.ListPipes(context.Background(), fake.URL, defaultCreds(), fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, pipeOptions{})
		if err == nil {
			t.Fatalf("fault %+v: no error", f)
		}
		if n := fake.Calls(fakecloud.OpListPipes); n != 1 {
			t.Errorf("fault %+v: %d calls, want 1", f, n)
		}
	}
}

func defaultCreds() cloudapi.BasicCredentials {
	return cloudapi.NewBasicCredentials(fakecloud.DefaultKeyID, fakecloud.DefaultKeySecret)
}

func TestConcurrentUse(t *testing.T) {
	fake := fakecloud.Start(fakecloud.DefaultData())
	defer fake.Close()
	c := newClient(cloudapi.Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 60)
	for i := range 60 {
		wg.Go(func() {
			var err error
			switch i % 3 {
			case 0:
				_, err = c.ListPipes(context.Background(), fake.URL, defaultCreds(), fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, pipeOptions{})
			case 1:
				_, err = c.ListReversePrivateEndpoints(context.Background(), fake.URL, defaultCreds(), fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, endpointOptions{})
			default:
				_, err = c.GetAlert(context.Background(), fake.URL, cloudapi.NewBearerToken(fakecloud.DefaultAlertToken), fakecloud.SecondAlertID)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := fake.Calls(fakecloud.OpListPipes) + fake.Calls(fakecloud.OpListReversePrivateEndpoints) + fake.Calls(fakecloud.OpGetAlert); got != 60 {
		t.Errorf("%d calls, want 60", got)
	}
}

// A call that times out says so in its own words, whether the answer never
// came or stopped halfway: the scrubbing of the call's answer stops with
// the call's context, but not the scrubbing of the client's own error.
func TestTimedOutCallSaysSo(t *testing.T) {
	halfway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-ID", "req-123")
		_, _ = w.Write([]byte(`{"status":200,"result":[{"id":"p1"},`))
		_ = http.NewResponseController(w).Flush() // an error only means the client left
		<-r.Context().Done()
	}))
	defer halfway.Close()
	fake := fakecloud.Start(fakecloud.DefaultData())
	defer fake.Close()
	fake.SetFault(fakecloud.OpListPipes, fakecloud.Fault{Hang: true})
	c := newClient(cloudapi.Options{Timeout: 200 * time.Millisecond})
	for name, url := range map[string]string{"no answer": fake.URL, "half an answer": halfway.URL} {
		_, err := c.ListPipes(context.Background(), url, defaultCreds(), fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, pipeOptions{})
		var cerr *cloudapi.Error
		if !errors.As(err, &cerr) || cerr.Reason != cloudapi.ReasonUnreachable {
			t.Fatalf("%s: error %v, want Unreachable", name, err)
		}
		if msg := err.Error(); strings.Contains(msg, "<redacted>") || !strings.Contains(msg, "deadline exceeded") && !strings.Contains(msg, "Timeout") {
			t.Errorf("%s: %q, want the timeout in the client's own words", name, msg)
		}
	}
}
