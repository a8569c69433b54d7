package redact_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
)

// The scrubber finds a secret however a service may have encoded it.
func TestCleanRedactsEncodedSecrets(t *testing.T) {
	const secret = `s3cr3t/va+lue"x`
	s := redact.NewScrubber([]string{secret})
	for name, text := range map[string]string{
		"as sent":      "bad key " + secret + " given",
		"JSON-escaped": `bad key s3cr3t\/va+lue\"x given`,
		"URL-encoded":  "bad key " + url.QueryEscape(secret) + " given",
		"base64":       "Basic " + base64.StdEncoding.EncodeToString([]byte("id:"+secret)),
	} {
		got := s.Clean(text)
		if strings.Contains(got, secret[:6]) || !strings.Contains(got, redact.Placeholder) {
			t.Errorf("%s: Clean(%q) = %q, want the secret redacted", name, text, got)
		}
	}
	if got := (&redact.Scrubber{}).Clean("  plain\ttext\u202e  "); got != "plain text" {
		t.Errorf("zero Scrubber: Clean = %q, want the text normalised and nothing redacted", got)
	}
}

func TestCleanBoundsTheText(t *testing.T) {
	s := redact.NewScrubber(nil)
	got := s.Clean(strings.Repeat("é", 1000))
	if n := len([]rune(got)); n != redact.MaxMessageRunes || !strings.HasSuffix(got, "…") {
		t.Errorf("Clean of 1000 runes: %d runes, %q", n, got)
	}
	if got := s.CleanTo("a long sentence", 6); got != "a lon…" {
		t.Errorf("CleanTo = %q", got)
	}
}

func TestWrapCleansTheTextAndKeepsTheChain(t *testing.T) {
	s := redact.NewScrubber([]string{"hunter22"})
	err := s.Wrap(fmt.Errorf("dial with hunter22: %w", io.ErrUnexpectedEOF))
	if strings.Contains(err.Error(), "hunter22") || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Wrap = %q, want the secret redacted and the cause reachable", err)
	}
	if s.Wrap(nil) != nil {
		t.Error("Wrap(nil) is not nil")
	}
}

func TestValue(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                             "plain",
		"https://user:pw@host/path?sig=x#f": "https://host/path#f",
		"-----BEGIN PRIVATE KEY-----\nMII":  redact.Placeholder,
		"Server=x;Password=y":               redact.Placeholder,
	} {
		if got := redact.Value(in); got != want {
			t.Errorf("Value(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsCredentialName(t *testing.T) {
	for name, want := range map[string]bool{
		"password": true, "secret_key": true, "secretKey": true, "API-KEY": true, "connectionString": true,
		"name": false, "host": false, "keyId": false,
	} {
		if got := redact.IsCredentialName(name); got != want {
			t.Errorf("IsCredentialName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestMongoHostAndDatabase(t *testing.T) {
	host, db := redact.MongoHostAndDatabase("mongodb://u:pw@h1,h2/db?tls=true")
	if host != "h1,h2" || db != "db" {
		t.Errorf("MongoHostAndDatabase = %q, %q", host, db)
	}
}

func TestHostOnlyURLs(t *testing.T) {
	got := redact.HostOnlyURLs("POST https://hooks.example.com/services/T0/B0/secret failed")
	if got != "POST https://hooks.example.com/… failed" {
		t.Errorf("HostOnlyURLs = %q", got)
	}
}

func TestSecretIsNotPrinted(t *testing.T) {
	type holder struct{ s redact.Secret }
	h := holder{redact.Hide("hunter22")}
	if out := fmt.Sprintf("%+v %#v", h, h); strings.Contains(out, "hunter22") {
		t.Errorf("printed %s", out)
	}
	if h.s.Reveal() != "hunter22" || redact.Secret(nil).Reveal() != "" {
		t.Error("Reveal does not give the secret back")
	}
}
