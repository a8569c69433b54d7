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
		if want, got := float64(tc.want)/11, s.Allowance(apiManagement, BudgetID(apiManagement, "https://api.example.com", key)); got != want {
			t.Errorf("reserve %v: allowance %v, want %v calls/s", tc.reserved, got, want)
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

// An account's reserve is its key's own: that budget keeps under the
// account's rest, other keys under the store's, and clearing it gives the
// key the store's reserve back.
func TestReservePerBudget(t *testing.T) {
	host := "https://api.example.com"
	account, other := basicCreds("account", "s"), basicCreds("other", "s")
	admittedIn33s := func(s *Store, clock *clocktesting.FakeClock, key CredentialID) int {
		admitted := 0
		for range 3300 { // a backlog, asking every 10 ms for 33 s: 3 windows with the margin
			if s.Admit(apiManagement, host, key, 1) == 0 {
				admitted++
			}
			clock.Step(10 * time.Millisecond)
		}
		return admitted
	}
	for _, tc := range []struct {
		name                string
		reserved            float64
		clear               bool
		wantAccount, wantOf int
	}{
		{name: "half reserved", reserved: 0.5, wantAccount: 5, wantOf: 10},
		{name: "none reserved", reserved: 0, wantAccount: 10, wantOf: 10},
		{name: "90% reserved", reserved: 0.9, wantAccount: 1, wantOf: 10},
		{name: "cleared", reserved: 0.5, clear: true, wantAccount: 10, wantOf: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := clocktesting.NewFakeClock(epoch)
			s := NewStore(map[string]RateLimit{apiManagement: defaultManagementRate()})
			s.now = clock.Now
			s.Admit(apiManagement, host, account, 1) // the budget exists before its reserve is set
			clock.Step(time.Minute)
			s.SetReserve(apiManagement, host, account, tc.reserved)
			if tc.clear {
				s.ClearReserve(apiManagement, host, account)
			}
			if got := admittedIn33s(s, clock, account); got > 3*tc.wantAccount || got < 3*tc.wantAccount-1 {
				t.Errorf("the account's key: %d calls admitted in 33 s, want %d a window", got, tc.wantAccount)
			}
			if got := admittedIn33s(s, clock, other); got > 3*tc.wantOf || got < 3*tc.wantOf-1 {
				t.Errorf("another key: %d calls admitted in 33 s, want %d a window", got, tc.wantOf)
			}
			if want, got := float64(tc.wantAccount)/11, s.Allowance(apiManagement, BudgetID(apiManagement, host, account)); got != want {
				t.Errorf("the account's key: allowance %v, want %v calls/s", got, want)
			}
		})
	}
}

// A reserve set on a budget in use counts what the budget admitted in the
// window under way: the manager does not send the new part on top of it.
func TestAReserveSetInUseCountsTheWindowUnderWay(t *testing.T) {
	clock := clocktesting.NewFakeClock(epoch)
	s := NewStore(map[string]RateLimit{apiManagement: defaultManagementRate()})
	s.now = clock.Now
	host, key := "https://api.example.com", basicCreds("k", "s")
	admitted := 0
	for range 1000 { // 10 s of a backlog: the whole budget
		if s.Admit(apiManagement, host, key, 1) == 0 {
			admitted++
		}
		clock.Step(10 * time.Millisecond)
	}
	s.SetReserve(apiManagement, host, key, 0.5)
	if wait := s.Admit(apiManagement, host, key, 1); wait == 0 {
		t.Errorf("after %d calls in 10 s, a reserve of half was set and another call was admitted at once", admitted)
	}
}

// A batch is never larger than what the budget with the largest reserve of
// its own admits, and a reserve of another API changes nothing.
func TestMaxBatchFitsEveryReserve(t *testing.T) {
	host := "https://api.example.com"
	s := NewStore(map[string]RateLimit{apiManagement: defaultManagementRate(), apiAlert: {Requests: 100, Per: time.Minute, Burst: 10}})
	if got := s.MaxBatch(apiManagement); got != 10 {
		t.Fatalf("no reserve: batch %d, want 10", got)
	}
	s.SetReserve(apiManagement, host, basicCreds("a", "s"), 0.5)
	s.SetReserve(apiManagement, host, basicCreds("b", "s"), 0.2)
	s.SetReserve(apiAlert, host, basicCreds("c", "s"), 0.9)
	if got := s.MaxBatch(apiManagement); got != 5 {
		t.Errorf("reserves of half and a fifth: batch %d, want 5", got)
	}
	s.ClearReserve(apiManagement, host, basicCreds("a", "s"))
	if got := s.MaxBatch(apiManagement); got != 8 {
		t.Errorf("the half cleared: batch %d, want 8", got)
	}
}
