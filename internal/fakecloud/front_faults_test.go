package fakecloud_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// The fake serves what the HTTP in front of the services sends: redirects,
// 503s that ask to wait, pages without a title, auth challenges, envelopes
// that disagree with their status, a null result.
func TestFrontFaults(t *testing.T) {
	tests := []struct {
		name   string
		op     fakecloud.Operation
		fault  fakecloud.Fault
		path   string
		status int
		header map[string]string
		body   string // a part of the body
	}{
		{"301", fakecloud.OpListPipes, fakecloud.RedirectFault(301, "https://moved.example.invalid/v1"), pipesPath,
			301, map[string]string{"Location": "https://moved.example.invalid/v1"}, "Moved Permanently. Redirecting to https://moved.example.invalid/v1"},
		{"302", fakecloud.OpGetAlert, fakecloud.RedirectFault(302, "/login"), alertPath, 302, map[string]string{"Location": "/login"}, "Found."},
		{"307", fakecloud.OpListPipes, fakecloud.RedirectFault(307, "https://b.example.invalid/"), pipesPath, 307, nil, "Temporary Redirect."},
		{"308", fakecloud.OpListReversePrivateEndpoints, fakecloud.RedirectFault(308, "https://c.example.invalid/"), endpointsPath, 308, nil, "Permanent Redirect."},
		{"503 after seconds", fakecloud.OpListPipes, fakecloud.UnavailableFault("120"), pipesPath, 503, map[string]string{"Retry-After": "120"}, "maintenance"},
		{"503 until a date", fakecloud.OpListPipes, fakecloud.UnavailableFault("Wed, 21 Oct 2026 07:28:00 GMT"), pipesPath,
			503, map[string]string{"Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"}, ""},
		{"page without a title", fakecloud.OpListPipes, fakecloud.UntitledPageFault(502), pipesPath,
			502, map[string]string{"Content-Type": "text/html"}, "upstream connect error"},
		{"page with a title", fakecloud.OpGetAlert, fakecloud.Fault{Status: 504, Body: fakecloud.HTML504, ContentType: "text/html"}, alertPath, 504, nil, "<title>"},
		{"auth challenge", fakecloud.OpGetAlert, fakecloud.AuthChallengeFault(`token "t" expired`), alertPath,
			401, map[string]string{"WWW-Authenticate": `Bearer realm="api", error="invalid_token", error_description="token \"t\" expired"`}, ""},
		{"envelope disagrees", fakecloud.OpListPipes, fakecloud.EnvelopeDisagreesFault(500, "database unavailable"), pipesPath,
			200, nil, `"status":500`},
		{"null result", fakecloud.OpListReversePrivateEndpoints, fakecloud.NullResultFault(), endpointsPath, 200, nil, `"result":null`},
	}
	// Redirects are the answer under test, not something to follow.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t)
			s.SetFault(tt.op, tt.fault)
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.URL+tt.path, http.NoBody)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := noFollow.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body bytes.Buffer
			if _, err := body.ReadFrom(resp.Body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status || !strings.Contains(body.String(), tt.body) {
				t.Errorf("answered %d %q, want %d with %q", resp.StatusCode, body.String(), tt.status, tt.body)
			}
			for name, want := range tt.header {
				if got := resp.Header.Get(name); got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
		})
	}
}

// A fault set through the admin API carries its headers.
func TestFaultHeadersRoundTripAsJSON(t *testing.T) {
	f := fakecloud.RedirectFault(301, "https://x.example.invalid/")
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var back fakecloud.Fault
	if err := json.Unmarshal(b, &back); err != nil || back.Headers["Location"] != "https://x.example.invalid/" {
		t.Errorf("round trip of %s: %+v, %v", b, back, err)
	}
}
