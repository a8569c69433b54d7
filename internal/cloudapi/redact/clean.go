package redact

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/servicewatch/servicewatch/internal/bound"
)

// MaxMessageRunes bounds what Clean returns: the cloud client's
// Error.Message, Error.RequestID and the text of Error.Err.
const MaxMessageRunes = 200

// maxCleanedBytes bounds the text that is kept of one message: far more
// than a message keeps, so that the end of a long URL in a transport error
// still shows once the URL is shortened. The text is scrubbed past the cut
// (RedactPrefix), so the cut cannot leave part of a secret.
const maxCleanedBytes = 8 << 10

// A URL longer than maxURLRunes is shown as its first urlHeadRunes runes (the
// host and the start of the path), an ellipsis and its last urlTailRunes
// runes (the resource), so that a long URL cannot push the cause of an error
// out of the message.
const (
	maxURLRunes  = 80
	urlHeadRunes = 56
	urlTailRunes = 20
)

// Clean makes text fit for an error message and a condition: valid UTF-8,
// no control, format or bidi characters, whitespace collapsed, credentials
// redacted in any encoding, long URLs shortened, and at most MaxMessageRunes
// runes.
func (s *Scrubber) Clean(text string) string {
	return s.CleanTo(text, MaxMessageRunes)
}

// CleanTo cleans text like Clean, to at most n runes.
func (s *Scrubber) CleanTo(text string, n int) string {
	// Invalid UTF-8 is kept until secrets are redacted: a secret may hold
	// bytes that are not UTF-8, and a service may echo them as they are.
	text = s.RedactPrefix(normalizeText(text), maxCleanedBytes)
	// Dropping characters between stray bytes can make them valid UTF-8,
	// a control character even: normalize again once the text is valid.
	text = normalizeText(strings.ToValidUTF8(text, "\uFFFD"))
	// Shortening joins the two ends of a URL; what they make together is
	// scrubbed again, around the redactions already made.
	text = s.redactBetween(shortenURLs(text))
	return s.Fit(text, n)
}

// normalizeText drops control and format characters (bidi overrides and
// isolates, zero-width characters, byte order marks: they can make a
// message read differently from what it says), turns every kind of space and
// line break into one space, and trims the ends. Bytes that are not UTF-8
// are kept as they are.
func normalizeText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
		case unicode.Is(unicode.Cc, r), unicode.Is(unicode.Cf, r):
		default:
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

var urlRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+`)

// shortenURLs shortens the URLs in s that are longer than maxURLRunes.
func shortenURLs(s string) string {
	return urlRE.ReplaceAllStringFunc(s, func(u string) string {
		if utf8.RuneCountInString(u) <= maxURLRunes {
			return u
		}
		r := []rune(u)
		return string(r[:urlHeadRunes]) + "…" + string(r[len(r)-urlTailRunes:])
	})
}

// HostOnlyURLs reduces the URLs in s to their scheme and host, marking a cut
// path, query or fragment with "/…". The cloud's own words about a webhook
// it failed to call name the webhook's URL, whose path or query is often
// its secret (a chat service's incoming webhook, a signed URL), and never
// the operator's credentials, which the Scrubber would find.
func HostOnlyURLs(s string) string {
	return urlRE.ReplaceAllStringFunc(s, func(raw string) string {
		scheme, rest, _ := strings.Cut(raw, "://")
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			if rest == "" {
				return raw
			}
			return scheme + "://…"
		}
		out := scheme + "://" + u.Host
		if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil || strings.HasSuffix(rest, "?") {
			out += "/…"
		}
		return out
	})
}

// redactBetween redacts the parts of text between earlier redactions, so
// that a placeholder is never taken for part of a secret.
func (s *Scrubber) redactBetween(text string) string {
	parts := strings.Split(text, Placeholder)
	for i, p := range parts {
		parts[i] = s.Redact(p)
	}
	return strings.Join(parts, Placeholder)
}

// Fit cuts text to at most n runes, marking the cut with an ellipsis. A
// cut that falls inside an encoded secret moves back before it, which is
// redacted. Secrets are found in the whole text before it is cut, so only
// whole encodings count: what the cut leaves never depends on whether the
// text's end begins a secret.
func (s *Scrubber) Fit(text string, n int) string {
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	spans := s.find(text)
	suffix := bound.Ellipsis
	for {
		head := bound.Runes(text, n-utf8.RuneCountInString(suffix))
		i, _ := slices.BinarySearchFunc(spans, len(head), func(sp span, cut int) int { return sp.end - cut })
		if i == len(spans) || spans[i].start >= len(head) {
			return head + suffix // no span reaches the cut
		}
		text, suffix = head[:spans[i].start], Placeholder+bound.Ellipsis
		if utf8.RuneCountInString(text)+utf8.RuneCountInString(suffix) <= n {
			return text + suffix
		}
	}
}
