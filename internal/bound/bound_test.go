package bound_test

import (
	"maps"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/servicewatch/servicewatch/internal/bound"
)

// cutter is one of the package's cutters, with the measure its n bounds.
type cutter struct {
	name string
	cut  func(string, int) string
	size func(string) int
	// marked: a cut string ends in Ellipsis, counted in n.
	marked bool
}

var (
	bytesCut    = cutter{"Bytes", bound.Bytes, func(s string) int { return len(s) }, false}
	cutCut      = cutter{"Cut", bound.Cut, func(s string) int { return len(s) }, true}
	runesCut    = cutter{"Runes", bound.Runes, utf8.RuneCountInString, false}
	cutRunesCut = cutter{"CutRunes", bound.CutRunes, utf8.RuneCountInString, true}
)

func TestCutters(t *testing.T) {
	tests := []struct {
		c    cutter
		in   string
		n    int
		want string
	}{
		{bytesCut, "short", 10, "short"},
		{bytesCut, "exactly10!", 10, "exactly10!"},
		{bytesCut, "longer than ten", 10, "longer tha"},
		{bytesCut, "ééééé", 5, "éé"}, // never splits a rune
		{bytesCut, "ééééé", 0, ""},
		{bytesCut, "abc", -1, ""},
		{bytesCut, "ab\xffcd", 3, "ab\xff"}, // invalid bytes before the cut are kept
		{bytesCut, "", 3, ""},

		{cutCut, "short", 10, "short"},
		{cutCut, "exactly10!", 10, "exactly10!"},
		{cutCut, "longer than ten", 10, "longer …"},
		{cutCut, "ééééé", 7, "éé…"}, // never splits a rune
		{cutCut, "ééééé", 8, "éé…"},
		{cutCut, "ééééé", 9, "ééé…"},
		{cutCut, "abcdef", 3, "…"},
		{cutCut, "abcdef", 1, "…"}, // no room for the marker: the marker alone
		{cutCut, "abc", 3, "abc"},

		{runesCut, "short", 10, "short"},
		{runesCut, "short", 5, "short"},
		{runesCut, "ééééé", 2, "éé"},
		{runesCut, "ééééé", 0, ""},
		{runesCut, "a\xffb", 2, "a\xff"}, // an invalid byte counts as one rune

		{cutRunesCut, "short", 10, "short"},
		{cutRunesCut, "short", 5, "short"},
		{cutRunesCut, "shorter", 5, "shor…"},
		{cutRunesCut, "ééééé", 3, "éé…"},
		{cutRunesCut, "application/x-very-long-type", 8, "applica…"},
	}
	for _, tt := range tests {
		got := tt.c.cut(tt.in, tt.n)
		if got != tt.want {
			t.Errorf("%s(%q, %d) = %q, want %q", tt.c.name, tt.in, tt.n, got, tt.want)
		}
		if room := tt.c.size(bound.Ellipsis); (!tt.c.marked || tt.n >= room) && tt.c.size(got) > max(tt.n, 0) {
			t.Errorf("%s(%q, %d) = %q, over the bound", tt.c.name, tt.in, tt.n, got)
		}
	}
}

func TestJoin(t *testing.T) {
	tests := []struct {
		items []string
		max   int
		want  string
	}{
		{nil, 100, ""},
		{[]string{"a", "b", "c"}, 100, "a; b; c"},
		{[]string{"aaaa", "bbbb", "cccc"}, 16, "aaaa; bbbb; cccc"},
		{[]string{"aaaa", "bbbb", "cccc"}, 15, "…; and 2 more"},
		{[]string{"aaaa", "bbbb", "cccc", "dddd"}, 18, "aaaa; and 3 more"},
		{[]string{"aaaa", "bbbb"}, 10, "aaaa; bbbb"},
		{[]string{strings.Repeat("a", 50), "b"}, 30, strings.Repeat("a", 15) + "…; and 1 more"},
	}
	for _, tt := range tests {
		got := bound.Join(tt.items, tt.max)
		if got != tt.want {
			t.Errorf("bound.Join(%q, %d) = %q, want %q", tt.items, tt.max, got, tt.want)
		}
		if len(got) > tt.max {
			t.Errorf("bound.Join(%q, %d) is %d bytes", tt.items, tt.max, len(got))
		}
	}
}

func TestPrefix(t *testing.T) {
	tests := []struct {
		sizes  []int
		budget int
		want   int
	}{
		{nil, 10, 0},
		{[]int{3, 3, 3}, 10, 3},
		{[]int{3, 3, 3}, 9, 3},
		{[]int{3, 3, 3}, 8, 2},
		{[]int{3, 3, 3}, 2, 0},
		{[]int{3, 3, 3}, -5, 0},
	}
	for _, tt := range tests {
		if got, _ := bound.Prefix(tt.sizes, tt.budget); got != tt.want {
			t.Errorf("Prefix(%v, %d) = %d, want %d", tt.sizes, tt.budget, got, tt.want)
		}
	}
}

func TestTally(t *testing.T) {
	tests := []struct {
		name string
		add  []string
		top  int
		want map[string]int32
	}{
		{"nothing counted", nil, 3, nil},
		{"few names", []string{"a", "b", "a"}, 3, map[string]int32{"a": 2, "b": 1}},
		{"the most counted keep their names", []string{"a", "b", "b", "c", "c", "c"}, 2, map[string]int32{"c": 3, "(other)": 3}},
		{"ties by name", []string{"b", "a", "c"}, 2, map[string]int32{"a": 1, "(other)": 2}},
		{"past maxNames, others while counting", []string{"a", "b", "c", "d", "e"}, 10, map[string]int32{"a": 1, "b": 1, "c": 1, "(other)": 2}},
		{"names cut", []string{strings.Repeat("x", 20)}, 3, map[string]int32{"xxxxx…": 1}},
		// "-name" takes back one Add of name.
		{"a removed name's last count unnames it", []string{"a", "b", "-a", "c"}, 3, map[string]int32{"b": 1, "c": 1}},
		{"removed from other when unnamed", []string{"a", "b", "c", "d", "e", "-e"}, 10, map[string]int32{"a": 1, "b": 1, "c": 1, "(other)": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tally := bound.NewTally(3, 8, "(other)")
			for _, name := range tt.add {
				if removed, ok := strings.CutPrefix(name, "-"); ok {
					tally.Remove(removed)
					continue
				}
				tally.Add(name)
			}
			if got := tally.Top(tt.top); !maps.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("Top(%d) = %v, want %v", tt.top, got, tt.want)
			}
		})
	}
}
