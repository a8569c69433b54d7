package tenancy_test

import (
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/tenancy"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestShares(t *testing.T) {
	const rate, burst = 100, 1000 // units per second, units
	type step struct {
		advance time.Duration
		charge  map[string]int64
		// wait is what each namespace is told after the step.
		wait map[string]time.Duration
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a namespace within its burst never waits", []step{
			{charge: map[string]int64{"a": 1000}, wait: map[string]time.Duration{"a": 0}},
		}},
		{"a namespace over its share waits until it has earned the work back", []step{
			{charge: map[string]int64{"hostile": 1500}, wait: map[string]time.Duration{"hostile": 5 * time.Second}},
			{advance: 2 * time.Second, wait: map[string]time.Duration{"hostile": 3 * time.Second}},
			{advance: 3 * time.Second, wait: map[string]time.Duration{"hostile": 0}},
		}},
		{"another namespace's work is not charged to a victim", []step{
			{charge: map[string]int64{"hostile": 5000, "victim": 10}, wait: map[string]time.Duration{"hostile": 40 * time.Second, "victim": 0}},
			{charge: map[string]int64{"hostile": 5000}, wait: map[string]time.Duration{"hostile": 90 * time.Second, "victim": 0}},
		}},
		{"earned work never exceeds the burst", []step{
			{advance: time.Hour, charge: map[string]int64{"a": 900}, wait: map[string]time.Duration{"a": 0}},
			{advance: time.Hour, charge: map[string]int64{"a": 1100}, wait: map[string]time.Duration{"a": time.Second}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
			s := tenancy.NewWorkShares(rate, burst, clock.now)
			for i, st := range tt.steps {
				clock.advance(st.advance)
				for ns, units := range st.charge {
					s.Charge(ns, units)
				}
				for ns, want := range st.wait {
					if got := s.Wait(ns); got != want {
						t.Errorf("step %d: Wait(%q) = %v, want %v", i, ns, got, want)
					}
				}
			}
		})
	}
}

// A namespace that has earned its burst back is forgotten: memory follows
// the namespaces that read recently.
func TestSharesForgetIdleNamespaces(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	s := tenancy.NewWorkShares(100, 1000, clock.now)
	s.Charge("a", 500)
	if s.Tracked() != 1 {
		t.Fatalf("tracked %d namespaces, want 1", s.Tracked())
	}
	clock.advance(5 * time.Second)
	if s.Wait("a") != 0 || s.Tracked() != 0 {
		t.Errorf("a full bucket is still tracked (%d)", s.Tracked())
	}
}

// nil WorkShares bound nothing, so that a reconciler built without them works.
func TestNilSharesNeverWait(t *testing.T) {
	var s *tenancy.WorkShares
	s.Charge("a", 1<<40)
	if s.Wait("a") != 0 {
		t.Error("nil WorkShares made a namespace wait")
	}
}
