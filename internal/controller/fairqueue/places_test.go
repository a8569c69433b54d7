package fairqueue

import "testing"

// Each tenant's items get places counted among its own: another tenant's
// first item has place 0 however many the first has queued; an item queued
// again keeps its place, and a tenant whose items were all taken starts
// again from 0.
func TestFairQueuePlacesItemsPerTenant(t *testing.T) {
	type step struct {
		op, tenant, key string
		want            int
	}
	cases := []struct {
		name  string
		steps []step
	}{{
		name: "a burst and a newcomer",
		steps: []step{{"queue", "busy", "a", 0}, {"queue", "busy", "b", 1}, {"queue", "busy", "c", 2},
			{"queue", "other", "new", 0}, {"queue", "busy", "d", 3}},
	}, {
		name:  "queued again keeps its place",
		steps: []step{{"queue", "ns", "a", 0}, {"queue", "ns", "b", 1}, {"queue", "ns", "a", 0}},
	}, {
		name: "taken items make room",
		steps: []step{{"queue", "ns", "a", 0}, {"queue", "ns", "b", 1}, {"taken", "ns", "a", 0}, {"queue", "ns", "c", 1},
			{"taken", "ns", "b", 0}, {"taken", "ns", "c", 0}, {"queue", "ns", "d", 0}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := newPlaces[string]()
			for i, s := range tc.steps {
				switch s.op {
				case "queue":
					if got := q.Queue(s.tenant, s.key); got != s.want {
						t.Fatalf("step %d: %s/%s placed %d, want %d", i, s.tenant, s.key, got, s.want)
					}
				case "taken":
					q.Taken(s.tenant, s.key)
				}
			}
		})
	}
	q := newPlaces[string]()
	q.Queue("ns", "a")
	q.Taken("ns", "a")
	if len(q.queued) != 0 {
		t.Errorf("a tenant with nothing queued is remembered: %v", q.queued)
	}
}
