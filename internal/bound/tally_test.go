package bound_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/servicewatch/servicewatch/internal/bound"
)

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
