package ratebudget

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// A reserve leaves part of each key's budget to callers outside the
// manager: the manager admits no more than the rest in any window, and its
// Allowance (what the books share between namespaces) is the rest.
func TestReserveKeepsTheManagerUnderTheRest(t *testing.T) {
	for _, tc := range []struct {
		reserved float64
		want     int // calls admitted in a window of the service's
	}{
		{0, 10},
		{0.3, 7},
		{0.95, 1},
	} {
		clock := clocktesting.NewFakeClock(epoch)
		s := NewReservingStore(map[string]RateLimit{apiManagement: defaultManagementRate()}, tc.reserved)
		s.now = clock.Now
		key := basicCreds("k", "s")
		admitted := 0
		for range 200 { // a backlog, asking every 10 ms for 2 s: more than a window's room
			if s.Admit(apiManagement, "https://api.example.com", key, 1) == 0 {
				admitted++
			}
			clock.Step(10 * time.Millisecond)
		}
		if admitted > tc.want {
			t.Errorf("reserve %v: %d calls admitted in 2 s, want at most %d", tc.reserved, admitted, tc.want)
		}
		if want := float64(tc.want) / 11; s.Allowance(apiManagement) != want {
			t.Errorf("reserve %v: allowance %v, want %v calls/s", tc.reserved, s.Allowance(apiManagement), want)
		}
	}
}

// A 429 the manager got while it kept under its part was caused by the
// key's other users; one it got while it did not pace the budget (no
// limit) is its own.
func TestRateLimitedNamesTheCause(t *testing.T) {
	clock := clocktesting.NewFakeClock(epoch)
	key, host := basicCreds("k", "s"), "https://api.example.com"
	s := NewReservingStore(map[string]RateLimit{apiManagement: defaultManagementRate(), apiAlert: {Requests: -1}}, 0.5)
	s.now = clock.Now
	for range 5 {
		if s.Admit(apiManagement, host, key, 1) != 0 {
			clock.Step(time.Second)
		}
	}
	if got := s.RateLimited(apiManagement, host, key, clock.Now().Add(3*time.Second)); got != CauseOthers {
		t.Errorf("429 while under the manager's part: cause %q, want %q", got, CauseOthers)
	}
	if held := s.HeldUntil(apiManagement, host, key); !held.Equal(clock.Now().Add(3 * time.Second)) {
		t.Errorf("429 held until %v, want 3 s from now", held)
	}
	if got := s.RateLimited(apiAlert, host, key, clock.Now()); got != CauseManager {
		t.Errorf("429 on a budget the manager does not pace: cause %q, want %q", got, CauseManager)
	}
}
