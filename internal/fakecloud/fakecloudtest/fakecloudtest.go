// Package fakecloudtest holds what tests need to call the fake cloud over
// HTTP: one request helper and the Authorization values of its default
// credentials, so the server's tests and the fakecloud command's tests call
// it alike.
package fakecloudtest

import (
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

var (
	// BasicAuth is the Authorization header of the default management key.
	BasicAuth = "Basic " + base64.StdEncoding.EncodeToString([]byte(fakecloud.DefaultKeyID+":"+fakecloud.DefaultKeySecret))
	// BearerAuth is the Authorization header of the default alert token.
	BearerAuth = "Bearer " + fakecloud.DefaultAlertToken
)

// Response is what a call got back, its body read in full.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends method to url with the Authorization header auth (none if empty)
// and body, and fails t if the call cannot be made or its body read.
func Do(t testing.TB, method, url, auth, body string) Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}
