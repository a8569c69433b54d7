package controller

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds on the strings the operator writes, so that whatever the cloud or a
// tenant sends, the status stays writable (the API server refuses condition
// messages over 32 KiB) and a condition stays readable in `kubectl get`.
const (
	// maxConditionMessageBytes bounds every condition message.
	maxConditionMessageBytes = 4 << 10
	// maxListMessageBytes bounds the list of failing items in a message, so
	// that Ready, which joins the failing parts' messages, stays in bounds.
	maxListMessageBytes = 1 << 10
)

// joinAnd joins words as "a, b and c".
func joinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// listWithin joins items with "; " while they fit in maxBytes and says how
// many more there are, so that a message about a hundred failing alerts with
// long IDs stays short and still tells how many failed.
func listWithin(items []string, maxBytes int) string {
	if whole := strings.Join(items, "; "); len(whole) <= maxBytes {
		return whole
	}
	var b strings.Builder
	for i, item := range items {
		sep := ""
		if i > 0 {
			sep = "; "
		}
		// Item i fits if the rest can still be named after it.
		if b.Len()+len(sep)+len(item)+len(andMore(len(items)-i-1)) > maxBytes {
			if i == 0 { // not even the first fits whole: show it cut
				more := andMore(len(items) - 1)
				return cutString(item, maxBytes-len(more)) + more
			}
			return b.String() + andMore(len(items)-i)
		}
		b.WriteString(sep)
		b.WriteString(item)
	}
	return b.String()
}

func andMore(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; and %d more", n)
}

// cutString cuts s to at most maxBytes bytes on a rune boundary, marking the
// cut with an ellipsis.
func cutString(s string, maxBytes int) string {
	if len(s) <= maxBytes {
		return s
	}
	const ellipsis = "…"
	cut := max(0, maxBytes-len(ellipsis))
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
