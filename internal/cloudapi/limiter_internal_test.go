package cloudapi

import (
	"testing"
	"time"
)

// A token bucket of 10 with a refill of 1/s lets 19 calls into one 10 s
// window; the sliding window must keep it to 10, for the defaults and for a
// limit whose burst is smaller than its count.
func TestWindowLimiterNeverExceedsItsLimit(t *testing.T) {
	for _, l := range []RateLimit{DefaultManagementRate(), DefaultAlertRate(), {Requests: 5, Per: time.Second, Burst: 1}} {
		w := newWindowLimiter(l)
		now := time.Unix(1_700_000_000, 0)
		var sent []time.Time
		for range 10 * l.Requests {
			d, ok := w.reserve(now, -1)
			if !ok {
				t.Fatalf("%+v: reservation refused without a deadline", l)
			}
			sent = append(sent, now.Add(d))
			now = now.Add(time.Millisecond) // callers arrive much faster than allowed
		}
		for i := l.Requests; i < len(sent); i++ {
			if gap := sent[i].Sub(sent[i-l.Requests]); gap < l.Per {
				t.Fatalf("%+v: calls %d and %d are %v apart: %d calls in less than %v", l, i-l.Requests, i, gap, l.Requests+1, l.Per)
			}
		}
		burst := min(max(l.Burst, 1), l.Requests)
		if !sent[burst-1].Equal(sent[0].Add(time.Duration(burst-1) * time.Millisecond)) {
			t.Errorf("%+v: the first %d calls should go at once", l, burst)
		}
	}
}

func TestWindowLimiterRefusesBeyondMaxWaitWithoutReserving(t *testing.T) {
	w := newWindowLimiter(RateLimit{Requests: 1, Per: time.Minute, Burst: 1})
	now := time.Unix(1_700_000_000, 0)
	if d, ok := w.reserve(now, 0); !ok || d != 0 {
		t.Fatalf("first reservation: %v %v", d, ok)
	}
	if d, ok := w.reserve(now, time.Second); ok || d != time.Minute {
		t.Fatalf("second reservation: %v %v, want refused with 1m", d, ok)
	}
	// The refused reservation took nothing: a minute later the call may go.
	if d, ok := w.reserve(now.Add(time.Minute), 0); !ok || d != 0 {
		t.Fatalf("after a minute: %v %v", d, ok)
	}
}

func TestIdleCredentialsAreEvicted(t *testing.T) {
	var s credStore
	now := time.Unix(1_700_000_000, 0)
	limit := DefaultManagementRate()
	old := credentialKey(APIManagement, NewBasicCredentials("old", "rotated-away"))
	blocked := credentialKey(APIManagement, NewBasicCredentials("blocked", "s"))
	s.get(old, limit, now).limiter.reserve(now, -1)
	s.get(blocked, limit, now).blockedUntil = now.Add(3 * time.Hour)

	later := now.Add(idleTTL + sweepEvery)
	s.get(credentialKey(APIManagement, NewBasicCredentials("new", "s")), limit, later)
	if _, ok := s.states[old]; ok {
		t.Error("idle credential kept")
	}
	if _, ok := s.states[blocked]; !ok {
		t.Error("credential still blocked by a 429 was evicted")
	}
	if s.len() != 2 {
		t.Errorf("%d entries, want 2", s.len())
	}
	for k := range s.states {
		if string(k[:]) == "rotated-away" {
			t.Error("credential kept in clear")
		}
	}
}
