// This file keeps the scrubber's matcher as it was before issue 27
// (commit cc8b72b, internal/cloudapi/redact/scrub.go), its names prefixed with "old",
// so that the benchmarks measure the old and the new search side by side in
// one run. Nothing but the benchmarks uses it. The helpers that did not
// change (parseHex, parseOctal, parseDecimal, base64Cores, isBase64Char) are
// the package's own.

package redact

import (
	"strings"
	"unicode/utf8"
)

// A service that echoes a credential rarely echoes it as sent: it may
// JSON-escape it (\/, \", \u002b), quote it the way Go's %q does, URL-encode
// it, or repeat the Authorization header, whose Basic value is the base64 of
// keyId:keySecret. Listing every encoding of a secret cannot work (each
// character may be escaped or not, in upper or lower case), so the oldScrubber
// reads the text the other way round: at each position it decodes what
// every escape there could stand for and follows the secret through them.

// oldMinTailBytes is how much of the text a secret's beginning must cover at
// the very end of the text to be scrubbed as the start of a cut-off secret.
// Shorter ends would redact ordinary words; they reveal a character or two
// at most.
const oldMinTailBytes = 4

// oldScrubber finds credentials in text. The zero value finds nothing.
type oldScrubber struct {
	patterns []oldPattern
}

// oldPattern is a string to find through any escaping. A base64 oldPattern is
// the part of a secret's base64 that does not depend on the bytes around the
// secret; a match spreads to the whole base64 run around it, whose edges
// carry a few bits of the secret too.
type oldPattern struct {
	text   string
	base64 bool
}

// oldNewScrubber returns a oldScrubber for secrets and what the cleaning of a
// message makes of them.
func oldNewScrubber(secrets []string) *oldScrubber {
	s := &oldScrubber{}
	seen := map[oldPattern]bool{}
	add := func(p oldPattern) {
		if p.text != "" && !seen[p] {
			seen[p] = true
			s.patterns = append(s.patterns, p)
		}
	}
	for _, secret := range secrets {
		add(oldPattern{text: secret})
		// Messages are normalized before they are scrubbed: a secret with
		// runs of spaces, or spaces at its ends, shows in its normalized
		// form, however short (a message's own spaces may complete it).
		add(oldPattern{text: normalizeText(secret)})
		for _, core := range base64Cores(secret) {
			add(oldPattern{text: core, base64: true})
		}
	}
	return s
}

// oldSpan is a part of a text to redact: [start, end).
type oldSpan struct{ start, end int }

// Redact replaces every oldSpan of text that encodes a secret, or the start of
// one at the end of text, with "<redacted>".
func (s *oldScrubber) Redact(text string) string {
	spans := s.find(text)
	if len(spans) == 0 {
		return text
	}
	var b strings.Builder
	prev := 0
	for _, sp := range spans {
		b.WriteString(text[prev:sp.start])
		b.WriteString(Placeholder)
		prev = sp.end
	}
	b.WriteString(text[prev:])
	return b.String()
}

// find returns the spans to redact in text, in order, merged where they
// overlap or touch. Every position is tried, even inside an earlier match,
// so that overlapping secrets are all covered.
func (s *oldScrubber) find(text string) []oldSpan {
	var spans []oldSpan
	var first, buf [oldMaxUnits]oldUnit
	for i := range len(text) {
		units := oldDecodeAt(text, i, first[:0])
		for _, p := range s.patterns {
			if !oldStartsWith(units, p.text) {
				continue
			}
			end, ok := oldMatchAt(text, i, p.text, buf[:0])
			if !ok {
				continue
			}
			sp := oldSpan{i, end}
			if p.base64 {
				sp = oldWidenBase64(text, sp)
			}
			spans = oldAppendMerged(spans, sp)
		}
	}
	return spans
}

// oldAppendMerged adds sp to spans, which are sorted and disjoint, merging it
// with the spans it overlaps or touches. sp ends after the last oldSpan starts:
// spans are found in order of their match's start.
func oldAppendMerged(spans []oldSpan, sp oldSpan) []oldSpan {
	for len(spans) > 0 {
		last := spans[len(spans)-1]
		if sp.start > last.end {
			break
		}
		spans = spans[:len(spans)-1]
		sp = oldSpan{min(sp.start, last.start), max(sp.end, last.end)}
	}
	return append(spans, sp)
}

// oldWidenBase64 grows sp over the base64 run around it, padding included.
func oldWidenBase64(text string, sp oldSpan) oldSpan {
	for sp.start > 0 && isBase64Char(text[sp.start-1]) {
		sp.start--
	}
	for sp.end < len(text) && (isBase64Char(text[sp.end]) || text[sp.end] == '=') {
		sp.end++
	}
	return sp
}

// oldMatchAt reports whether p, through any escaping, starts at text[i], and
// where the longest such match ends. A match may also be cut by the end of
// the text, once it covers oldMinTailBytes of it: the text may have been cut
// inside a secret. buf is scratch space.
func oldMatchAt(text string, i int, p string, buf []oldUnit) (end int, ok bool) {
	type state struct{ pi, ti int }
	seen := map[state]bool{}
	stack := []state{{0, i}}
	end = -1
	for len(stack) > 0 {
		st := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[st] {
			continue
		}
		seen[st] = true
		if st.pi == len(p) {
			end = max(end, st.ti)
			continue
		}
		isTail := st.pi > 0 && len(text)-i >= oldMinTailBytes
		if st.ti == len(text) {
			if isTail {
				end = len(text)
			}
			continue
		}
		for _, u := range oldDecodeAt(text, st.ti, buf[:0]) {
			switch {
			case u.cut:
				if isTail {
					end = len(text)
				}
			case u.isByte:
				if byte(u.r) == p[st.pi] {
					stack = append(stack, state{st.pi + 1, u.end})
				}
			case utf8.RuneStart(p[st.pi]):
				if r, size := utf8.DecodeRuneInString(p[st.pi:]); r == u.r {
					stack = append(stack, state{st.pi + size, u.end})
				}
			}
		}
	}
	return end, end > i
}

// oldStartsWith reports whether one of units, what the text may encode at a
// position, is the first byte or rune of p: the cheap test that spares
// most positions a search.
func oldStartsWith(units []oldUnit, p string) bool {
	r, _ := utf8.DecodeRuneInString(p)
	for _, u := range units {
		if !u.cut && (u.isByte && byte(u.r) == p[0] || !u.isByte && u.r == r) {
			return true
		}
	}
	return false
}

// oldUnit is one thing text may encode at a position: a byte or a whole rune,
// and where its encoding ends. cut marks an escape that the end of the text
// interrupts.
type oldUnit struct {
	r      rune
	isByte bool
	end    int
	cut    bool
}

// oldMaxUnits bounds what oldDecodeAt returns, for the scratch buffer.
const oldMaxUnits = 16

// Escapes nest (a JSON string inside a JSON string doubles its backslashes,
// and a URL-encoded one turns % into %25) only so deep.
const (
	oldMaxBackslashes = 4
	oldMaxPercent25   = 2
)

// oldShortEscapes are the one-letter backslash escapes of JSON, Go and C.
var oldShortEscapes = map[byte]rune{
	'"': '"', '\\': '\\', '/': '/', '\'': '\'',
	'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 'f': '\f', 'a': '\a', 'v': '\v',
}

// oldHTMLEntities are the named character references HTML escaping produces.
var oldHTMLEntities = map[string]rune{"amp": '&', "lt": '<', "gt": '>', "quot": '"', "apos": '\''}

// oldDecodeAt returns what text may encode at i: the byte itself, and whatever
// an escape starting there stands for: %XX (also as %25XX), + for a space,
// backslash escapes (\", \/, \uXXXX with surrogate pairs, \UXXXXXXXX, \xXX,
// octal, with doubled backslashes), and HTML character references.
func oldDecodeAt(text string, i int, out []oldUnit) []oldUnit {
	out = append(out, oldUnit{r: rune(text[i]), isByte: true, end: i + 1})
	switch text[i] {
	case '+':
		out = append(out, oldUnit{r: ' ', isByte: true, end: i + 1})
	case '%':
		out = oldDecodePercent(text, i, out)
	case '\\':
		for k := 1; k <= oldMaxBackslashes && i+k <= len(text) && text[i+k-1] == '\\'; k++ {
			out = oldDecodeBackslash(text, i+k, out)
		}
	case '&':
		out = oldDecodeEntity(text, i, out)
	}
	return out
}

func oldDecodePercent(text string, i int, out []oldUnit) []oldUnit {
	j := i + 1
	for range oldMaxPercent25 + 1 {
		if j+2 > len(text) {
			return append(out, oldUnit{cut: true})
		}
		if v, ok := parseHex(text[j : j+2]); ok {
			out = append(out, oldUnit{r: v, isByte: true, end: j + 2})
			if v == '+' { // a query-escaped space, escaped again
				out = append(out, oldUnit{r: ' ', isByte: true, end: j + 2})
			}
		}
		if !strings.EqualFold(text[j:j+2], "25") {
			break
		}
		j += 2
	}
	return out
}

// oldDecodeBackslash decodes the escape whose letter is at text[j], after one
// or more backslashes.
func oldDecodeBackslash(text string, j int, out []oldUnit) []oldUnit {
	if j >= len(text) {
		return append(out, oldUnit{cut: true})
	}
	c := text[j]
	if r, ok := oldShortEscapes[c]; ok {
		out = append(out, oldUnit{r: r, end: j + 1})
	}
	switch {
	case c == 'u':
		return oldDecodeUTF16(text, j, out)
	case c == 'U':
		return oldAppendHex(text, j+1, 8, false, out)
	case c == 'x':
		return oldAppendHex(text, j+1, 2, true, out)
	case '0' <= c && c <= '3':
		if j+3 > len(text) {
			return append(out, oldUnit{cut: true})
		}
		if v, ok := parseOctal(text[j : j+3]); ok {
			out = append(out, oldUnit{r: v, isByte: true, end: j + 3})
		}
	}
	return out
}

// oldDecodeUTF16 decodes \uXXXX at text[j] ('u'), joining a surrogate pair.
func oldDecodeUTF16(text string, j int, out []oldUnit) []oldUnit {
	if j+5 > len(text) {
		return append(out, oldUnit{cut: true})
	}
	hi, ok := parseHex(text[j+1 : j+5])
	if !ok {
		return out
	}
	if hi < 0xD800 || hi > 0xDBFF {
		return append(out, oldUnit{r: hi, end: j + 5})
	}
	k := j + 5
	for k < len(text) && k-(j+5) < oldMaxBackslashes && text[k] == '\\' {
		k++
	}
	if k+5 > len(text) {
		return append(out, oldUnit{cut: true})
	}
	if k == j+5 || text[k] != 'u' {
		return out
	}
	lo, ok := parseHex(text[k+1 : k+5])
	if !ok || lo < 0xDC00 || lo > 0xDFFF {
		return out
	}
	return append(out, oldUnit{r: 0x10000 + (hi-0xD800)<<10 + (lo - 0xDC00), end: k + 5})
}

// oldAppendHex decodes n hex digits at text[j].
func oldAppendHex(text string, j, n int, isByte bool, out []oldUnit) []oldUnit {
	if j+n > len(text) {
		return append(out, oldUnit{cut: true})
	}
	if v, ok := parseHex(text[j : j+n]); ok {
		out = append(out, oldUnit{r: v, isByte: isByte, end: j + n})
	}
	return out
}

// oldDecodeEntity decodes &name;, &#NNN; and &#xHHH; at text[i].
func oldDecodeEntity(text string, i int, out []oldUnit) []oldUnit {
	const maxLen = 10 // "&#x10FFFF;"
	semi := strings.IndexByte(text[i:min(len(text), i+maxLen)], ';')
	if semi < 0 {
		if len(text)-i < maxLen {
			return append(out, oldUnit{cut: true})
		}
		return out
	}
	name := text[i+1 : i+semi]
	end := i + semi + 1
	if r, ok := oldHTMLEntities[name]; ok {
		return append(out, oldUnit{r: r, end: end})
	}
	var v rune
	var ok bool
	switch {
	case strings.HasPrefix(name, "#x") || strings.HasPrefix(name, "#X"):
		v, ok = parseHex(name[2:])
	case strings.HasPrefix(name, "#"):
		v, ok = parseDecimal(name[1:])
	}
	if ok {
		out = append(out, oldUnit{r: v, end: end})
	}
	return out
}
