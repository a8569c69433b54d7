package alertlist

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// Fetch reads one page at offset.
type Fetch func(ctx context.Context, offset int) (cloudapi.AlertPage, error)

// Listing is a whole list as paging read it.
type Listing struct {
	// Alerts are each id once, in the order first seen.
	Alerts []cloudapi.AlertResult
	// Pages counts the calls made.
	Pages int
	// Stopped is non-empty when paging stopped before the list's end
	// (e.g. "the host repeated the page at offset 1000: it ignores offset;
	// read 1000 of 2500 alerts"); the alerts read are still returned.
	Stopped string
}

// ReadAll pages through a list with limit per page until it has read
// meta.total (or the answer had no meta), an empty page, or MaxPages; it
// neither duplicates nor loses an alert present in both pages' views when
// the total moves while paging, and stops at the first repeated page. A
// page's error ends it: ReadAll returns that error (wrapped with %w,
// keeping errors.Is(err, cloudapi.ErrNoListRoute) and cloudapi's
// classification) and no Listing.
func ReadAll(_ context.Context, _ int, _ Fetch) (Listing, error) {
	return Listing{}, errors.New("alertlist: not implemented yet")
}

// The modes Routes.Mode reports.
const (
	ModeList     = "List"
	ModeOneByOne = "OneByOne"
)

// Routes remembers, per host key (the caller builds it: API + base URL),
// whether the host serves the list route. Safe for concurrent use.
type Routes struct {
	now        func() time.Time
	retryAfter time.Duration
	mu         sync.Mutex
	hosts      map[string]route
}

// route is what Routes knows of one host.
type route struct {
	listed bool
	// since is when the host was first seen read the way it is now.
	since time.Time
	// checked is when the host last answered the way it does now.
	checked time.Time
}

// NewRoutes returns an empty memory, which tries the list again on a host
// without one retryAfter after it last said so.
func NewRoutes(now func() time.Time, retryAfter time.Duration) *Routes {
	return &Routes{now: now, retryAfter: retryAfter, hosts: map[string]route{}}
}

// UseList says whether to try the list for host now: true when unknown,
// when the host listed last time, or when the last "no list route" is
// older than retryAfter (so an upgraded server is noticed).
func (r *Routes) UseList(host string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.hosts[host]
	return !ok || h.listed || r.now().Sub(h.checked) >= r.retryAfter
}

// Listed records that host served the list.
func (r *Routes) Listed(host string) { r.record(host, true) }

// NoList records that host has no list route (from ErrNoListRoute).
func (r *Routes) NoList(host string) { r.record(host, false) }

// record notes how host answered now; since moves only when the way
// changes, so that Mode says how long a host has been read one way.
func (r *Routes) record(host string, listed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	h, ok := r.hosts[host]
	if !ok || h.listed != listed {
		h = route{listed: listed, since: now}
	}
	h.checked = now
	r.hosts[host] = h
}

// Mode reports how host is read now, ModeList or ModeOneByOne, and since
// when; a host not yet tried reads as ModeList since the zero time.
func (r *Routes) Mode(host string) (mode string, since time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.hosts[host]
	if !ok || h.listed {
		return ModeList, h.since
	}
	return ModeOneByOne, h.since
}
