package bound_test

import (
	"testing"
	"unicode/utf8"

	"github.com/servicewatch/servicewatch/internal/bound"
)

func TestBytes(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"longer than ten", 10, "longer tha"},
		{"ééééé", 5, "éé"}, // never splits a rune
		{"ééééé", 0, ""},
		{"abc", -1, ""},
		{"ab\xffcd", 3, "ab\xff"}, // invalid bytes before the cut are kept
		{"", 3, ""},
	}
	for _, tt := range tests {
		if got := bound.Bytes(tt.in, tt.n); got != tt.want {
			t.Errorf("Bytes(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestCut(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"longer than ten", 10, "longer …"},
		{"ééééé", 7, "éé…"}, // never splits a rune
		{"ééééé", 8, "éé…"},
		{"ééééé", 9, "ééé…"},
		{"abcdef", 3, "…"},
		{"abcdef", 1, "…"}, // no room for the marker: the marker alone
		{"abc", 3, "abc"},
	}
	for _, tt := range tests {
		got := bound.Cut(tt.in, tt.n)
		if got != tt.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
		if tt.n >= len(bound.Ellipsis) && len(got) > tt.n {
			t.Errorf("Cut(%q, %d) = %q, longer than %d bytes", tt.in, tt.n, got, tt.n)
		}
	}
}

func TestRunes(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"short", 5, "short"},
		{"ééééé", 2, "éé"},
		{"ééééé", 0, ""},
		{"a\xffb", 2, "a\xff"}, // an invalid byte counts as one rune
	}
	for _, tt := range tests {
		if got := bound.Runes(tt.in, tt.n); got != tt.want {
			t.Errorf("Runes(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestCutRunes(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"short", 5, "short"},
		{"shorter", 5, "shor…"},
		{"ééééé", 3, "éé…"},
		{"application/x-very-long-type", 8, "applica…"},
	}
	for _, tt := range tests {
		got := bound.CutRunes(tt.in, tt.n)
		if got != tt.want {
			t.Errorf("CutRunes(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
		if utf8.RuneCountInString(got) > tt.n {
			t.Errorf("CutRunes(%q, %d) = %q, more than %d runes", tt.in, tt.n, got, tt.n)
		}
	}
}
