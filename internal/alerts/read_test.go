package alerts_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/alerts"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// host is a fake list host: its alerts in the cloud's order, served in
// pages of limit. change, when set, edits the list before each call after
// the first (the alerts created or deleted between two page reads).
type host struct {
	ids          []string
	limit        int
	ignoreOffset bool
	noMeta       bool
	change       func(call int, ids []string) []string
	fail         map[int]error // by call, from 1
	calls        []int         // the offsets asked
}

func (h *host) fetch(_ context.Context, offset int, each func(*cloudapi.AlertResult) int) (cloudapi.AlertPage, error) {
	h.calls = append(h.calls, offset)
	call := len(h.calls)
	if h.change != nil && call > 1 {
		h.ids = h.change(call, h.ids)
	}
	if err := h.fail[call]; err != nil {
		return cloudapi.AlertPage{}, err
	}
	if h.ignoreOffset {
		offset = 0
	}
	page := cloudapi.AlertPage{Total: len(h.ids), Offset: offset}
	if h.noMeta {
		page.Total, offset = -1, 0
	}
	end := len(h.ids)
	if !h.noMeta {
		end = min(end, offset+h.limit)
	}
	for _, id := range h.ids[min(offset, end):end] {
		each(&cloudapi.AlertResult{Alert: swv1.AlertStatus{ID: id}})
		page.Read++
	}
	return page, nil
}

// readAll is alerts.ReadAll keeping every alert's id, in the order kept.
func readAll(ctx context.Context, limit int, fetch alerts.Fetch) (alerts.Listing, []string, error) {
	var ids []string
	l, err := alerts.ReadAll(ctx, limit, fetch, func(a *cloudapi.AlertResult) int {
		ids = append(ids, a.Alert.ID)
		return 0
	})
	return l, ids, err
}

// alertIDs returns the ids a0 .. a(n-1).
func alertIDs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("a%d", i)
	}
	return out
}

// without returns ids without those of remove.
func without(ids []string, remove ...string) []string {
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return slices.Contains(remove, id) })
}

// ReadAll reads every alert present before and after a change once, in
// the order first seen (an alert deleted after it was read stays read);
// the cost in calls stays close to one per page.
func TestReadAllReadsEachAlertOnce(t *testing.T) {
	tests := []struct {
		name  string
		host  host
		want  []string // nil: every id of the host's final list
		calls []int
	}{
		{"one page", host{ids: alertIDs(3), limit: 10}, nil, []int{0}},
		{"an empty list", host{ids: nil, limit: 10}, nil, []int{0}},
		{"exactly one page", host{ids: alertIDs(10), limit: 10}, nil, []int{0}},
		{"three pages, each overlapping the one before by one alert", host{ids: alertIDs(25), limit: 10}, nil, []int{0, 9, 18}},
		{"no meta: the first page is the whole list", host{ids: alertIDs(25), limit: 10, noMeta: true}, nil, []int{0}},
		{"an alert created before the next page: the page begins one later, nothing lost or doubled",
			host{ids: alertIDs(25), limit: 10, change: func(call int, ids []string) []string {
				if call == 2 {
					return append([]string{"new"}, ids...)
				}
				return ids
			}}, alertIDs(25), []int{0, 9, 18}},
		{"an alert created at the end while paging is read too",
			host{ids: alertIDs(15), limit: 10, change: func(call int, ids []string) []string {
				if call == 2 {
					return append(ids, "new")
				}
				return ids
			}}, append(alertIDs(15), "new"), []int{0, 9}},
		{"an alert deleted before the next page: a step back finds where the list goes on",
			host{ids: alertIDs(25), limit: 10, change: func(call int, ids []string) []string {
				if call == 2 {
					return without(ids, "a3")
				}
				return ids
			}}, alertIDs(25), []int{0, 9, 8, 17}},
		{"the page's last alert deleted before the next page",
			host{ids: alertIDs(25), limit: 10, change: func(call int, ids []string) []string {
				if call == 2 {
					return without(ids, "a9")
				}
				return ids
			}}, alertIDs(25), []int{0, 9, 8, 17}},
		{"half the first page deleted: steps back twice as far each time",
			host{ids: alertIDs(30), limit: 10, change: func(call int, ids []string) []string {
				if call == 2 {
					return without(ids, "a0", "a1", "a2", "a3", "a4")
				}
				return ids
			}}, []string{"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", // the first page
				"a14", "a15", "a16", "a17", "a18", "a19", "a20", "a21", "a22", "a23", // at 9: past a10 to a13
				"a13", "a11", "a12", "a10", // each step back begins earlier
				"a24", "a25", "a26", "a27", "a28", "a29"}, []int{0, 9, 8, 6, 2, 11, 20}},
		{"the list shrinks past the next page's offset",
			host{ids: alertIDs(12), limit: 10, change: func(call int, ids []string) []string {
				if call == 2 {
					return ids[9:]
				}
				return ids
			}}, []string{"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "a11", "a10"}, []int{0, 9, 8, 6, 2, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.host
			got, ids, err := readAll(t.Context(), h.limit, h.fetch)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want == nil {
				want = h.ids
			}
			if !slices.Equal(ids, want) && (len(want) != 0 || len(ids) != 0) {
				t.Errorf("alerts %v\nwant   %v", ids, want)
			}
			if got.Read != len(ids) {
				t.Errorf("read %d alerts, kept %d: want every alert read kept", got.Read, len(ids))
			}
			if got.Stopped != "" {
				t.Errorf("stopped: %s", got.Stopped)
			}
			if !slices.Equal(h.calls, tt.calls) || got.Pages != len(tt.calls) {
				t.Errorf("offsets asked %v (%d pages), want %v", h.calls, got.Pages, tt.calls)
			}
		})
	}
}

// A list that never ends stops, bounded, with the alerts read and words
// saying why: a host that ignores offset at its first repeated page, a
// list that keeps changing after a few steps back, a list longer than
// MaxPages pages at the bound.
func TestReadAllStopsWhereAListNeverEnds(t *testing.T) {
	tests := []struct {
		name    string
		host    host
		alerts  int
		pages   int
		stopped string
	}{
		{"a host that ignores offset", host{ids: alertIDs(2500), limit: 1000, ignoreOffset: true}, 1000, 2,
			"the host repeated the page at offset 999: it ignores offset; read 1000 alerts of a list of 2500"},
		{"more than MaxPages pages", host{ids: alertIDs(alerts.MaxPages*10 + 50), limit: 10}, alerts.MaxPages*9 + 1, alerts.MaxPages,
			"stopped after 100 pages, the most one read makes; read 901 alerts of a list of 1050"},
		{"a list whose every alert is replaced before each page", host{ids: alertIDs(30), limit: 10, change: func(call int, ids []string) []string {
			out := make([]string, len(ids))
			for i := range out {
				out[i] = fmt.Sprintf("c%d-%d", call, i)
			}
			return out
		}}, 120, 12,
			"the list kept changing while it was read (9 times a page began with an alert not read yet); read 120 alerts of a list of 30"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.host
			got, ids, err := readAll(t.Context(), h.limit, h.fetch)
			if err != nil {
				t.Fatal(err)
			}
			if len(ids) != tt.alerts || got.Pages != tt.pages || got.Stopped != tt.stopped {
				t.Errorf("read %d alerts in %d pages, stopped %q\nwant %d in %d, %q", len(ids), got.Pages, got.Stopped, tt.alerts, tt.pages, tt.stopped)
			}
		})
	}
}

// A page's error ends the read with that error, its class kept: the
// caller tells a host without the list route (read it one by one) from
// one that failed this time (keep the last data).
func TestReadAllEndsWithAPagesError(t *testing.T) {
	noList := &cloudapi.Error{Reason: cloudapi.ReasonEndpointNotFound, StatusCode: 404, Operation: cloudapi.OperationListAlerts, Err: cloudapi.ErrNoListRoute}
	limited := &cloudapi.Error{Reason: cloudapi.ReasonRateLimited, StatusCode: 429, Operation: cloudapi.OperationListAlerts, RetryAfter: 7 * time.Second}
	for _, tt := range []struct {
		name   string
		fail   map[int]error
		noList bool
		reason cloudapi.Reason
		text   string
	}{
		{"no list route", map[int]error{1: noList}, true, cloudapi.ReasonEndpointNotFound,
			"alert list page 1 at offset 0: list alerts: 404 EndpointNotFound: the host has no alert list route"},
		{"the second page rate limited", map[int]error{2: limited}, false, cloudapi.ReasonRateLimited,
			"alert list page 2 at offset 9: list alerts: 429 RateLimited (retry after 7s)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := host{ids: alertIDs(25), limit: 10, fail: tt.fail}
			got, _, err := readAll(t.Context(), 10, h.fetch)
			if err == nil || got.Read != 0 {
				t.Fatalf("got %d alerts, error %v", got.Read, err)
			}
			if errors.Is(err, cloudapi.ErrNoListRoute) != tt.noList || cloudapi.ReasonOf(err) != tt.reason || cloudapi.RetryAfterOf(err) != cloudapi.RetryAfterOf(tt.fail[len(h.calls)]) {
				t.Errorf("error %v: ErrNoListRoute %v, reason %s", err, errors.Is(err, cloudapi.ErrNoListRoute), cloudapi.ReasonOf(err))
			}
			if err.Error() != tt.text {
				t.Errorf("error\n got %q\nwant %q", err, tt.text)
			}
		})
	}
}

// A read whose context ends stops before its next call.
func TestReadAllHonoursItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	h := host{ids: alertIDs(25), limit: 10}
	fetch := func(ctx context.Context, offset int, each func(*cloudapi.AlertResult) int) (cloudapi.AlertPage, error) {
		cancel()
		return h.fetch(ctx, offset, each)
	}
	_, _, err := readAll(ctx, 10, fetch)
	if !errors.Is(err, context.Canceled) || len(h.calls) != 1 {
		t.Errorf("error %v after %d calls, want context.Canceled after 1", err, len(h.calls))
	}
}

// A read keeps only what Keep keeps, and tells by Seen, in 4 bytes an id,
// which ids it read: never no for one read.
func TestReadAllKeepsWhatKeepKeepsAndTellsWhatItSaw(t *testing.T) {
	h := host{ids: alertIDs(2500), limit: 1000}
	kept := 0
	got, err := alerts.ReadAll(t.Context(), 1000, h.fetch, func(a *cloudapi.AlertResult) int {
		if a.Alert.ID == "a7" || a.Alert.ID == "a2499" {
			kept++
		}
		return 0
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Read != 2500 || kept != 2 || got.Stopped != "" {
		t.Errorf("read %d, kept %d, stopped %q; want 2500 read, 2 kept", got.Read, kept, got.Stopped)
	}
	for _, id := range h.ids {
		if !got.Seen.Has(id) {
			t.Fatalf("Seen says %s was not read", id)
		}
	}
	if got.Seen.Has("never-listed") && got.Seen.Has("nor-this") {
		t.Error("Seen says two ids never listed were read")
	}
}

// A host without meta that sends more alerts than the page asked for is
// read up to the limit, and paging says so rather than claim the list whole.
func TestReadAllSaysWhenAHostWithoutMetaSentMoreThanAsked(t *testing.T) {
	fetch := func(_ context.Context, _ int, each func(*cloudapi.AlertResult) int) (cloudapi.AlertPage, error) {
		for i := range 10 {
			each(&cloudapi.AlertResult{Alert: swv1.AlertStatus{ID: fmt.Sprint(i)}})
		}
		return cloudapi.AlertPage{Total: -1, Read: 10, Beyond: 90}, nil
	}
	got, ids, err := readAll(t.Context(), 10, fetch)
	if err != nil {
		t.Fatal(err)
	}
	const want = "the host sent 90 alerts more than the 10 asked for, without the meta to page through them; read 10 alerts of a list of an unknown number of"
	if len(ids) != 10 || got.Stopped != want {
		t.Errorf("kept %d, stopped %q\nwant 10, %q", len(ids), got.Stopped, want)
	}
}

// managed is the route key of a management API list of service svc read
// with key.
func managed(key, svc string) alerts.RouteKey {
	creds := cloudapi.NewBasicCredentials("id-"+key, "secret-"+key)
	src := cloudapi.AlertSource{API: cloudapi.APIManagement, BaseURL: "https://api.example.com", Key: creds, OrganizationID: "org", ServiceID: svc}
	return alerts.RouteOf(src, cloudapi.DigestOf(creds))
}

// alertHost is the route key of the alert API's list read with token.
func alertHost(token string) alerts.RouteKey {
	src := cloudapi.AlertSource{API: cloudapi.APIAlert, BaseURL: "https://alerts.example.com", Token: cloudapi.NewBearerToken(token)}
	return alerts.RouteOf(src, cloudapi.DigestOf(src.Token))
}

// Routes remembers per key whether it lists: a key is tried with the list
// until it says it has none, then read one by one until retryAfter has
// passed since it last said so, and tried again, so that an upgraded
// server is noticed; Mode says which way and since when.
func TestRoutesRememberWhichHostsList(t *testing.T) {
	start := time.Date(2026, time.November, 27, 0, 0, 0, 0, time.UTC)
	now := start
	r := alerts.NewRoutes(func() time.Time { return now }, 10*time.Minute)
	a, b := alertHost("t"), managed("k", "svc")
	type step struct {
		after time.Duration // since start
		do    func(alerts.RouteKey)
		host  alerts.RouteKey
		use   bool
		mode  string
		since time.Duration
	}
	steps := []step{
		{0, nil, a, true, alerts.ModeList, -1},
		{0, r.NoList, a, false, alerts.ModeOneByOne, 0},
		{0, nil, b, true, alerts.ModeList, -1},
		{9 * time.Minute, nil, a, false, alerts.ModeOneByOne, 0},
		{10 * time.Minute, nil, a, true, alerts.ModeOneByOne, 0},
		{10 * time.Minute, r.NoList, a, false, alerts.ModeOneByOne, 0},
		{19 * time.Minute, nil, a, false, alerts.ModeOneByOne, 0},
		{20 * time.Minute, r.Listed, a, true, alerts.ModeList, 20 * time.Minute},
		{25 * time.Minute, r.Listed, a, true, alerts.ModeList, 20 * time.Minute},
		{25 * time.Minute, r.Listed, b, true, alerts.ModeList, 25 * time.Minute},
	}
	for i, s := range steps {
		now = start.Add(s.after)
		if s.do != nil {
			s.do(s.host)
		}
		wantSince := time.Time{}
		if s.since >= 0 {
			wantSince = start.Add(s.since)
		}
		mode, since := r.Mode(s.host)
		if use := r.UseList(s.host); use != s.use || mode != s.mode || !since.Equal(wantSince) {
			t.Errorf("step %d (%v, %+v): UseList %v, Mode %s since %v; want %v, %s since %v", i, s.after, s.host, use, mode, since, s.use, s.mode, wantSince)
		}
	}
}

// "No list route" is remembered for everything that decided it: a host
// that answered one credential, or one service of the management API, so
// says nothing of another credential's or another service's list on the
// same host, nor of the other API at the same URL. Before, the memory was
// keyed by API and URL alone, and one tenant's answer switched the list
// off for every tenant of the host.
func TestRoutesKeepEachCredentialAndServiceApart(t *testing.T) {
	at := time.Date(2026, time.November, 27, 0, 0, 0, 0, time.UTC)
	r := alerts.NewRoutes(func() time.Time { return at }, 10*time.Minute)
	r.NoList(managed("tenant", "missing"))
	r.NoList(alertHost("tenant"))
	for _, tt := range []struct {
		name string
		key  alerts.RouteKey
		use  bool
	}{
		{"the key and service that answered", managed("tenant", "missing"), false},
		{"the same key, another service", managed("tenant", "other"), true},
		{"another key, the same service", managed("victim", "missing"), true},
		{"another key and service", managed("victim", "svc"), true},
		{"another organization", func() alerts.RouteKey { k := managed("tenant", "missing"); k.OrganizationID = "org2"; return k }(), true},
		{"the token that answered", alertHost("tenant"), false},
		{"another token on the same alert host", alertHost("victim"), true},
		{"the same token at another URL", func() alerts.RouteKey { k := alertHost("tenant"); k.URL += "/v2"; return k }(), true},
	} {
		if use := r.UseList(tt.key); use != tt.use {
			t.Errorf("%s: UseList %v, want %v", tt.name, use, tt.use)
		}
	}
}

// A tenant that answers list calls with ever new credentials, URLs or
// services does not grow the memory without bound: answers not given
// again within retryAfter are dropped, and past MaxRoutes the one given
// longest ago goes first, the newest answers kept.
func TestRoutesAreBounded(t *testing.T) {
	start := time.Date(2026, time.November, 27, 0, 0, 0, 0, time.UTC)
	now := start
	r := alerts.NewRoutes(func() time.Time { return now }, 10*time.Minute)
	victim := managed("victim", "svc")
	r.NoList(victim)
	const extra = 50
	for i := range alerts.MaxRoutes + extra {
		now = start.Add(time.Duration(i+1) * time.Millisecond)
		r.NoList(alertHost(fmt.Sprint("churn-", i)))
	}
	if n := r.Len(); n != alerts.MaxRoutes {
		t.Errorf("%d answers kept after %d distinct ones, want %d", n, alerts.MaxRoutes+1+extra, alerts.MaxRoutes)
	}
	if r.UseList(alertHost(fmt.Sprint("churn-", alerts.MaxRoutes+extra-1))) {
		t.Error("the newest answer was dropped")
	}
	if r.UseList(alertHost("churn-0")) == false || r.UseList(victim) == false {
		t.Error("the answers given longest ago are still kept past MaxRoutes")
	}

	now = now.Add(10*time.Minute + time.Second)
	r.Listed(managed("later", "svc"))
	if n := r.Len(); n != 1 {
		t.Errorf("%d answers kept once all but one are older than retryAfter, want 1", n)
	}
}

// Watches of many hosts share one Routes: concurrent use is safe (run
// with -race) and each key keeps its own answer.
func TestRoutesAreSafeForConcurrentUse(t *testing.T) {
	at := time.Date(2026, time.November, 27, 0, 0, 0, 0, time.UTC)
	r := alerts.NewRoutes(func() time.Time { return at }, time.Minute)
	var wg sync.WaitGroup
	for i := range 8 {
		host := alertHost(fmt.Sprint("token-", i%2))
		wg.Go(func() {
			for range 100 {
				if i%2 == 0 {
					r.Listed(host)
				} else {
					r.NoList(host)
				}
				r.UseList(host)
				r.Mode(host)
			}
		})
	}
	wg.Wait()
	if m, _ := r.Mode(alertHost("token-0")); m != alerts.ModeList {
		t.Errorf("token-0 reads %s", m)
	}
	if m, _ := r.Mode(alertHost("token-1")); m != alerts.ModeOneByOne || r.UseList(alertHost("token-1")) {
		t.Errorf("token-1 reads %s", m)
	}
}

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
