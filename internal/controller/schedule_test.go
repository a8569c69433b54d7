package controller

import (
	"testing"
	"time"
)

func TestNextDelay(t *testing.T) {
	const interval = 5 * time.Minute
	tests := []struct {
		name       string
		failures   int
		transient  bool
		retryAfter time.Duration
		min, max   time.Duration
	}{
		{"success waits the interval plus up to 10% jitter", 0, false, 0, interval, interval + interval/10},
		{"stalled waits the interval, not a tight loop", 1, false, 0, interval, interval + interval/10},
		{"first transient failure", 1, true, 0, 5 * time.Second, 5 * time.Second},
		{"third transient failure doubles twice", 3, true, 0, 20 * time.Second, 20 * time.Second},
		{"backoff never passes the interval", 30, true, 0, interval, interval},
		{"429 waits as asked", 1, true, 40 * time.Second, 40 * time.Second, 40 * time.Second},
		{"429 waits as asked even past the interval", 1, true, time.Hour, time.Hour, time.Hour},
	}
	for _, tt := range tests {
		for range 20 { // jitter is random: every draw must be in range
			got := nextDelay(interval, tt.failures, tt.transient, tt.retryAfter)
			if got < tt.min || got > tt.max {
				t.Fatalf("%s: %v, want within [%v, %v]", tt.name, got, tt.min, tt.max)
			}
		}
	}
}

func TestPrefixFitting(t *testing.T) {
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
		if got := prefixFitting(tt.sizes, tt.budget); got != tt.want {
			t.Errorf("prefixFitting(%v, %d) = %d, want %d", tt.sizes, tt.budget, got, tt.want)
		}
	}
}
