package bound

import "unicode/utf8"

// Ellipsis marks where Cut and CutRunes cut a string.
const Ellipsis = "…"

// Bytes returns the longest prefix of s of at most n bytes that ends on a
// rune boundary. Invalid UTF-8 before the cut is kept as it is: a caller that
// scrubs secrets must still see the first bytes of one cut inside a rune.
func Bytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Cut returns s when it has at most n bytes, and otherwise the longest
// prefix that leaves room for Ellipsis within n bytes, followed by Ellipsis.
// When n has no room for Ellipsis, the result is Ellipsis alone, which is
// longer than n: every caller's n is far larger.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Bytes(s, n-len(Ellipsis)) + Ellipsis
}

// Runes returns the first n runes of s (each invalid byte counting as one),
// or s when it has no more.
func Runes(s string, n int) string {
	for i := range s {
		if n <= 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// CutRunes returns s when it has at most n runes, and otherwise its first
// n-1 runes followed by Ellipsis: n runes in all.
func CutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return Runes(s, n-1) + Ellipsis
}
