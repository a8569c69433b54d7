package bound

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

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

// Join joins items with "; " while they fit in n bytes, and says how many
// more there are ("; and 3 more"), so that a message naming a hundred
// failing items with long IDs stays short and still tells how many there
// were. When not even the first item fits whole, it is shown cut.
func Join(items []string, n int) string {
	if whole := strings.Join(items, "; "); len(whole) <= n {
		return whole
	}
	var b strings.Builder
	for i, item := range items {
		sep := ""
		if i > 0 {
			sep = "; "
		}
		// Item i fits if the rest can still be counted after it.
		if b.Len()+len(sep)+len(item)+len(AndMore(len(items)-i-1)) > n {
			if i == 0 {
				more := AndMore(len(items) - 1)
				return Cut(item, n-len(more)) + more
			}
			return b.String() + AndMore(len(items)-i)
		}
		b.WriteString(sep)
		b.WriteString(item)
	}
	return b.String()
}

// AndMore says that n more items were left out of a list ("; and n more"),
// or nothing when n is 0.
func AndMore(n int) string {
	if n == 0 {
		return ""
	}
	return "; and " + strconv.Itoa(n) + " more"
}
