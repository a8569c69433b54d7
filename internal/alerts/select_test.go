package alerts_test

import (
	"fmt"
	"reflect"
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

func TestMatches(t *testing.T) {
	for _, tt := range []struct {
		name string
		sel  *swv1.AlertSelector
		tags []string
		want bool
	}{
		{"no selector", nil, nil, false},
		{"all", &swv1.AlertSelector{All: true}, nil, true},
		{"name", &swv1.AlertSelector{Name: "Ingest*"}, nil, true},
		{"name and every tag", &swv1.AlertSelector{Name: "Ingest*", Tags: []string{"pipes", "ingest"}}, []string{"ingest", "pipes", "x"}, true},
		{"a tag missing", &swv1.AlertSelector{Tags: []string{"pipes", "errors"}}, []string{"pipes"}, false},
		{"tags are case-sensitive", &swv1.AlertSelector{Tags: []string{"Pipes"}}, []string{"pipes"}, false},
		{"empty selector matches nothing", &swv1.AlertSelector{}, []string{"pipes"}, false},
	} {
		if got := alerts.Matches(tt.sel, "Ingest lag", tt.tags); got != tt.want {
			t.Errorf("%s: Matches = %v, want %v", tt.name, got, tt.want)
		}
	}
	longest, longer := strings.Repeat("x", alerts.MaxNameBytes), strings.Repeat("x", alerts.MaxNameBytes+1)
	for _, tt := range []struct {
		name string
		sel  *swv1.AlertSelector
		s    string
		want bool
	}{
		{"a name of MaxNameBytes", &swv1.AlertSelector{Name: "*x"}, longest, true},
		{"a longer name matches no pattern", &swv1.AlertSelector{Name: "*x"}, longer, false},
		{"its tags still select it", &swv1.AlertSelector{Tags: []string{"pipes"}}, longer, true},
		{"as does all", &swv1.AlertSelector{All: true}, longer, true},
	} {
		if got := alerts.Compile(tt.sel).Matches(tt.s, []string{"pipes"}); got != tt.want {
			t.Errorf("%s: Matches = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func listed(id, name string, tags ...string) cloudapi.AlertResult {
	return cloudapi.AlertResult{Alert: swv1.AlertStatus{ID: id, Name: ptr.To(name), Tags: tags}}
}

// indexOf is the index of listing as a read for needs keeps it, each id
// handed once, the first time it is listed, as alerts.ReadAll does.
func indexOf(listing []cloudapi.AlertResult, stopped string, needs ...alerts.Need) *alerts.Index {
	c := alerts.NewFilter(needs, 1<<20).Collect()
	seen := map[string]bool{}
	for i := range listing {
		if id := listing[i].Alert.ID; !seen[id] {
			seen[id] = true
			c.Keep(&listing[i])
		}
	}
	return c.Index(len(seen), func(id string) bool { return seen[id] }, stopped)
}

// ids of entries as "id by error-reason".
func summary(entries []alerts.Entry) []string {
	var out []string
	for _, e := range entries {
		s := e.ID + " " + e.SelectedBy
		if e.Failed != nil {
			s += " " + e.Failed.Reason
		}
		out = append(out, s)
	}
	return out
}

func TestPick(t *testing.T) {
	listing := []cloudapi.AlertResult{listed("c", "Error rate", "errors"), listed("a", "Ingest lag", "pipes"), listed("b", "Pipe paused", "pipes"), listed("a", "duplicate")}
	for _, tt := range []struct {
		name    string
		ids     []string
		sel     *swv1.AlertSelector
		stopped string
		want    []string
		matched int
	}{
		{"IDs in spec order, one absent", []string{"c", "x", "a"}, nil, "", []string{"c ID", "x ID NotFound", "a ID"}, 0},
		{"a selector's matches by id after the IDs, not twice", []string{"b"}, &swv1.AlertSelector{Tags: []string{"pipes"}}, "", []string{"b ID", "a Selector"}, 1},
		{"all", nil, &swv1.AlertSelector{All: true}, "", []string{"a Selector", "b Selector", "c Selector"}, 3},
		{"an absent ID when paging stopped is not known gone", []string{"x"}, nil, "the host repeated a page", []string{"x ID InvalidResponse"}, 0},
		{"an ID that cannot be a path segment", []string{"../.."}, nil, "", []string{"../.. ID ConfigurationError"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := alerts.Pick(tt.ids, tt.sel, indexOf(listing, tt.stopped, alerts.Need{IDs: tt.ids, Selector: tt.sel}))
			if !slices.Equal(summary(got.Entries), tt.want) || got.Matched != tt.matched {
				t.Errorf("Pick = %q (%d matched), want %q (%d)", summary(got.Entries), got.Matched, tt.want, tt.matched)
			}
		})
	}
	if a := alerts.Pick([]string{"a"}, nil, indexOf(listing, "", alerts.Need{IDs: []string{"a"}})).Entries[0].Alert; ptr.Deref(a.Name, "") != "Ingest lag" {
		t.Errorf("an ID listed twice reads %v, want the first seen", a.Name)
	}
}

// A selector that matches more than MaxSelected keeps MaxSelected entries
// and counts every match, so the summary and StatusTruncated tell the rest.
func TestPickBoundsTheSelected(t *testing.T) {
	var listing []cloudapi.AlertResult
	for i := range alerts.MaxSelected + 5 {
		listing = append(listing, listed(fmt.Sprintf("%06d", i), "n"))
	}
	got := alerts.Pick(nil, &swv1.AlertSelector{All: true}, indexOf(listing, "", alerts.Need{Selector: &swv1.AlertSelector{All: true}}))
	if len(got.Entries) != alerts.MaxSelected || got.Matched != alerts.MaxSelected+5 {
		t.Fatalf("%d entries, %d matched; want %d and %d", len(got.Entries), got.Matched, alerts.MaxSelected, alerts.MaxSelected+5)
	}
	s := swv1.ServiceWatchStatus{Summary: &swv1.Summary{}}
	alerts.Apply(&s, got.Entries, got.Matched, swv1.AlertsReadByList)
	if s.Summary.Alerts != int32(alerts.MaxSelected+5) {
		t.Errorf("summary.alerts = %d, want every match", s.Summary.Alerts)
	}
}

// Reading a list charges what its selectors cost: every alert each is
// tried on, and the steps of matching its name, so that a host's long
// names cost the namespace of the watches that match them, and no more
// than MaxNameBytes of each name.
func TestKeepChargesTheSelection(t *testing.T) {
	sel := &swv1.AlertSelector{Name: "*" + strings.Repeat("a?", 127) + "b*"}
	work := func(sel *swv1.AlertSelector, n, nameBytes int) int64 {
		var needs []alerts.Need
		if sel != nil {
			needs = append(needs, alerts.Need{Selector: sel})
		}
		c := alerts.NewFilter(needs, 1<<20).Collect()
		var total int64
		for i := range n {
			a := listed(fmt.Sprintf("%06d", i), strings.Repeat("a", nameBytes))
			total += int64(c.Keep(&a))
		}
		return total
	}
	short, long := work(sel, 1000, 32), work(sel, 1000, alerts.MaxNameBytes)
	if short < 1000*alerts.SelectWorkPerAlert {
		t.Errorf("1000 alerts of short names cost %d units, want at least %d a alert", short, alerts.SelectWorkPerAlert)
	}
	// The matcher takes 4 steps a byte for this pattern (one a word of
	// Shift-And), and one to check the name is UTF-8.
	if want := int64(1000 * 5 * alerts.MaxNameBytes / alerts.SelectStepsPerUnit); long < want {
		t.Errorf("1000 alerts of %d-byte names cost %d units, want at least %d", alerts.MaxNameBytes, long, want)
	}
	if hostile := work(sel, 4, 4<<20); hostile > 4*alerts.SelectWorkPerAlert {
		t.Errorf("4 names of 4 MiB cost %d units, want %d: beyond MaxNameBytes a name is not read", hostile, 4*alerts.SelectWorkPerAlert)
	}
	if none := work(nil, 1000, 32); none != 0 {
		t.Errorf("no selector cost %d units, want 0", none)
	}
}

// Apply keeps a failed entry's last good fetch, a later one as it was, and
// writes selectedBy and alertsReadBy; Tell names the failing IDs and a
// stop of paging.
func TestApplyAndTell(t *testing.T) {
	s := swv1.ServiceWatchStatus{Summary: &swv1.Summary{}, Alerts: []swv1.AlertStatus{
		{ID: "a", Name: ptr.To("old a")}, {ID: "b", Name: ptr.To("old b")}, {ID: "gone", Name: ptr.To("no longer selected")},
	}}
	notFound := &alerts.ReadError{Reason: swv1.ReasonNotFound, Message: "no such alert"}
	entries := []alerts.Entry{
		{ID: "a", SelectedBy: swv1.SelectedByID, Failed: notFound},
		{ID: "b", SelectedBy: swv1.SelectedByID, Later: true},
		{ID: "c", SelectedBy: swv1.SelectedBySelector, Alert: &swv1.AlertStatus{ID: "c", Name: ptr.To("new c")}},
	}
	alerts.Apply(&s, entries, 1, swv1.AlertsReadByList)
	want := []swv1.AlertStatus{
		{ID: "a", SelectedBy: "ID", Name: ptr.To("old a"), Error: "NotFound: no such alert"},
		{ID: "b", SelectedBy: "ID", Name: ptr.To("old b")},
		{ID: "c", SelectedBy: "Selector", Name: ptr.To("new c")},
	}
	if !reflect.DeepEqual(s.Alerts, want) || s.AlertsReadBy != "List" || s.Summary.Alerts != 2 {
		t.Errorf("status alerts %v (%s, %d), want %v (List, 2)", s.Alerts, s.AlertsReadBy, s.Summary.Alerts, want)
	}
	told := alerts.Tell(entries, "the host repeated the page at offset 1000")
	if f := told.Failure; f == nil || f.Reason != swv1.ReasonInvalidResponse ||
		!strings.Contains(f.Message, "paging the host's alert list stopped before its end: the host repeated") || !strings.Contains(f.Message, "1 of 3 alerts failed: a (NotFound") {
		t.Errorf("Tell = %+v", f)
	}
	if told := alerts.Tell(entries[1:], ""); told.Failure != nil || !strings.HasPrefix(told.Message, "Fetched 1 of 2 alerts") {
		t.Errorf("Tell of a batch = %+v", told)
	}
}

// A list is reused for 90 % of a watch's interval, never by a sync the user
// asked for; alerts from the management API are read there with the key,
// for the watch's service.
func TestListAgeAndSource(t *testing.T) {
	if got := alerts.ListAge(30*time.Second, false); got != 27*time.Second {
		t.Errorf("ListAge(30s) = %s, want 27s", got)
	}
	if got := alerts.ListAge(30*time.Second, true); got >= 0 {
		t.Errorf("ListAge of a requested sync = %s, want negative (join a read under way only)", got)
	}
	spec := &swv1.ServiceWatchSpec{OrganizationID: "org", ServiceID: "svc", AlertsFrom: swv1.AlertsFromManagementAPI}
	key := cloudapi.NewBasicCredentials("id", "secret")
	src := alerts.Source(spec, "https://api.example.com", cloudapi.BearerToken{}, key)
	if src.API != cloudapi.APIManagement || src.OrganizationID != "org" || src.ServiceID != "svc" || cloudapi.DigestOf(src.Key) != cloudapi.DigestOf(key) {
		t.Errorf("Source from the management API = %+v", src)
	}
	spec.AlertsFrom = swv1.AlertsFromAlertAPI
	if src := alerts.Source(spec, "https://alerts.example.com", cloudapi.NewBearerToken("t"), key); src.API != cloudapi.APIAlert || src.BaseURL != "https://alerts.example.com" {
		t.Errorf("Source from the alert API = %+v", src)
	}
}

// spec.alertSelector.name matches what it matched while status showed
// displayName under name: the displayName when not empty, else the name,
// so that showing each under the cloud's own member changes no selection.
func TestASelectorMatchesTheDisplayNameFirst(t *testing.T) {
	named := func(id string, name, display *string) cloudapi.AlertResult {
		return cloudapi.AlertResult{Alert: swv1.AlertStatus{ID: id, Name: name, DisplayName: display}}
	}
	listing := []cloudapi.AlertResult{
		named("both", ptr.To("ingest_lag"), ptr.To("Ingest lag")),
		named("display-only", nil, ptr.To("Ingest errors")),
		named("name-only", ptr.To("Ingest paused"), nil),
		named("empty-display", ptr.To("Ingest stalled"), ptr.To("")),
	}
	for _, tt := range []struct {
		pattern string
		want    []string
	}{
		{"Ingest*", []string{"both Selector", "display-only Selector", "empty-display Selector", "name-only Selector"}},
		{"ingest_*", nil},
	} {
		sel := &swv1.AlertSelector{Name: tt.pattern}
		got := alerts.Pick(nil, sel, indexOf(listing, "", alerts.Need{Selector: sel}))
		if !slices.Equal(summary(got.Entries), tt.want) {
			t.Errorf("name %q picks %q, want %q", tt.pattern, summary(got.Entries), tt.want)
		}
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
