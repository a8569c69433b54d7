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

func TestListPages(t *testing.T) {
	for _, tt := range []struct {
		name               string
		last, others, most int
		want               int
	}{
		{"never read: its first page", 0, 2, 10, 1},
		{"one page", 1, 2, 10, 1},
		{"two pages beside the two management calls", 2, 2, 10, 2},
		{"as many as fit in a batch", 20, 2, 10, 8},
		{"a batch full of others still reserves the first page", 5, 10, 10, 1},
		{"no limit", 30, 2, 0, 30},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := alerts.ListPages(tt.last, tt.others, tt.most); got != tt.want {
				t.Errorf("alerts.ListPages(%d, %d, %d) = %d, want %d", tt.last, tt.others, tt.most, got, tt.want)
			}
		})
	}
}

func TestMayWaitForPage(t *testing.T) {
	const s = time.Second
	for _, tt := range []struct {
		name                      string
		waited, wait, every, left time.Duration
		want                      bool
	}{
		{"no wait", 0, 0, 30 * s, 10 * s, true},
		{"2 s of a 30 s interval, 2 min to the deadline", 0, 2 * s, 30 * s, 120 * s, true},
		{"a quarter of the interval", 5 * s, 2500 * time.Millisecond, 30 * s, 120 * s, true},
		{"more than a quarter of the interval", 6 * s, 2 * s, 30 * s, 120 * s, false},
		{"the wait alone is longer than a quarter", 0, 11 * s, 30 * s, 120 * s, false},
		{"more than half the time to the deadline", 0, 3 * s, 30 * s, 5 * s, false},
		{"no deadline", 0, 5 * s, 60 * s, 0, true},
		{"a long interval waits longer", 10 * s, 20 * s, 5 * time.Minute, 120 * s, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := alerts.MayWaitForPage(tt.waited, tt.wait, tt.every, tt.left); got != tt.want {
				t.Errorf("alerts.MayWaitForPage(%v, %v, %v, %v) = %v, want %v", tt.waited, tt.wait, tt.every, tt.left, got, tt.want)
			}
		})
	}
}
