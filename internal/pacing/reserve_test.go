package pacing

import (
	"maps"
	"testing"
	"time"
)

// A namespace over its share leaves the budget's room to a reserved sync of
// a namespace within its share, from the time the budget takes to earn the
// sync's calls (less a call's slack) before it is due, until it has had them.
func TestReservationsHoldTheNamespaceOverItsShare(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	const rate = 1.0 // a call a second: 2 calls take 2 s to earn, slack 1 s
	over := map[string]bool{"big": true}
	tests := []struct {
		name    string
		reserve func(r *reservations[string])
		asker   string
		at      time.Duration // after t0
		hold    time.Duration
	}{
		{"nothing reserved", func(*reservations[string]) {}, "big", 0, 0},
		{"a sync due later than the budget takes to earn it: no hold",
			func(r *reservations[string]) { r.Reserve("k", "small/w", "small", 2, t0.Add(5*time.Second)) }, "big", 0, 0},
		{"due within the time to earn its calls, less the slack: held until it had them",
			func(r *reservations[string]) { r.Reserve("k", "small/w", "small", 2, t0.Add(5*time.Second)) }, "big", 4500 * time.Millisecond, 2500 * time.Millisecond},
		{"within the slack: the big namespace goes, the sync may be a call's spacing late",
			func(r *reservations[string]) { r.Reserve("k", "small/w", "small", 2, t0.Add(5*time.Second)) }, "big", 3500 * time.Millisecond, 0},
		{"past its time, within the grace: held",
			func(r *reservations[string]) { r.Reserve("k", "small/w", "small", 2, t0.Add(5*time.Second)) }, "big", 6 * time.Second, 2 * time.Second},
		{"past the grace: dropped",
			func(r *reservations[string]) { r.Reserve("k", "small/w", "small", 2, t0.Add(5*time.Second)) }, "big", 5*time.Second + ClaimGrace + time.Millisecond, 0},
		{"a namespace's own reservations do not hold it",
			func(r *reservations[string]) { r.Reserve("k", "big/w", "big", 2, t0.Add(time.Second)) }, "big", 0, 0},
		{"nor those of a namespace over its share",
			func(r *reservations[string]) { r.Reserve("k", "other/w", "other", 2, t0.Add(time.Second)) }, "big", 0, 0},
		{"nor another budget's",
			func(r *reservations[string]) { r.Reserve("k2", "small/w", "small", 2, t0.Add(time.Second)) }, "big", 0, 0},
		{"a moved reservation holds at its new time",
			func(r *reservations[string]) {
				r.Reserve("k", "small/w", "small", 2, t0.Add(time.Second))
				r.Move("small/w", t0.Add(time.Minute))
			}, "big", 0, 0},
		{"an admitted one holds nothing",
			func(r *reservations[string]) {
				r.Reserve("k", "small/w", "small", 2, t0.Add(time.Second))
				r.Drop("k", "small/w")
			}, "big", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReservations[string]()
			tt.reserve(r)
			o := map[string]bool{"other": true}
			maps.Copy(o, over)
			if hold := r.HoldFor("k", tt.asker, o, t0.Add(tt.at), rate); hold != tt.hold {
				t.Errorf("hold = %v, want %v", hold, tt.hold)
			}
		})
	}
}

// Reservations dropped, released or past their grace leave nothing behind.
func TestReservationsForgetWhatEnded(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	r := newReservations[string]()
	r.Reserve("k", "a", "small", 2, t0)
	r.Reserve("k2", "a", "small", 1, t0)
	r.Reserve("k", "b", "small", 2, t0)
	r.Release("a")
	r.HoldFor("k", "big", nil, t0.Add(time.Minute), 1)
	if len(r.byBudget) != 0 || len(r.of) != 0 {
		t.Errorf("left: %v, %v", r.byBudget, r.of)
	}
}
