package redact

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"

	"github.com/servicewatch/servicewatch/internal/bound"
)

// A service that echoes a credential rarely echoes it as sent: it may
// JSON-escape it (\/, \", \u002b), quote it the way Go's %q does, URL-encode
// it, or repeat the Authorization header, whose Basic value is the base64 of
// keyId:keySecret. Listing every encoding of a secret cannot work (each
// character may be escaped or not, in upper or lower case), so the Scrubber
// reads the text the other way round: at each position it decodes what
// every escape there could stand for, and follows the secret through them
// (see search.go), in time linear in the text whatever the secret.
//
// Only whole encodings are redacted. A text that ends with the beginning of
// a secret shows it like any other text: were it redacted, whoever can make
// a service echo a guess (an alert ID) would learn from the redaction that
// the guess starts the secret, and read the secret one character at a
// time. A text cut short by the operator is scrubbed before the cut, as far
// past it as an encoding reaches (RedactPrefix), so that no cut leaves part
// of a secret that was there whole.

// minBase64Core is the shortest run of base64 characters that is taken for a
// secret's encoding; shorter runs occur by chance in any text.
const minBase64Core = 4

// Scrubber finds credentials in text. The zero value finds nothing. Its
// work is bounded (DefaultWork, Within): a text it cannot scrub within the
// bound is replaced by Placeholder whole, never shown as it is.
type Scrubber struct {
	matchers []matcher
	budget   *budget
}

// pattern is a string to find through any escaping. A base64 pattern is
// the part of a secret's base64 that does not depend on the bytes around the
// secret; a match spreads to the whole base64 run around it, whose edges
// carry a few bits of the secret too.
type pattern struct {
	text   string
	base64 bool
}

// NewScrubber returns a Scrubber for secrets and what the cleaning of a
// message makes of them. Each text it scrubs may take DefaultWork steps.
func NewScrubber(secrets []string) *Scrubber {
	s := &Scrubber{budget: &budget{ctx: context.Background(), perText: DefaultWork}}
	seen := map[pattern]bool{}
	add := func(p pattern) {
		if p.text != "" && !seen[p] {
			seen[p] = true
			s.matchers = append(s.matchers, newMatcher(p))
		}
	}
	for _, secret := range secrets {
		add(pattern{text: secret})
		// Messages are normalized before they are scrubbed: a secret with
		// runs of spaces, or spaces at its ends, shows in its normalized
		// form, however short (a message's own spaces may complete it).
		add(pattern{text: normalizeText(secret)})
		for _, core := range base64Cores(secret) {
			add(pattern{text: core, base64: true})
		}
	}
	return s
}

// base64Cores returns, for each of the three positions a secret can take
// in the 3-byte groups of base64, and for both alphabets, the characters
// that depend on the secret's bytes alone: whatever surrounds the secret
// (a key ID and a colon, "Bearer "), its base64 contains one of them.
func base64Cores(secret string) []string {
	var cores []string
	for offset := range 3 {
		pad := strings.Repeat("\x00", offset)
		n := len(secret)
		// Character i covers bits [6i, 6i+6); the secret covers
		// [8*offset, 8*(offset+n)).
		first := (8*offset + 5) / 6
		last := (8*(offset+n))/6 - 1
		if last-first+1 < minBase64Core {
			continue
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			cores = append(cores, enc.EncodeToString([]byte(pad + secret))[first:last+1])
		}
	}
	return cores
}

// span is a part of a text to redact: [start, end).
type span struct{ start, end int }

// Redact replaces every span of text that encodes a secret with
// Placeholder.
func (s *Scrubber) Redact(text string) string {
	return replaceSpans(text, s.find(text), len(text))
}

// Reach is how many bytes past a cut RedactPrefix must see: the most an
// encoding of one of the secrets can span.
func (s *Scrubber) Reach() int {
	reach := 0
	for _, m := range s.matchers {
		reach = max(reach, m.reach())
	}
	return reach
}

// RedactPrefix redacts text and keeps what comes before its first n bytes
// (on a rune boundary). It looks Reach bytes past the cut, so that an
// encoding the cut falls into is found whole and replaced by Placeholder;
// whatever text holds beyond n+Reach bytes cannot start before the cut.
// What the cut leaves thus never depends on the secret, only on the text.
func (s *Scrubber) RedactPrefix(text string, n int) string {
	if len(text) <= n {
		return s.Redact(text)
	}
	view := bound.Bytes(text, n+s.Reach())
	return replaceSpans(view, s.find(view), len(bound.Bytes(text, n)))
}

// replaceSpans replaces spans in text with Placeholder, keeping what comes
// before cut: a span across the cut is replaced whole.
func replaceSpans(text string, spans []span, cut int) string {
	if len(spans) == 0 {
		return text[:cut]
	}
	var b strings.Builder
	prev := 0
	for _, sp := range spans {
		if sp.start >= cut {
			break
		}
		b.WriteString(text[prev:sp.start])
		b.WriteString(Placeholder)
		prev = sp.end
	}
	if prev < cut {
		b.WriteString(text[prev:cut])
	}
	return b.String()
}

// find returns the spans to redact in text, in order, merged where they
// overlap or touch. When the search fails (its work bound, its context),
// the span is the whole text: it fails closed.
func (s *Scrubber) find(text string) []span {
	if len(s.matchers) == 0 || text == "" {
		return nil
	}
	w, err := s.budget.start()
	if err != nil {
		return []span{{0, len(text)}}
	}
	spans, err := s.search(text, w)
	s.budget.done(w, err)
	if err != nil {
		return []span{{0, len(text)}}
	}
	return spans
}

// search finds every pattern's encodings in text, within w: where they
// end in one pass, then where they start in another, for the patterns
// found only.
func (s *Scrubber) search(text string, w *work) ([]span, error) {
	if isPlain(text) && !s.anyLiteral(text, w) {
		return nil, w.check(0)
	}
	forwards := make([]*automaton, len(s.matchers))
	for k, m := range s.matchers {
		forwards[k] = m.forward
	}
	ends, err := forward(text, forwards, w)
	if err != nil {
		return nil, err
	}
	var found []matcher
	var backwards []*automaton
	var foundEnds [][]int
	for k, m := range s.matchers {
		if len(ends[k]) > 0 {
			found, backwards, foundEnds = append(found, m), append(backwards, m.backward), append(foundEnds, ends[k])
		}
	}
	if len(found) == 0 {
		return nil, nil
	}
	starts, err := backward(text, backwards, w)
	if err != nil {
		return nil, err
	}
	var all []span
	for k, m := range found {
		spans := m.pair(foundEnds[k], starts[k])
		if m.base64 {
			for i := range spans {
				spans[i] = widenBase64(text, spans[i])
			}
		}
		all = append(all, spans...)
	}
	slices.SortFunc(all, func(a, b span) int { return a.start - b.start })
	var merged []span
	for _, sp := range all {
		merged = appendMerged(merged, sp)
	}
	return merged, nil
}

// appendMerged adds sp to spans, which are sorted and disjoint, merging it
// with the spans it overlaps or touches. sp ends after the last span starts:
// spans come in order of their start.
func appendMerged(spans []span, sp span) []span {
	for len(spans) > 0 {
		last := spans[len(spans)-1]
		if sp.start > last.end {
			break
		}
		spans = spans[:len(spans)-1]
		sp = span{min(sp.start, last.start), max(sp.end, last.end)}
	}
	return append(spans, sp)
}

func isBase64Char(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '+' || c == '/' || c == '-' || c == '_'
}

// widenBase64 grows sp over the base64 run around it, padding included.
func widenBase64(text string, sp span) span {
	for sp.start > 0 && isBase64Char(text[sp.start-1]) {
		sp.start--
	}
	for sp.end < len(text) && (isBase64Char(text[sp.end]) || text[sp.end] == '=') {
		sp.end++
	}
	return sp
}

// escapeStarts are the bytes at which decodeAt finds more than the byte
// itself.
const escapeStarts = "+%\\&"

// isPlain reports whether text holds no escape: then its one decoding is
// itself, and an encoding of a pattern in it is the pattern, as is. Most
// of what the cloud sends (IDs, names, states) is plain, and a list sends
// millions of such strings: they take the fast literal search.
func isPlain(text string) bool { return !strings.ContainsAny(text, escapeStarts) }

// anyLiteral reports whether a pattern occurs in text as is. Each pattern
// is one KMP pass that skips to the next occurrence of its first byte
// while nothing is matched, so a text without that byte costs one
// IndexByte.
func (s *Scrubber) anyLiteral(text string, w *work) bool {
	for _, m := range s.matchers {
		if m.forward.occursIn(text, w) {
			return true
		}
	}
	return false
}
