package fairqueue

import (
	"slices"
	"testing"
	"time"
)

// The parked items come out by the time they are due, those due at once in
// the order they were parked; an item parked again moves, and one removed
// is gone: one entry per item, however often it is parked.
func TestParkedTimesOrderByDueTime(t *testing.T) {
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
	var p parkedTimes
	for _, step := range []struct {
		name      string
		at        int
		wantFirst bool
	}{{"a", 3, true}, {"b", 1, true}, {"c", 2, false}, {"d", 2, false}, {"a", 0, true}, {"e", 5, false}, {"e", 4, false}} {
		if first := p.set(request("ns", step.name), at(step.at)); first != step.wantFirst {
			t.Errorf("parking %s at %ds: first %v, want %v", step.name, step.at, first, step.wantFirst)
		}
	}
	p.remove(request("ns", "b"))
	p.remove(request("ns", "gone"))
	var got []string
	for {
		item, _, ok := p.first()
		if !ok {
			break
		}
		got = append(got, item.Name)
		p.remove(item)
	}
	if want := []string{"a", "c", "d", "e"}; !slices.Equal(got, want) {
		t.Errorf("came out %v, want %v", got, want)
	}
	if len(p.index) != 0 {
		t.Errorf("entries left: %v", p.index)
	}
}
