package alertselect_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/alertselect"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

func TestGlob(t *testing.T) {
	for _, tt := range []struct {
		pattern, s string
		want       bool
	}{
		{"prod-*", "prod-latency", true},
		{"prod-*", "staging-latency", false},
		{"*latency*", "p95 latency high", true},
		{"*", "", true},
		{"", "", true},
		{"", "x", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"[a]", "[a]", true}, // brackets are themselves: every pattern is valid
		{"Ingest*", "ingest lag", false},
		{"*a*a*a*a*b", strings.Repeat("a", 200), false},
		{"é?", "éè", true},
	} {
		if got := alertselect.Glob(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Glob(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

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
		if got := alertselect.Matches(tt.sel, "Ingest lag", tt.tags); got != tt.want {
			t.Errorf("%s: Matches = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func listed(id, name string, tags ...string) cloudapi.AlertResult {
	return cloudapi.AlertResult{Alert: swv1.AlertStatus{ID: id, Name: ptr.To(name), Tags: tags}}
}

// indexOf is the index of listing as a read for needs keeps it, each id
// handed once, the first time it is listed, as alertlist.ReadAll does.
func indexOf(listing []cloudapi.AlertResult, stopped string, needs ...alertselect.Need) *alertselect.Index {
	c := alertselect.NewFilter(needs, 1<<20).Collect()
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
func summary(entries []alertselect.Entry) []string {
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
			got := alertselect.Pick(tt.ids, tt.sel, indexOf(listing, tt.stopped, alertselect.Need{IDs: tt.ids, Selector: tt.sel}))
			if !slices.Equal(summary(got.Entries), tt.want) || got.Matched != tt.matched {
				t.Errorf("Pick = %q (%d matched), want %q (%d)", summary(got.Entries), got.Matched, tt.want, tt.matched)
			}
		})
	}
	if a := alertselect.Pick([]string{"a"}, nil, indexOf(listing, "", alertselect.Need{IDs: []string{"a"}})).Entries[0].Alert; ptr.Deref(a.Name, "") != "Ingest lag" {
		t.Errorf("an ID listed twice reads %v, want the first seen", a.Name)
	}
}

// A selector that matches more than MaxSelected keeps MaxSelected entries
// and counts every match, so the summary and StatusTruncated tell the rest.
func TestPickBoundsTheSelected(t *testing.T) {
	var listing []cloudapi.AlertResult
	for i := range alertselect.MaxSelected + 5 {
		listing = append(listing, listed(fmt.Sprintf("%06d", i), "n"))
	}
	got := alertselect.Pick(nil, &swv1.AlertSelector{All: true}, indexOf(listing, "", alertselect.Need{Selector: &swv1.AlertSelector{All: true}}))
	if len(got.Entries) != alertselect.MaxSelected || got.Matched != alertselect.MaxSelected+5 {
		t.Fatalf("%d entries, %d matched; want %d and %d", len(got.Entries), got.Matched, alertselect.MaxSelected, alertselect.MaxSelected+5)
	}
	s := swv1.ServiceWatchStatus{Summary: &swv1.Summary{}}
	alertselect.Apply(&s, got.Entries, got.Matched, swv1.AlertsReadByList)
	if s.Summary.Alerts != int32(alertselect.MaxSelected+5) {
		t.Errorf("summary.alerts = %d, want every match", s.Summary.Alerts)
	}
}

// Apply keeps a failed entry's last good fetch, a later one as it was, and
// writes selectedBy and alertsReadBy; Tell names the failing IDs and a
// stop of paging.
func TestApplyAndTell(t *testing.T) {
	s := swv1.ServiceWatchStatus{Summary: &swv1.Summary{}, Alerts: []swv1.AlertStatus{
		{ID: "a", Name: ptr.To("old a")}, {ID: "b", Name: ptr.To("old b")}, {ID: "gone", Name: ptr.To("no longer selected")},
	}}
	notFound := &alertselect.ReadError{Reason: swv1.ReasonNotFound, Message: "no such alert"}
	entries := []alertselect.Entry{
		{ID: "a", SelectedBy: swv1.SelectedByID, Failed: notFound},
		{ID: "b", SelectedBy: swv1.SelectedByID, Later: true},
		{ID: "c", SelectedBy: swv1.SelectedBySelector, Alert: &swv1.AlertStatus{ID: "c", Name: ptr.To("new c")}},
	}
	alertselect.Apply(&s, entries, 1, swv1.AlertsReadByList)
	want := []swv1.AlertStatus{
		{ID: "a", SelectedBy: "ID", Name: ptr.To("old a"), Error: "NotFound: no such alert"},
		{ID: "b", SelectedBy: "ID", Name: ptr.To("old b")},
		{ID: "c", SelectedBy: "Selector", Name: ptr.To("new c")},
	}
	if !reflect.DeepEqual(s.Alerts, want) || s.AlertsReadBy != "List" || s.Summary.Alerts != 2 {
		t.Errorf("status alerts %v (%s, %d), want %v (List, 2)", s.Alerts, s.AlertsReadBy, s.Summary.Alerts, want)
	}
	told := alertselect.Tell(entries, "the host repeated the page at offset 1000")
	if f := told.Failure; f == nil || f.Reason != swv1.ReasonInvalidResponse ||
		!strings.Contains(f.Message, "paging the host's alert list stopped before its end: the host repeated") || !strings.Contains(f.Message, "1 of 3 alerts failed: a (NotFound") {
		t.Errorf("Tell = %+v", f)
	}
	if told := alertselect.Tell(entries[1:], ""); told.Failure != nil || !strings.HasPrefix(told.Message, "Fetched 1 of 2 alerts") {
		t.Errorf("Tell of a batch = %+v", told)
	}
}

// A list is reused for 90 % of a watch's interval, never by a sync the user
// asked for; alerts from the management API are read there with the key,
// for the watch's service.
func TestListAgeAndSource(t *testing.T) {
	if got := alertselect.ListAge(30*time.Second, false); got != 27*time.Second {
		t.Errorf("ListAge(30s) = %s, want 27s", got)
	}
	if got := alertselect.ListAge(30*time.Second, true); got >= 0 {
		t.Errorf("ListAge of a requested sync = %s, want negative (join a read under way only)", got)
	}
	spec := &swv1.ServiceWatchSpec{OrganizationID: "org", ServiceID: "svc", AlertsFrom: swv1.AlertsFromManagementAPI}
	key := cloudapi.NewBasicCredentials("id", "secret")
	src := alertselect.Source(spec, "https://api.example.com", cloudapi.BearerToken{}, key)
	if src.API != cloudapi.APIManagement || src.OrganizationID != "org" || src.ServiceID != "svc" || cloudapi.DigestOf(src.Key) != cloudapi.DigestOf(key) {
		t.Errorf("Source from the management API = %+v", src)
	}
	spec.AlertsFrom = swv1.AlertsFromAlertAPI
	if src := alertselect.Source(spec, "https://alerts.example.com", cloudapi.NewBearerToken("t"), key); src.API != cloudapi.APIAlert || src.BaseURL != "https://alerts.example.com" {
		t.Errorf("Source from the alert API = %+v", src)
	}
}
