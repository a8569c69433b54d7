package fakecloud

import (
	"testing"
	"time"
)

func TestBudgetWindowStart(t *testing.T) {
	epoch := time.Unix(1_700_000_000, 0) // a multiple of 10 s
	tests := []struct {
		name   string
		budget Budget
		at     time.Time
		want   time.Time
	}{
		{"no phase: windows start on multiples of the window", Budget{Requests: 1, Window: 10 * time.Second},
			epoch.Add(7 * time.Second), epoch},
		{"on a boundary: the window that starts there", Budget{Requests: 1, Window: 10 * time.Second},
			epoch.Add(10 * time.Second), epoch.Add(10 * time.Second)},
		{"phase shifts the boundaries", Budget{Requests: 1, Window: 10 * time.Second, Phase: 3 * time.Second},
			epoch.Add(2 * time.Second), epoch.Add(-7 * time.Second)},
		{"after the shifted boundary", Budget{Requests: 1, Window: 10 * time.Second, Phase: 3 * time.Second},
			epoch.Add(3 * time.Second), epoch.Add(3 * time.Second)},
		{"a phase longer than the window wraps", Budget{Requests: 1, Window: 10 * time.Second, Phase: 23 * time.Second},
			epoch.Add(4 * time.Second), epoch.Add(3 * time.Second)},
		{"minute windows", Budget{Requests: 1, Window: time.Minute, Phase: 1500 * time.Millisecond},
			time.Unix(1_699_999_980, 0).Add(59 * time.Second), time.Unix(1_699_999_980, 0).Add(1500 * time.Millisecond)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.budget.windowStart(tt.at); !got.Equal(tt.want) {
				t.Errorf("windowStart(%v) = %v, want %v", tt.at, got, tt.want)
			}
		})
	}
}

func TestBudgetAdmit(t *testing.T) {
	epoch := time.Unix(1_700_000_000, 0)
	type call struct {
		credential string
		at         time.Duration // after epoch
		wantOK     bool
		wantWait   time.Duration // when refused
	}
	tests := []struct {
		name   string
		budget Budget
		calls  []call
	}{
		{"zero budget enforces nothing", Budget{}, []call{
			{"a", 0, true, 0}, {"a", 0, true, 0}, {"a", 0, true, 0},
		}},
		{"the call past the budget waits for the next window", Budget{Requests: 2, Window: 10 * time.Second}, []call{
			{"a", 1 * time.Second, true, 0},
			{"a", 2 * time.Second, true, 0},
			{"a", 4 * time.Second, false, 6 * time.Second},
			{"a", 9999 * time.Millisecond, false, time.Millisecond},
			{"a", 10 * time.Second, true, 0},
		}},
		{"credentials have budgets of their own", Budget{Requests: 1, Window: 10 * time.Second}, []call{
			{"a", 0, true, 0},
			{"b", 0, true, 0},
			{"a", time.Second, false, 9 * time.Second},
			{"b", time.Second, false, 9 * time.Second},
		}},
		{"calls without a credential are not budgeted", Budget{Requests: 1, Window: 10 * time.Second}, []call{
			{"", 0, true, 0}, {"", 0, true, 0},
		}},
		{"refused calls do not use up the next window", Budget{Requests: 1, Window: 10 * time.Second, Phase: 5 * time.Second}, []call{
			{"a", 5 * time.Second, true, 0},
			{"a", 6 * time.Second, false, 9 * time.Second},
			{"a", 14 * time.Second, false, time.Second},
			{"a", 15 * time.Second, true, 0},
		}},
		{"a burst across a boundary is let through twice", Budget{Requests: 2, Window: 10 * time.Second, Phase: 5 * time.Second}, []call{
			{"a", 14 * time.Second, true, 0},
			{"a", 14 * time.Second, true, 0},
			{"a", 15 * time.Second, true, 0},
			{"a", 15 * time.Second, true, 0},
			{"a", 15 * time.Second, false, 10 * time.Second},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := budgetCounter{budget: tt.budget}
			for i, call := range tt.calls {
				wait, ok := c.admit(call.credential, epoch.Add(call.at))
				if ok != call.wantOK || (!ok && wait != call.wantWait) {
					t.Errorf("call %d (%q at +%v): ok=%v wait=%v, want ok=%v wait=%v",
						i, call.credential, call.at, ok, wait, call.wantOK, call.wantWait)
				}
			}
		})
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	tests := []struct {
		wait time.Duration
		want int
	}{
		{time.Millisecond, 1},
		{time.Second, 1},
		{time.Second + time.Nanosecond, 2},
		{9500 * time.Millisecond, 10},
	}
	for _, tt := range tests {
		if got := retryAfterSeconds(tt.wait); got != tt.want {
			t.Errorf("retryAfterSeconds(%v) = %d, want %d", tt.wait, got, tt.want)
		}
	}
}

// Clock readings from time.Now carry a monotonic part that differs from the
// wall clock by a few nanoseconds from call to call; the window must not.
func TestBudgetAdmitWithMonotonicReadings(t *testing.T) {
	farFromBoundary := time.Duration(time.Now().UnixNano()%int64(time.Hour)) + 30*time.Minute
	c := budgetCounter{budget: Budget{Requests: 2, Window: time.Hour, Phase: farFromBoundary}}
	var got []bool
	for range 3 {
		_, ok := c.admit("a", time.Now())
		got = append(got, ok)
	}
	if !got[0] || !got[1] || got[2] {
		t.Errorf("admitted %v, want true true false", got)
	}
}
