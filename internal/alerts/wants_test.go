package alerts_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/alerts"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/testsupport/benchmem"
)

// pagedHost serves n alerts in pages of 1000, each made as it is sent
// (the host keeps nothing either): alert i is "id-<i>", named "team-a <i>"
// for every 100th alert and "other <i>" else, with a note of 1 KiB.
func pagedHost(n int) alerts.Fetch {
	note := strings.Repeat("n", 1<<10)
	return func(_ context.Context, offset int, each func(*cloudapi.AlertResult) int) (cloudapi.AlertPage, error) {
		page := cloudapi.AlertPage{Total: n, Offset: offset}
		for i := offset; i < min(n, offset+cloudapi.MaxAlertPageLimit); i++ {
			name := fmt.Sprintf("other %d", i)
			if i%100 == 0 {
				name = fmt.Sprintf("team-a %d", i)
			}
			each(&cloudapi.AlertResult{Alert: swv1.AlertStatus{ID: fmt.Sprintf("id-%06d", i), Name: ptr.To(name), Note: ptr.To(note)}})
			page.Read++
		}
		return page, nil
	}
}

// A list of 50 pages (50,000 alerts of 1 KiB, 60 MiB decoded) read for
// the watches that share it keeps what they use, not the list: the alerts
// they name and their selectors' first matches, found all the same, with
// every match counted.
func TestAListKeepsOnlyWhatItsWatchesUse(t *testing.T) {
	const n = 50_000
	named := []string{"id-000007", "id-049999", "id-025000"}
	needs := []alerts.Need{
		{IDs: named},
		{IDs: []string{"id-000100"}, Selector: &swv1.AlertSelector{Name: "team-a *"}},
		{Selector: &swv1.AlertSelector{Name: "team-a 4*"}},
	}
	var idx *alerts.Index
	grew := benchmem.Growth(func() {
		c := alerts.NewFilter(needs, 800<<10).Collect()
		l, err := alerts.ReadAll(t.Context(), cloudapi.MaxAlertPageLimit, pagedHost(n), c.Keep)
		if err != nil {
			t.Fatal(err)
		}
		if l.Read != n || l.Pages != 51 || l.Stopped != "" {
			t.Fatalf("read %d alerts in %d pages, stopped %q", l.Read, l.Pages, l.Stopped)
		}
		idx = c.Index(l.Read, l.Seen.Has, l.Stopped)
	})
	t.Logf("the index of a list of %d alerts holds %d KiB", n, grew>>10)
	if grew > 4<<20 {
		t.Errorf("the index of the list holds %d KiB, want at most 4 MiB: it keeps what the watches use, not the list", grew>>10)
	}

	got := alerts.Pick(named, nil, idx)
	if want := []string{"id-000007 ID", "id-049999 ID", "id-025000 ID"}; !slices.Equal(summary(got.Entries), want) {
		t.Errorf("named: %q, want %q", summary(got.Entries), want)
	}
	got = alerts.Pick([]string{"id-000100"}, &swv1.AlertSelector{Name: "team-a *"}, idx)
	// 500 alerts match; the one named is the watch's by ID.
	if got.Matched != 499 || len(got.Entries) != 500 || got.Entries[1].ID != "id-000000" || got.Entries[2].ID != "id-000200" {
		t.Errorf("team-a *: %d entries (%v...), %d matched; want the ID then 499 matches by id", len(got.Entries), summary(got.Entries[:min(3, len(got.Entries))]), got.Matched)
	}
	got = alerts.Pick(nil, &swv1.AlertSelector{Name: "team-a 4*"}, idx)
	if got.Matched != 111 || len(got.Entries) != 111 { // 4, 40..49, 400..499 hundreds
		t.Errorf("team-a 4*: %d entries, %d matched; want 111", len(got.Entries), got.Matched)
	}
	runtime.KeepAlive(idx)
}

// A selector's matches are kept in id order up to MaxSelected and, in
// bytes, to what a need may keep; every match is counted, so the summary
// and StatusTruncated tell the rest.
func TestASelectorKeepsItsFirstMatchesWithinItsBytes(t *testing.T) {
	all := &swv1.AlertSelector{All: true}
	for _, tt := range []struct {
		name      string
		needBytes int
		want      int
	}{
		{"count bound", 64 << 20, alerts.MaxSelected},
		{"byte bound", 100 << 10, -1}, // fewer, set below
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := alerts.NewFilter([]alerts.Need{{Selector: all}}, tt.needBytes).Collect()
			l, err := alerts.ReadAll(t.Context(), 0, pagedHost(5000), c.Keep)
			if err != nil {
				t.Fatal(err)
			}
			got := alerts.Pick(nil, all, c.Index(l.Read, l.Seen.Has, l.Stopped))
			if got.Matched != 5000 {
				t.Errorf("%d matched, want 5000", got.Matched)
			}
			if tt.want > 0 && len(got.Entries) != tt.want || tt.want < 0 && (len(got.Entries) == 0 || len(got.Entries) >= 100) {
				t.Errorf("%d entries kept", len(got.Entries))
			}
			for i, e := range got.Entries {
				if e.ID != fmt.Sprintf("id-%06d", i) {
					t.Fatalf("entry %d is %s: not the first matches by id", i, e.ID)
				}
			}
		})
	}
}

// An ID that a list read but did not keep (the watch named it after the
// read) is to be read on its own, never NotFound; one the list never had
// is NotFound; a selector the list was not read for is not served.
func TestAListNeverCallsMissingWhatItDidNotKeep(t *testing.T) {
	c := alerts.NewFilter([]alerts.Need{{IDs: []string{"id-000001"}}}, 1<<20).Collect()
	l, err := alerts.ReadAll(t.Context(), 0, pagedHost(3000), c.Keep)
	if err != nil {
		t.Fatal(err)
	}
	idx := c.Index(l.Read, l.Seen.Has, l.Stopped)
	got := alerts.Pick([]string{"id-000001", "id-002500", "absent"}, nil, idx)
	if want := []string{"id-000001 ID", "id-002500 ID", "absent ID NotFound"}; !slices.Equal(summary(got.Entries), want) || !slices.Equal(got.Unread, []int{1}) {
		t.Errorf("%q, unread %v; want %q and the second unread", summary(got.Entries), got.Unread, want)
	}
	if got.Entries[1].Alert != nil || got.Entries[1].Failed != nil {
		t.Error("the ID not kept has an alert or a failure")
	}
	if idx.Serves(alerts.Need{Selector: &swv1.AlertSelector{All: true}}) || !idx.Serves(alerts.Need{IDs: []string{"x"}}) {
		t.Error("Serves: a selector not read for is served, or IDs are not")
	}
}

// Needs are registered per watch under one list at a time, forgotten with
// the watch and after the time they were registered for.
func TestNeedsAreForgotten(t *testing.T) {
	now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	needs := alerts.NewNeeds[string](func() time.Time { return now })
	needs.Register("ns/a", "host-1", alerts.Need{IDs: []string{"1"}}, time.Minute)
	needs.Register("ns/b", "host-1", alerts.Need{IDs: []string{"2"}}, time.Hour)
	needs.Register("ns/c", "host-1", alerts.Need{IDs: []string{"3"}}, time.Hour)
	needs.Register("ns/c", "host-2", alerts.Need{IDs: []string{"3"}}, time.Hour) // moved
	if got := needs.Of("host-1"); len(got) != 2 {
		t.Errorf("host-1 has %d needs, want a's and b's", len(got))
	}
	needs.Forget("ns/b")
	now = now.Add(time.Minute)
	if got := needs.Of("host-1"); len(got) != 0 || needs.Len() != 1 {
		t.Errorf("host-1 has %d needs and %d are remembered; want none and c's", len(got), needs.Len())
	}
}
