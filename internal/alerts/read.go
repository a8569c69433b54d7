package alerts

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// Fetch reads one page at offset, handing each alert of it to each as it
// streams (cloudapi.AlertPageRequest.Each) and returning the work each
// said it cost: the page itself keeps none.
type Fetch func(ctx context.Context, offset int, each func(*cloudapi.AlertResult) int) (cloudapi.AlertPage, error)

// Keep is handed each alert of a list once, the first time paging reads
// it, and keeps what its caller uses of it; it returns the work that cost.
type Keep func(a *cloudapi.AlertResult) (work int)

// Listing is what paging read of a whole list; its alerts are what Keep
// kept.
type Listing struct {
	// Read counts the alerts read, each id once.
	Read int
	// Seen tells whether an id was among those read.
	Seen Seen
	// Pages counts the calls made.
	Pages int
	// Stopped is non-empty when paging stopped before the list's end
	// (e.g. "the host repeated the page at offset 999: it ignores offset;
	// read 1000 alerts of a list of 2500"); the alerts read are still
	// handed to Keep.
	Stopped string
}

// Seen tells which ids a ReadAll read, in 4 bytes an id whatever their
// length: a hash of each, so it may say yes for an id never read (about
// one in 2^32 / Read), never no for one read. The zero value has seen
// nothing.
type Seen struct {
	seed maphash.Seed
	sums []uint32 // sorted
}

// Has tells whether id may have been read: false means it was not.
func (s Seen) Has(id string) bool {
	if len(s.sums) == 0 {
		return false
	}
	_, found := slices.BinarySearch(s.sums, uint32(maphash.String(s.seed, id)>>32))
	return found
}

// MaxPages bounds the calls of one ReadAll: 100 pages of 1000 alerts
// are 100,000 alerts, far more than any service has, while a host that
// never ends its list costs at most 100 calls of its budget per read.
const MaxPages = 100

// maxStepBacks bounds how often one ReadAll steps back to find where a
// moving list continues; each step back of a run is twice the one before.
// A list that changes faster than it can be read is read no more than
// that, not until MaxPages.
const maxStepBacks = 8

// ReadAll pages through a list with limit per page (<= 0: the hosts'
// default, cloudapi.MaxAlertPageLimit) until it has read meta.total (or
// the answer had no meta), an empty page, or MaxPages; it neither
// duplicates nor loses an alert present in both pages' views when the
// total moves while paging, and stops at the first repeated page. A
// page's error ends it: ReadAll returns that error (wrapped with %w,
// keeping errors.Is(err, cloudapi.ErrNoListRoute) and cloudapi's
// classification) and no Listing.
//
// Each alert is handed to keep the first time it is read, as its page
// streams, and dropped unless keep keeps it: what a read holds is what
// keep keeps, plus 8 bytes per id read (at most MaxPages times limit) to
// tell a page that continues the list and one that repeats.
//
// Each next page overlaps the one before by one alert, and must begin
// with an alert already read: then nothing present before and after a
// change is lost, whatever was created or deleted before it (the cloud's
// order is stable). A page that does not (alerts before it were deleted,
// so it begins past alerts not yet read) makes ReadAll step back until one
// does.
func ReadAll(ctx context.Context, limit int, fetch Fetch, keep Keep) (Listing, error) {
	if limit <= 0 {
		limit = cloudapi.MaxAlertPageLimit
	}
	r := reader{fetch: fetch, keep: keep, seed: maphash.MakeSeed(), seen: map[uint64]struct{}{}, back: max(1, limit/10)}
	return r.readAll(ctx)
}

// reader is the state of one ReadAll.
type reader struct {
	fetch   Fetch
	keep    Keep
	listing Listing
	// seen are the hashes of the ids read, by seed.
	seed maphash.Seed
	seen map[uint64]struct{}
	// back is the first step back of a run of them.
	back int
	// page is what the page being read showed; last the page before,
	// and its offset, to tell a page repeated.
	page, last pageView
	lastOffset int
}

// pageView is what paging needs of a page: its answer's counts and the
// hashes of its alerts' ids in order, not the alerts.
type pageView struct {
	cloudapi.AlertPage
	ids []uint64
	// continues: its first alert had been read before it.
	continues bool
}

func (r *reader) readAll(ctx context.Context) (Listing, error) {
	// stepBacks counts the read's steps back, run those of the current run.
	offset, stepBacks, run := 0, 0, 0
	for {
		if r.listing.Pages == MaxPages {
			return r.stop(fmt.Sprintf("stopped after %d pages, the most one read makes", MaxPages)), nil
		}
		if err := ctx.Err(); err != nil {
			return Listing{}, fmt.Errorf("read the alert list: %w", err)
		}
		r.page = pageView{ids: make([]uint64, 0, min(len(r.last.ids)+1, cloudapi.MaxAlertPageLimit))}
		answer, err := r.fetch(ctx, offset, r.each)
		r.page.AlertPage = answer
		r.listing.Pages++
		if err != nil {
			return Listing{}, fmt.Errorf("alert list page %d at offset %d: %w", r.listing.Pages, offset, err)
		}
		page := r.page
		if r.listing.Pages > 1 && offset != r.lastOffset && repeats(page, r.last) {
			r.last = page
			return r.stop(fmt.Sprintf("the host repeated the page at offset %d: it ignores offset", offset)), nil
		}
		r.last, r.lastOffset = page, offset
		if offset > 0 && !page.continues {
			stepBacks++
			if stepBacks > maxStepBacks {
				return r.stop(fmt.Sprintf("the list kept changing while it was read (%d times a page began with an alert not read yet)", stepBacks)), nil
			}
			offset = max(0, offset-r.back<<run)
			run++
			continue
		}
		run = 0
		n := len(page.ids) + page.Skipped
		if page.Total < 0 && page.Beyond > 0 {
			return r.stop(fmt.Sprintf("the host sent %d alerts more than the %d asked for, without the meta to page through them", page.Beyond, n)), nil
		}
		if page.Total < 0 || n == 0 || offset+n >= page.Total {
			return r.done(), nil
		}
		offset += n - min(n-1, 1) // overlap by one alert, when the page has two
	}
}

// each notes an alert of the page being read, and hands it to keep the
// first time it is read.
func (r *reader) each(a *cloudapi.AlertResult) int {
	h := maphash.String(r.seed, a.Alert.ID)
	_, seen := r.seen[h]
	if len(r.page.ids) == 0 {
		r.page.continues = seen
	}
	r.page.ids = append(r.page.ids, h)
	if seen {
		return 0
	}
	r.seen[h] = struct{}{}
	r.listing.Read++
	return r.keep(a)
}

// done is the listing, its ids read kept as Seen.
func (r *reader) done() Listing {
	sums := make([]uint32, 0, len(r.seen))
	for h := range r.seen {
		sums = append(sums, uint32(h>>32))
	}
	slices.Sort(sums)
	r.listing.Seen = Seen{seed: r.seed, sums: slices.Compact(sums)}
	return r.listing
}

// stop says why paging ended before the list did, and how much was read.
func (r *reader) stop(why string) Listing {
	of := "an unknown number of"
	if r.last.Total >= 0 {
		of = fmt.Sprint(r.last.Total)
	}
	r.listing.Stopped = fmt.Sprintf("%s; read %d alerts of a list of %s", why, r.listing.Read, of)
	return r.done()
}

// repeats reports whether page is prev again: the same alerts in the same
// order, the same count of items skipped, of a list of the same total. A
// list that moved by exactly the pages' distance shows the same alerts
// too, but its total moved with it.
func repeats(page, prev pageView) bool {
	return page.Total == prev.Total && page.Skipped == prev.Skipped && len(page.ids)+page.Skipped > 0 && slices.Equal(page.ids, prev.ids)
}

// The modes Routes.Mode reports.
const (
	ModeList     = "List"
	ModeOneByOne = "OneByOne"
)

// MaxRoutes bounds the answers one Routes keeps. An answer lasts
// retryAfter unless it is given again, so that many are kept only when as
// many distinct hosts, credentials and services answered a list call
// within retryAfter; past it the answer confirmed longest ago is dropped
// (its watches try the list once more). Each is kept by its key's digest,
// whatever the URL's length: about 1.5 MB for all of them.
const MaxRoutes = 10000

// RouteKey is everything that decided how a list call was answered: the
// API and base URL of the host, the credential it was made with, and on the
// management API the organization and service whose list it is (leave them
// empty on the alert API, whose list is the whole host's). One watch's
// answer (a service that does not exist, a token its host treats
// otherwise) then never decides how a watch with another credential or of
// another service reads.
type RouteKey struct {
	// API is cloudapi.APIAlert or cloudapi.APIManagement.
	API string
	// URL is the host's base URL as the watch names it.
	URL string
	// Credential is the digest of the token or key the call was made with.
	Credential cloudapi.CredentialDigest
	// OrganizationID and ServiceID name the service of a management API list.
	OrganizationID, ServiceID string
}

// RouteOf is the key of the list src serves when read with the credential
// of digest (src's own credential may not be read yet): the management
// API's names its organization and service, the alert API's does not.
func RouteOf(src cloudapi.AlertSource, digest cloudapi.CredentialDigest) RouteKey {
	return RouteKey{API: src.API, URL: src.BaseURL, Credential: digest, OrganizationID: src.OrganizationID, ServiceID: src.ServiceID}
}

// routeID is a RouteKey's digest: what Routes keeps of it.
type routeID [sha256.Size]byte

// id is the digest of the key's parts, each after its length, so that
// ("ab", "c") and ("a", "bc") differ.
func (k RouteKey) id() routeID {
	h := sha256.New()
	for _, part := range []string{k.API, k.URL, string(k.Credential[:]), k.OrganizationID, k.ServiceID} {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(part))))
		h.Write([]byte(part))
	}
	return routeID(h.Sum(nil))
}

// Routes remembers, per RouteKey, whether the host serves the list route
// there. Safe for concurrent use; it keeps at most MaxRoutes answers.
type Routes struct {
	now        func() time.Time
	retryAfter time.Duration
	mu         sync.Mutex
	routes     map[routeID]route
	// swept is when answers older than retryAfter were last dropped.
	swept time.Time
}

// route is what Routes knows of one key.
type route struct {
	listed bool
	// since is when the key was first seen read the way it is now.
	since time.Time
	// checked is when the key last answered the way it does now.
	checked time.Time
}

// NewRoutes returns an empty memory, which tries the list again on a key
// without one retryAfter after it last said so.
func NewRoutes(now func() time.Time, retryAfter time.Duration) *Routes {
	return &Routes{now: now, retryAfter: retryAfter, routes: map[routeID]route{}}
}

// UseList says whether to try the list for key now: true when unknown,
// when the host listed last time, or when the last "no list route" is
// older than retryAfter (so an upgraded server is noticed).
func (r *Routes) UseList(key RouteKey) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.routes[key.id()]
	return !ok || h.listed || r.now().Sub(h.checked) >= r.retryAfter
}

// Listed records that the host served the list for key.
func (r *Routes) Listed(key RouteKey) { r.record(key, true) }

// NoList records that the host has no list route for key (from
// cloudapi.ErrNoListRoute).
func (r *Routes) NoList(key RouteKey) { r.record(key, false) }

// record notes how key was answered now; since moves only when the way
// changes, so that Mode says how long a key has been read one way.
func (r *Routes) record(key RouteKey, listed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now, id := r.now(), key.id()
	h, ok := r.routes[id]
	if !ok {
		r.makeRoom(now)
	}
	if !ok || h.listed != listed {
		h = route{listed: listed, since: now}
	}
	h.checked = now
	r.routes[id] = h
}

// makeRoom drops, every retryAfter and whenever the memory is full, the
// answers not given again for longer than retryAfter: they decide nothing
// any more (UseList tries the list again). When it is still full, the
// answer confirmed longest ago goes, so that the memory never holds more
// than MaxRoutes.
func (r *Routes) makeRoom(now time.Time) {
	if len(r.routes) < MaxRoutes && now.Sub(r.swept) <= r.retryAfter {
		return
	}
	r.swept = now
	var oldest routeID
	var oldestAt time.Time
	for id, h := range r.routes {
		switch {
		case now.Sub(h.checked) > r.retryAfter:
			delete(r.routes, id)
		case oldestAt.IsZero() || h.checked.Before(oldestAt):
			oldest, oldestAt = id, h.checked
		}
	}
	if len(r.routes) >= MaxRoutes {
		delete(r.routes, oldest)
	}
}

// Mode reports how key is read now, ModeList or ModeOneByOne, and since
// when; a key not yet tried (or forgotten) reads as ModeList since the
// zero time.
func (r *Routes) Mode(key RouteKey) (mode string, since time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.routes[key.id()]
	if !ok || h.listed {
		return ModeList, h.since
	}
	return ModeOneByOne, h.since
}

// Len is how many answers Routes keeps now.
func (r *Routes) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.routes)
}

// InUse tells whether a watch follows alerts, by ID or selector.
func InUse(spec *swv1.ServiceWatchSpec) bool {
	return len(spec.AlertIDs) > 0 || spec.AlertSelector != nil
}

// FromManagement tells whether a watch's alerts come from the management
// API of its service, with the management key.
func FromManagement(spec *swv1.ServiceWatchSpec) bool {
	return spec.AlertsFrom == swv1.AlertsFromManagementAPI
}

// SharedList tells whether the list a watch reads its alerts from may be
// shared with watches of other services: an alert host's list is one for
// every watch on the host and token, while the management API lists the
// alerts of one service.
func SharedList(spec *swv1.ServiceWatchSpec) bool { return InUse(spec) && !FromManagement(spec) }

// API is the API whose host, credential and budget read a watch's alerts.
func API(spec *swv1.ServiceWatchSpec) string {
	if FromManagement(spec) {
		return cloudapi.APIManagement
	}
	return cloudapi.APIAlert
}

// BudgetName names the budget of a watch's alerts in messages.
func BudgetName(spec *swv1.ServiceWatchSpec) string {
	if FromManagement(spec) {
		return "management API key"
	}
	return "alert API token"
}

// NoListRoute is the failure of a selector on a host that answers the list
// route with 404 or 405: only a list tells which alerts match.
func NoListRoute(url string) *ReadError {
	return &ReadError{Reason: swv1.ReasonListNotServed, Message: url + " has no alert list route (it answered 404 or 405): spec.alertSelector needs a host that lists alerts; " +
		"name the alerts in spec.alertIds instead, or upgrade the host (the operator tries the list again now and then)"}
}

// ListAge is how old a host's list that another watch read may be for a
// sync of a watch of interval every to reuse it: 90 % of its interval, so
// that a hundred watches on one host cost about one list per interval. The
// watches of one list sync together just after its read (their phase group
// is the list's, see pacing.Pacer.ReadsList), so the first of them to sync
// in a round finds the last round's read, an interval old, too old, and
// reads afresh: each sees a change made before that read at that sync. A
// sync the user asked for (fresh) reads afresh: -1.
func ListAge(every time.Duration, fresh bool) time.Duration {
	if fresh {
		return -1
	}
	return every * 9 / 10
}

// Source is where a watch's alerts are read, with which credential: the
// management API of its service with the management key when they come
// from there (alertURL is then the management API's), else the alert API
// with its token.
func Source(spec *swv1.ServiceWatchSpec, alertURL string, token cloudapi.BearerToken, key cloudapi.BasicCredentials) cloudapi.AlertSource {
	if FromManagement(spec) {
		return cloudapi.AlertSource{API: cloudapi.APIManagement, BaseURL: alertURL, Key: key, OrganizationID: spec.OrganizationID, ServiceID: spec.ServiceID}
	}
	return cloudapi.AlertSource{API: cloudapi.APIAlert, BaseURL: alertURL, Token: token}
}

// PagesFor is how many pages ReadAll calls for a list of total alerts at
// limit a page (<= 0: cloudapi.MaxAlertPageLimit), the list standing
// still: the first page reads limit alerts, each next one limit-1 more,
// since it overlaps the one before by one alert. At least 1: an empty
// list is still one call.
func PagesFor(total, limit int) int {
	limit = pageLimit(limit)
	if total <= limit || limit < 2 {
		return 1
	}
	return 1 + (total-limit+limit-2)/(limit-1)
}

// pageLimit is limit, or the hosts' default when it is not positive.
func pageLimit(limit int) int {
	if limit <= 0 {
		return cloudapi.MaxAlertPageLimit
	}
	return limit
}

// PageCounts remember how many pages the last read of each list took, or
// showed it would take: the next read's admission reserves them all at
// once, so that a list of several pages is read whole in one sync, not
// begun in every sync and finished in none. A count is forgotten keepFor
// after it was last noted. Safe for concurrent use; a nil PageCounts keeps
// nothing.
type PageCounts[K comparable] struct {
	now func() time.Time
	mu  sync.Mutex
	of  map[K]pageCount
}

// pageCount is a list's page count and until when it is kept.
type pageCount struct {
	pages int
	until time.Time
}

// NewPageCounts returns no counts, on the clock now.
func NewPageCounts[K comparable](now func() time.Time) *PageCounts[K] {
	return &PageCounts[K]{now: now, of: map[K]pageCount{}}
}

// Note records that a read of key took (or needs) pages pages, kept for
// keepFor; the counts past their time go.
func (p *PageCounts[K]) Note(key K, pages int, keepFor time.Duration) {
	if p == nil {
		return
	}
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, c := range p.of {
		if !now.Before(c.until) {
			delete(p.of, k)
		}
	}
	p.of[key] = pageCount{pages: max(1, pages), until: now.Add(keepFor)}
}

// Of is the pages the last read of key took; 0 when none is known (or p
// is nil: no counts kept).
func (p *PageCounts[K]) Of(key K) int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.of[key]
	if !ok || !p.now().Before(c.until) {
		return 0
	}
	return c.pages
}

// Len is how many lists' counts are kept.
func (p *PageCounts[K]) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.of)
}

// ListPages is how many pages of a list a sync's admission reserves with
// its other calls of the budget: as many as the last read of the list took
// (at least its first), so that the pacer starts the sync when the budget
// has room for the whole list and no page is refused halfway; no more than
// fit in one batch of most calls beside others (most 0: no limit), since a
// larger batch is never admitted. Pages past those ask the budget as the
// read reaches them (see MayWaitForPage).
func ListPages(last, others, most int) int {
	pages := max(1, last)
	if most > 0 {
		pages = min(pages, max(1, most-others))
	}
	return pages
}

// MayWaitForPage tells whether a read that has waited waited for room in
// its budget for the pages of a list may wait wait more for the next one,
// rather than leave the whole list to a later sync, which would begin it
// again from its first page: while its waits together are short beside
// its interval every (a quarter of it), so that it still ends within it,
// and take at most half of left, the time to the sync's deadline (left <= 0:
// none).
func MayWaitForPage(waited, wait, every, left time.Duration) bool {
	if wait <= 0 {
		return true
	}
	total := waited + wait
	return total <= every/4 && (left <= 0 || total <= left/2)
}
