package controller_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// Issue 27, as a user sees it: a pipe whose source has members named by a
// URL with user info and by a token shows neither credential in status,
// in servicewatch_pipe_info's source_kind label, or in the log (the suite
// sweeps it for secretMarker); the URL keeps its host, the token reads
// "<redacted>".
func TestCredentialsInMemberNamesReachNoStatusOrLabel(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	secret := secretMarker + "name-" + f.ns
	const id = "aaaaaaaa-0000-4000-8000-000000000027"
	f.fake.SetPipes(fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, []map[string]any{{
		"id": id, "name": "named", "state": "Running",
		"source": map[string]any{
			"kafka": map[string]any{"brokers": "b.example.com:9092"},
			"https://admin:" + secret + "@kafka.example.com": map[string]any{"topics": "t"},
			"ghp_0123456789abcdefghij" + secret:              map[string]any{"x": 1},
		},
	}})
	w := f.readyWatch("names")

	// The members are sent in the order of their names (the fake cloud
	// marshals a map): the token's, then the URL's.
	const wantKind = "kafka,<redacted>,https://kafka.example.com"
	if len(w.Status.Pipes) != 1 || deref(w.Status.Pipes[0].SourceKind) != wantKind {
		t.Fatalf("pipes %s, want one with sourceKind %q", mustJSON(t, w.Status.Pipes), wantKind)
	}
	if status := string(mustJSON(t, f.rawStatus("names"))); strings.Contains(status, secret) || strings.Contains(status, "ghp_") {
		t.Errorf("status shows a credential of a member name: %s", status)
	}

	series := regexp.MustCompile(`servicewatch_pipe_info\{[^}]*namespace="` + f.ns + `"[^}]*source_kind="` + regexp.QuoteMeta(wantKind) + `"`)
	text := metricsText(t)
	for deadline := time.Now().Add(10 * time.Second); !series.MatchString(text) && time.Now().Before(deadline); text = metricsText(t) {
		time.Sleep(100 * time.Millisecond) // the series follow the status write
	}
	if !series.MatchString(text) {
		t.Errorf("no servicewatch_pipe_info series with source_kind=%q:\n%s", wantKind, linesWith(text, id))
	}
	if strings.Contains(text, secret) || strings.Contains(text, "ghp_") {
		t.Errorf("the metrics show a credential of a member name:\n%s", linesWith(text, f.ns))
	}
}
