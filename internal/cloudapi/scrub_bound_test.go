package cloudapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"testing"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
)

// echoAlertID serves an alert API that answers every alert ID with a 404
// whose message ends with the ID.
func echoAlertID(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		body, _ := json.Marshal(map[string]string{"message": "No alert with ID " + path.Base(req.URL.Path)})
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A tenant who may edit a watch's alert IDs but not read its Secret learns
// nothing of the token from the messages: an ID that begins the token is
// echoed as it is, like any other ID. (The scrubber used to redact the
// beginning of a secret at a message's end, which gave the token away one
// character at a time.)
func TestAnEchoedAlertIDTellsNothingOfTheToken(t *testing.T) {
	const token = "sk-live-7Hq2mZ9xWc4T"
	srv := echoAlertID(t)
	c := newClient(cloudapi.Options{})
	for k := 1; k < len(token); k++ {
		for _, guess := range []string{token[:k], strings.Repeat("z", k)} {
			_, err := c.GetAlert(context.Background(), srv.URL, cloudapi.NewBearerToken(token), guess)
			e := asError(t, err)
			if want := "No alert with ID " + guess; e.Message != want {
				t.Errorf("guess %q: Message %q, want %q", guess, e.Message, want)
			}
		}
	}
	// The whole token is still redacted.
	_, err := c.GetAlert(context.Background(), srv.URL, cloudapi.NewBearerToken(token), token)
	if e := asError(t, err); e.Message != "No alert with ID <redacted>" {
		t.Errorf("Message %q, want the token redacted", e.Message)
	}
}

// Scrubbing a response has a work bound: past it, the text is not shown,
// and the failure says why.
func TestScrubbingPastItsWorkBoundShowsNothing(t *testing.T) {
	opts := cloudapi.Options{MaxScrubWork: 1000}
	note := "see " + strings.Repeat("the token "+testTokenValue+" ", 200)
	alert, _ := json.Marshal(map[string]map[string]string{"data": {"id": "a1", "name": "n", "note": note}})

	t.Run("alert", func(t *testing.T) {
		srv, _ := serve(t, reply{status: 200, contentType: "application/json", body: string(alert)})
		res, err := newClient(opts).GetAlert(context.Background(), srv.URL, testToken, "a1")
		e := asError(t, err)
		if e.Reason != cloudapi.ReasonInvalidResponse || !strings.Contains(e.Error(), "work bound") {
			t.Errorf("got %v (%s), want InvalidResponse saying the work bound was exceeded", e, e.Reason)
		}
		if res.Alert.Note != nil {
			t.Errorf("the alert's note %q is kept", *res.Alert.Note)
		}
	})
	t.Run("error body", func(t *testing.T) {
		srv, _ := serve(t, reply{status: 401, contentType: "text/plain", body: note})
		_, err := newClient(opts).GetAlert(context.Background(), srv.URL, testToken, "a1")
		e := asError(t, err)
		if e.Reason != cloudapi.ReasonUnauthorized || !strings.HasPrefix(e.Message, "the service's message is not shown: ") ||
			strings.Contains(e.Error(), testTokenValue) {
			t.Errorf("got %q (%s), want Unauthorized saying its message is not shown", e.Error(), e.Reason)
		}
	})
	t.Run("within the default bound", func(t *testing.T) {
		srv, _ := serve(t, reply{status: 200, contentType: "application/json", body: string(alert)})
		res, err := newClient(cloudapi.Options{}).GetAlert(context.Background(), srv.URL, testToken, "a1")
		if err != nil || res.Alert.Note == nil || strings.Contains(*res.Alert.Note, testTokenValue) || !strings.Contains(*res.Alert.Note, redact.Placeholder) {
			t.Errorf("GetAlert = %v, %v: want the note with the token redacted", res.Alert.Note, err)
		}
	})
}

// Scrubbing stops when the call's context ends (a sync's timeout), even once
// the response has arrived: the alert is then not kept, rather than shown
// unscrubbed or scrubbed for as long as it takes.
func TestScrubbingStopsWhenTheContextEnds(t *testing.T) {
	note := strings.Repeat("a", 8<<10)
	body, _ := json.Marshal(map[string]map[string]string{"data": {"id": "a1", "name": "n", "note": note}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	answer := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		cancel() // the sync's time runs out as the body arrives
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
	})
	c := newClient(cloudapi.Options{Transport: answer})
	res, err := c.GetAlert(ctx, "https://alerts.example.com", cloudapi.NewBearerToken(strings.Repeat("a", 4096)), "a1")
	if err == nil {
		t.Fatalf("GetAlert kept the alert (note of %d bytes) though its context had ended", len(ptrString(res.Alert.Note)))
	}
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "scrubbing") {
		t.Errorf("err = %v, want the scrubbing stopped by the context", err)
	}
}

func ptrString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
