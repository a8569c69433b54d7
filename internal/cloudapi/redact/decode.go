package redact

import "strings"

// unit is one thing text may encode at a position: a byte or a whole rune,
// and where its encoding ends. An escape that the end of the text interrupts
// encodes nothing: only whole encodings of a secret are redacted, so that
// what a text's end shows never depends on the secret (see Scrubber).
type unit struct {
	r      rune
	isByte bool
	end    int
}

// maxUnits bounds what decodeAt returns, for the scratch buffer.
const maxUnits = 16

// How far an encoding reaches, which bounds where a secret's encoding can
// start once its end is known. The longest unit is a surrogate pair with
// maxBackslashes before each half (\\\\uD83D\\\\uDD11, 18 bytes for 4);
// the most bytes for one byte of a secret are 13 (\\\\U00000041).
const (
	maxUnitBytes    = 2 * (maxBackslashes + len("uXXXX"))
	maxBytesPerByte = maxBackslashes + len("U00000041")
)

// Escapes nest (a JSON string inside a JSON string doubles its backslashes,
// and a URL-encoded one turns % into %25) only so deep.
const (
	maxBackslashes = 4
	maxPercent25   = 2
)

// shortEscapes are the one-letter backslash escapes of JSON, Go and C.
var shortEscapes = map[byte]rune{
	'"': '"', '\\': '\\', '/': '/', '\'': '\'',
	'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 'f': '\f', 'a': '\a', 'v': '\v',
}

// htmlEntities are the named character references HTML escaping produces.
var htmlEntities = map[string]rune{"amp": '&', "lt": '<', "gt": '>', "quot": '"', "apos": '\''}

// decodeAt returns what text may encode at i: the byte itself, and whatever
// an escape starting there stands for: %XX (also as %25XX), + for a space,
// backslash escapes (\", \/, \uXXXX with surrogate pairs, \UXXXXXXXX, \xXX,
// octal, with doubled backslashes), and HTML character references.
func decodeAt(text string, i int, out []unit) []unit {
	out = append(out, unit{r: rune(text[i]), isByte: true, end: i + 1})
	switch text[i] {
	case '+':
		out = append(out, unit{r: ' ', isByte: true, end: i + 1})
	case '%':
		out = decodePercent(text, i, out)
	case '\\':
		for k := 1; k <= maxBackslashes && i+k <= len(text) && text[i+k-1] == '\\'; k++ {
			out = decodeBackslash(text, i+k, out)
		}
	case '&':
		out = decodeEntity(text, i, out)
	}
	return out
}

func decodePercent(text string, i int, out []unit) []unit {
	j := i + 1
	for range maxPercent25 + 1 {
		if j+2 > len(text) {
			return out
		}
		if v, ok := parseHex(text[j : j+2]); ok {
			out = append(out, unit{r: v, isByte: true, end: j + 2})
			if v == '+' { // a query-escaped space, escaped again
				out = append(out, unit{r: ' ', isByte: true, end: j + 2})
			}
		}
		if !strings.EqualFold(text[j:j+2], "25") {
			break
		}
		j += 2
	}
	return out
}

// decodeBackslash decodes the escape whose letter is at text[j], after one
// or more backslashes.
func decodeBackslash(text string, j int, out []unit) []unit {
	if j >= len(text) {
		return out
	}
	c := text[j]
	if r, ok := shortEscapes[c]; ok {
		out = append(out, unit{r: r, end: j + 1})
	}
	switch {
	case c == 'u':
		return decodeUTF16(text, j, out)
	case c == 'U':
		return appendHex(text, j+1, 8, false, out)
	case c == 'x':
		return appendHex(text, j+1, 2, true, out)
	case '0' <= c && c <= '3':
		if j+3 > len(text) {
			return out
		}
		if v, ok := parseOctal(text[j : j+3]); ok {
			out = append(out, unit{r: v, isByte: true, end: j + 3})
		}
	}
	return out
}

// decodeUTF16 decodes \uXXXX at text[j] ('u'), joining a surrogate pair.
func decodeUTF16(text string, j int, out []unit) []unit {
	if j+5 > len(text) {
		return out
	}
	hi, ok := parseHex(text[j+1 : j+5])
	if !ok {
		return out
	}
	if hi < 0xD800 || hi > 0xDBFF {
		return append(out, unit{r: hi, end: j + 5})
	}
	k := j + 5
	for k < len(text) && k-(j+5) < maxBackslashes && text[k] == '\\' {
		k++
	}
	if k+5 > len(text) {
		return out
	}
	if k == j+5 || text[k] != 'u' {
		return out
	}
	lo, ok := parseHex(text[k+1 : k+5])
	if !ok || lo < 0xDC00 || lo > 0xDFFF {
		return out
	}
	return append(out, unit{r: 0x10000 + (hi-0xD800)<<10 + (lo - 0xDC00), end: k + 5})
}

// appendHex decodes n hex digits at text[j].
func appendHex(text string, j, n int, isByte bool, out []unit) []unit {
	if j+n > len(text) {
		return out
	}
	if v, ok := parseHex(text[j : j+n]); ok {
		out = append(out, unit{r: v, isByte: isByte, end: j + n})
	}
	return out
}

// decodeEntity decodes &name;, &#NNN; and &#xHHH; at text[i].
func decodeEntity(text string, i int, out []unit) []unit {
	const maxLen = 10 // "&#x10FFFF;"
	semi := strings.IndexByte(text[i:min(len(text), i+maxLen)], ';')
	if semi < 0 {
		return out
	}
	name := text[i+1 : i+semi]
	end := i + semi + 1
	if r, ok := htmlEntities[name]; ok {
		return append(out, unit{r: r, end: end})
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
		out = append(out, unit{r: v, end: end})
	}
	return out
}

func parseHex(s string) (rune, bool) {
	if s == "" {
		return 0, false
	}
	var v rune
	for i := range len(s) {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

func parseOctal(s string) (rune, bool) {
	var v rune
	for i := range len(s) {
		if s[i] < '0' || s[i] > '7' {
			return 0, false
		}
		v = v<<3 | rune(s[i]-'0')
	}
	return v, v <= 0xff
}

func parseDecimal(s string) (rune, bool) {
	if s == "" || len(s) > 7 {
		return 0, false
	}
	var v rune
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		v = v*10 + rune(s[i]-'0')
	}
	return v, true
}
