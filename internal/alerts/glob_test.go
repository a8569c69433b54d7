package alerts_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/servicewatch/servicewatch/internal/alerts"
)

// globCases are the patterns of TestGlob: today's grammar (* any run, ?
// any one character, anything else itself) at every place a segment can
// take: the start, the end, between stars, alone.
var globCases = []struct {
	pattern, s string
	want       bool
}{
	{"prod-*", "prod-latency", true},
	{"prod-*", "staging-latency", false},
	{"*latency*", "p95 latency high", true},
	{"*", "", true},
	{"", "", true},
	{"", "x", false},
	{"a?c", "abc", true},
	{"a?c", "ac", false},
	{"[a]", "[a]", true}, // brackets are themselves: every pattern is valid
	{"Ingest*", "ingest lag", false},
	{"*a*a*a*a*b", strings.Repeat("a", 200), false},
	{"é?", "éè", true},
	// Segments at the start, between stars and at the end.
	{"a*b*c", "abc", true},
	{"a*b*c", "aXbYc", true},
	{"a*b*c", "acb", false},
	{"ab*ba", "aba", false}, // the start and the end may not overlap
	{"ab*ba", "abba", true},
	{"a*a", "a", false},
	{"a*a", "aa", true},
	{"**", "x", true},
	{"a**b", "ab", true},
	{"*ab*ab", "abab", true},
	{"*-prod", "a-prod-prod", true},
	{"*aab*", "aaab", true},         // Knuth-Morris-Pratt falls back
	{"*abcabd*", "abcabcabd", true}, // and again
	{"*abcabd*", "abcabcabcabe", false},
	// ? is one character, however many bytes it takes.
	{"*?", "", false},
	{"*?", "é", true},
	{"?*?", "é", false},
	{"prod-?", "prod-é", true},
	{"*a?c*", "xxabcxx", true},
	{"*a?c*", "xxacxx", false},
	{"*é?ü*", "xéxüx", true},
	{"*?é*", "é", false},
	{"*?b?*", "éb€", true},
	{"x*?*?*y", "x€y", false},
	{"x*?*?*y", "x€éy", true},
	// A segment with ? longer than a machine word.
	{"*" + strings.Repeat("a?", 40) + "b*", "x" + strings.Repeat("ay", 40) + "bz", true},
	{"*" + strings.Repeat("a?", 40) + "b*", strings.Repeat("ay", 40) + "c", false},
	{"*" + strings.Repeat("a?", 40) + "b*", strings.Repeat("ay", 39) + "aéb", true},
	// A byte that is not UTF-8 is one character, U+FFFD, in the name and
	// in the pattern.
	{"?", "\xff", true},
	{"??", "\xff\xfe", true},
	{"??", "\xe2\x82", true}, // a cut sequence is a character per byte
	{"?", "\xe2\x82", false},
	{"\uFFFD", "\xff", true},
	{"\xff", "\uFFFD", true},
	{"*\uFFFD*", "a\xffb", true},
	{"*\xfe?*", "a\xff\xfeb", true}, // any two such bytes are alike
	{"*\xfe?*", "ab\xff", false},
}

func TestGlob(t *testing.T) {
	for _, tt := range globCases {
		if got := alerts.Glob(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Glob(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
		if ref := referenceGlob(tt.pattern, tt.s); ref != tt.want {
			t.Errorf("the reference says %v of Glob(%q, %q), want %v", ref, tt.pattern, tt.s, tt.want)
		}
	}
}

// hostileName is the longest name a 16 MiB answer comfortably carries
// several of, from a tenant's own host.
const hostileNameBytes = 4 << 20

// adversarialCases are 256-character patterns (the most
// spec.alertSelector.name takes) against 4 MiB names, shaped so that a
// matcher that backtracks to its last star tries most of the pattern at
// every byte of the name.
func adversarialCases() []struct {
	name, pattern, s string
	want             bool
} {
	as := strings.Repeat("a", hostileNameBytes)
	return []struct {
		name, pattern, s string
		want             bool
	}{
		{"a long end after a star", "*" + strings.Repeat("a", 254) + "b", as, false},
		{"a long literal between stars", "*" + strings.Repeat("a", 253) + "b*", as, false},
		{"a long literal between stars, found at the end", "*" + strings.Repeat("a", 253) + "b*", as + "b", true},
		{"a long segment with ? between stars", "*" + strings.Repeat("a?", 127) + "b*", as, false},
		{"a long segment with ? between stars, found at the end", "*" + strings.Repeat("a?", 127) + "b*", as + "b", true},
		{"many stars", strings.Repeat("*a", 127) + "*b", as, false},
		{"many stars, the last found at the end", strings.Repeat("*a", 127) + "*b", as + "b", true},
		{"no star", strings.Repeat("?", 256), as, false},
		{"a name that is not UTF-8", "*" + strings.Repeat("\uFFFD", 253) + "b*", strings.Repeat("\xff", hostileNameBytes), false},
	}
}

func TestGlobAdversarial(t *testing.T) {
	for _, tt := range adversarialCases() {
		if got := alerts.CompilePattern(tt.pattern).Match(tt.s); got != tt.want {
			t.Errorf("%s: Match = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// maxStepsPerNameByte bounds the steps of a match per byte of the name,
// whatever the pattern: 3 for a segment without ?, one per machine word of
// Shift-And (4 for 256 characters), twice over for a name that is not
// UTF-8 (its bytes become U+FFFD, three bytes each).
const maxStepsPerNameByte = 16

// The work of a match is linear in the name: a 256-character pattern
// costs a bounded number of steps per byte of a 4 MiB name, where a
// matcher that backtracks costs the pattern's length per byte (about 254
// for the first case: 1.5 s of a core).
func TestGlobStepsAreLinearInTheName(t *testing.T) {
	for _, tt := range adversarialCases() {
		_, steps := alerts.MatchSteps(alerts.CompilePattern(tt.pattern), tt.s)
		if limit := int64(maxStepsPerNameByte*len(tt.s) + 4*len(tt.pattern)); steps > limit {
			t.Errorf("%s: %d steps for a %d-byte name (%.1f a byte), want at most %d", tt.name, steps, len(tt.s), float64(steps)/float64(len(tt.s)), limit)
		}
	}
}

// FuzzGlob compares Glob with a regular expression built from the pattern
// (Go's regexp reads a byte that is not UTF-8 as U+FFFD too).
func FuzzGlob(f *testing.F) {
	for _, tt := range globCases {
		if len(tt.pattern) <= 64 && len(tt.s) <= 256 {
			f.Add(tt.pattern, tt.s)
		}
	}
	f.Add("*a?b*?*c", "xaébyyc")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 64 || len(s) > 256 {
			t.Skip("short inputs: the reference is the judge, not the bound")
		}
		if got, want := alerts.Glob(pattern, s), referenceGlob(pattern, s); got != want {
			t.Errorf("Glob(%q, %q) = %v, the regular expression says %v", pattern, s, got, want)
		}
	})
}

// referenceGlob is the grammar of Glob as a regular expression.
func referenceGlob(pattern, s string) bool {
	var re strings.Builder
	re.WriteString(`^(?s:`)
	for _, r := range pattern { // a byte that is not UTF-8 is U+FFFD

		switch r {
		case '*':
			re.WriteString(`.*`)
		case '?':
			re.WriteString(`.`)
		default:
			re.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	re.WriteString(`)$`)
	return regexp.MustCompile(re.String()).MatchString(s)
}
