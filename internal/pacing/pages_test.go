package pacing

import (
	"testing"
	"time"
)

func TestListPages(t *testing.T) {
	for _, tt := range []struct {
		name               string
		last, others, most int
		want               int
	}{
		{"never read: its first page", 0, 2, 10, 1},
		{"one page", 1, 2, 10, 1},
		{"two pages beside the two management calls", 2, 2, 10, 2},
		{"as many as fit in a batch", 20, 2, 10, 8},
		{"a batch full of others still reserves the first page", 5, 10, 10, 1},
		{"no limit", 30, 2, 0, 30},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ListPages(tt.last, tt.others, tt.most); got != tt.want {
				t.Errorf("ListPages(%d, %d, %d) = %d, want %d", tt.last, tt.others, tt.most, got, tt.want)
			}
		})
	}
}

func TestMayWaitForPage(t *testing.T) {
	const s = time.Second
	for _, tt := range []struct {
		name                      string
		waited, wait, every, left time.Duration
		want                      bool
	}{
		{"no wait", 0, 0, 30 * s, 10 * s, true},
		{"2 s of a 30 s interval, 2 min to the deadline", 0, 2 * s, 30 * s, 120 * s, true},
		{"a quarter of the interval", 5 * s, 2500 * time.Millisecond, 30 * s, 120 * s, true},
		{"more than a quarter of the interval", 6 * s, 2 * s, 30 * s, 120 * s, false},
		{"the wait alone is longer than a quarter", 0, 11 * s, 30 * s, 120 * s, false},
		{"more than half the time to the deadline", 0, 3 * s, 30 * s, 5 * s, false},
		{"no deadline", 0, 5 * s, 60 * s, 0, true},
		{"a long interval waits longer", 10 * s, 20 * s, 5 * time.Minute, 120 * s, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := MayWaitForPage(tt.waited, tt.wait, tt.every, tt.left); got != tt.want {
				t.Errorf("MayWaitForPage(%v, %v, %v, %v) = %v, want %v", tt.waited, tt.wait, tt.every, tt.left, got, tt.want)
			}
		})
	}
}
