package redact

import (
	"context"
	"encoding/base64"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// covered reports whether spans, sorted and disjoint, cover [start, end).
func covered(spans []span, start, end int) bool {
	for _, sp := range spans {
		if sp.start <= start && start < sp.end {
			start = sp.end
		}
	}
	return start >= end
}

// The new search redacts at least what the old matcher redacted, wherever
// it found a whole encoding: the old one, fed a text whose end cannot
// continue a secret (no credential holds a control character), finds no
// cut one.
func FuzzSearchCoversOldMatcher(f *testing.F) {
	f.Add("s3cr3t/va+lue\"x", `bad key s3cr3t\/va+lue\"x given`)
	f.Add("aaaa", strings.Repeat(`\\`, 12)+"aaaa%61%2561&#97;")
	f.Add(`\\\\`, strings.Repeat(`\\`, 20))
	f.Add("abab", "ab%61b\\u0061b&#x61;bab")
	f.Add("pä$$wörd 🔑", `p\u00e4$$w\xc3\xb6rd \ud83d\udd11 and p%C3%A4%24%24w%C3%B6rd+%F0%9F%94%91`)
	f.Add("fake-key-secret", "Basic "+base64.StdEncoding.EncodeToString([]byte("id:fake-key-secret")))
	f.Fuzz(func(t *testing.T, secret, text string) {
		if secret == "" || len(secret) > 64 || len(text) > 1024 || strings.ContainsFunc(secret, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Skip()
		}
		old := oldNewScrubber([]string{secret}).find(text + strings.Repeat("\x01", 20))
		s := NewScrubber([]string{secret})
		spans := s.find(text)
		if err := s.Err(); err != nil {
			t.Fatalf("search failed: %v", err)
		}
		for _, sp := range old {
			if !covered(spans, sp.start, min(sp.end, len(text))) {
				t.Fatalf("old span [%d,%d) %q not covered by %v", sp.start, sp.end, text[sp.start:min(sp.end, len(text))], spans)
			}
		}
	})
}

// stepsOf scrubs text and returns the steps it took and the result.
func stepsOf(t *testing.T, s *Scrubber, text string) (steps int64, redacted string) {
	t.Helper()
	const unbounded = 1 << 40
	b := s.Within(context.Background(), unbounded)
	got := b.Redact(text)
	if err := b.Err(); err != nil {
		t.Fatalf("Redact failed: %v", err)
	}
	return unbounded - b.budget.left, got
}

// Whatever the secret, the work is linear in the text: a few steps per
// byte and pattern, where the old matcher took up to len(secret) per byte.
func TestSearchIsLinearWhateverTheSecret(t *testing.T) {
	const n = 4096 // the longest credential the operator accepts
	jsonEscaped := func(s string) string { return strings.Trim(strconv.Quote(s), `"`) }
	tests := []struct {
		name, secret string
		// around encodes the secret in a text that repeats the secret's
		// characters on both sides.
		around func(secret string) string
	}{
		{"one char repeated, raw", strings.Repeat("a", n), func(s string) string {
			return strings.Repeat("a", 3*n) + " " + s + " " + strings.Repeat("a", n/2)
		}},
		{"period 2, raw", strings.Repeat("ab", n/2), func(s string) string {
			return strings.Repeat("ab", n) + " " + s + " " + strings.Repeat("ab", n/2)
		}},
		{"backslash repeated, JSON-escaped", strings.Repeat(`\`, n), func(s string) string {
			return strings.Repeat(`\`, 2*n) + " " + jsonEscaped(s) + " " + strings.Repeat(`\\`, n)
		}},
		{"percent repeated, URL-encoded twice", strings.Repeat("%", n), func(s string) string {
			return strings.Repeat("%25", n) + " " + url.QueryEscape(url.QueryEscape(s)) + " " + strings.Repeat("%", n)
		}},
		{"long random-looking, in base64", strings.Repeat("Zq8/+x", n/6), func(s string) string {
			return "Basic " + base64.StdEncoding.EncodeToString([]byte("id:"+s)) + " rejected"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewScrubber([]string{tt.secret})
			text := tt.around(tt.secret)
			steps, got := stepsOf(t, s, text)
			if strings.Contains(got, tt.secret) || !strings.Contains(got, Placeholder) {
				t.Errorf("Redact left the secret or redacted nothing: %.80q…", got)
			}
			if perByte := float64(steps) / float64(len(text)*len(s.matchers)); perByte > 16 {
				t.Errorf("%d steps for %d bytes and %d patterns: %.1f per byte and pattern, want at most 16", steps, len(text), len(s.matchers), perByte)
			}
		})
	}
}

// A text that ends with the beginning of a secret shows it as it is, like a
// text ending with anything else: redacting it would tell whoever wrote the
// text (an alert ID the service echoes) that the guess begins the secret.
func TestRedactionTellsNothingOfAPrefix(t *testing.T) {
	const secret = "tok-9f8e7d6c5b4a"
	s := NewScrubber([]string{secret})
	for k := 1; k < len(secret); k++ {
		prefix := secret[:k]
		other := strings.Repeat("x", k) // as long, no prefix
		for _, form := range []func(string) string{
			func(g string) string { return "alert " + g },
			func(g string) string { return `{"error":"no alert ` + g },
			func(g string) string { return "no alert " + url.QueryEscape(g) },
		} {
			for name, clean := range map[string]func(string) string{
				"Clean": s.Clean, "Redact": s.Redact,
				"Fit":          func(x string) string { return s.Fit(x, len(form(""))+k/2) },
				"RedactPrefix": func(x string) string { return s.RedactPrefix(x, len(x)-1) },
			} {
				withPrefix, withOther := clean(form(prefix)), clean(form(other))
				if strings.Contains(withPrefix, Placeholder) || len(withPrefix) != len(withOther) {
					t.Errorf("%s: %q gives %q, but %q gives %q: the guess's treatment depends on the secret", name, form(prefix), withPrefix, form(other), withOther)
				}
			}
		}
	}
}

// A cut that falls inside a secret's encoding leaves none of it: the text
// is scrubbed past the cut before it is cut.
func TestRedactPrefixScrubsPastTheCut(t *testing.T) {
	const secret = `s3cr"t/+\value`
	s := NewScrubber([]string{secret})
	forms := map[string]string{
		"raw": secret, "JSON": strings.Trim(strconv.Quote(secret), `"`), "query": url.QueryEscape(secret),
		"base64": base64.StdEncoding.EncodeToString([]byte("id:" + secret)),
	}
	for name, form := range forms {
		for cut := 1; cut < len(form); cut++ {
			text := "bad key " + form + " given"
			got := s.RedactPrefix(text, len("bad key ")+cut)
			if got != "bad key "+Placeholder {
				t.Errorf("%s cut after %d bytes: %q, want the cut form redacted whole", name, cut, got)
			}
		}
	}
	if got := s.RedactPrefix("short "+secret, 100); got != "short "+Placeholder {
		t.Errorf("RedactPrefix of a short text = %q", got)
	}
}

// A search that runs out of work or of time fails closed: the text is
// replaced whole, and Err says why, for every later text too.
func TestSearchFailsClosed(t *testing.T) {
	const secret = "fake-key-secret"
	text := "error: " + secret + " " + strings.Repeat("lorem ipsum ", 100)
	t.Run("work bound", func(t *testing.T) {
		s := NewScrubber([]string{secret}).Within(context.Background(), 100)
		if got := s.Clean(text); got != Placeholder {
			t.Errorf("Clean = %q, want the text replaced whole", got)
		}
		if got := s.Redact("ok"); got != Placeholder {
			t.Errorf("Redact after the bound = %q, want the text replaced whole", got)
		}
		if !errors.Is(s.Err(), ErrWorkExceeded) {
			t.Errorf("Err = %v, want ErrWorkExceeded", s.Err())
		}
	})
	t.Run("context ended", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		s := NewScrubber([]string{secret}).Within(ctx, DefaultWork)
		if got := s.Redact(text); got != Placeholder {
			t.Errorf("Redact = %q, want the text replaced whole", got)
		}
		if !errors.Is(s.Err(), context.Canceled) {
			t.Errorf("Err = %v, want context.Canceled", s.Err())
		}
	})
	t.Run("per text without Within", func(t *testing.T) {
		s := NewScrubber([]string{secret})
		if got := s.Redact(text); strings.Contains(got, secret) || s.Err() != nil {
			t.Errorf("Redact = %q, Err = %v: want the secret redacted within the bound", got, s.Err())
		}
	})
}
