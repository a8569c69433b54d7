package alerts_test

import (
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/alerts"
)

// PagesFor counts the calls ReadAll makes of a list standing still: its
// pages overlap by one alert.
func TestPagesFor(t *testing.T) {
	for _, tt := range []struct {
		total, limit, want int
	}{
		{0, 1000, 1},
		{12, 1000, 1},
		{1000, 1000, 1},
		{1001, 1000, 2},
		{1200, 1000, 2},
		{1999, 1000, 2},
		{2000, 1000, 3},
		{1200, 0, 2}, // the hosts' default limit
		{25, 10, 3},  // 10, then 9 more, then 9 more
		{5, 1, 1},
	} {
		if got := alerts.PagesFor(tt.total, tt.limit); got != tt.want {
			t.Errorf("PagesFor(%d, %d) = %d, want %d", tt.total, tt.limit, got, tt.want)
		}
	}
}

// PagesFor agrees with ReadAll: the calls it makes of lists of many sizes.
func TestPagesForCountsReadAllsCalls(t *testing.T) {
	for _, total := range []int{0, 1, 9, 10, 11, 19, 20, 28, 29, 100} {
		h := &host{ids: alertIDs(total), limit: 10}
		got, _, err := readAll(t.Context(), 10, h.fetch)
		if err != nil {
			t.Fatal(err)
		}
		if want := alerts.PagesFor(total, 10); got.Pages != want {
			t.Errorf("a list of %d read in pages of 10: %d calls, PagesFor says %d", total, got.Pages, want)
		}
	}
}

// A list's page count is kept for the time asked, a later note replaces
// it, and counts past their time go at the next note.
func TestPageCountsKeepTheLastReadsCountForAWhile(t *testing.T) {
	now := time.Date(2026, 11, 28, 21, 0, 0, 0, time.UTC)
	counts := alerts.NewPageCounts[string](func() time.Time { return now })
	steps := []struct {
		advance time.Duration
		note    string
		pages   int
		want    map[string]int
		kept    int
	}{
		{0, "", 0, map[string]int{"a": 0, "b": 0}, 0},
		{0, "a", 2, map[string]int{"a": 2, "b": 0}, 1},
		{time.Minute, "b", 0, map[string]int{"a": 2, "b": 1}, 2}, // a read is at least one call
		{time.Minute, "a", 3, map[string]int{"a": 3, "b": 1}, 2},
		{2*time.Minute + time.Second, "", 0, map[string]int{"a": 3, "b": 0}, 2}, // b's time is up
		{0, "c", 1, map[string]int{"a": 3, "b": 0, "c": 1}, 2},                  // and it goes
		{2 * time.Minute, "", 0, map[string]int{"a": 0, "c": 1}, 2},
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		if s.note != "" {
			counts.Note(s.note, s.pages, 3*time.Minute)
		}
		for key, want := range s.want {
			if got := counts.Of(key); got != want {
				t.Errorf("step %d: pages of %q = %d, want %d", i, key, got, want)
			}
		}
		if got := counts.Len(); got != s.kept {
			t.Errorf("step %d: %d counts kept, want %d", i, got, s.kept)
		}
	}
}
