package alerts

import (
	"container/heap"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/bound"
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

// Need is what one watch uses of a host's list: the alerts its IDs name
// and its selector's first matches. A list read for the needs of the
// watches that share it keeps those and drops every other alert as it
// streams.
type Need struct {
	IDs      []string
	Selector *swv1.AlertSelector
}

// NeedOf is what a watch of spec uses of its host's list.
func NeedOf(spec *swv1.ServiceWatchSpec) Need {
	return Need{IDs: spec.AlertIDs, Selector: spec.AlertSelector}
}

// Needs are the needs of the watches that read each list, registered
// before they read, so that the watch that reads a list for all keeps
// what each of them uses. A watch has one need at a time (registering
// under another key moves it); a need not registered again within the
// time it was registered for is forgotten, as is a watch's that is
// forgotten (deleted, suspended). Safe for concurrent use.
type Needs[K comparable] struct {
	now func() time.Time

	mu      sync.Mutex
	byWatch map[string]registered[K]
}

// registered is one watch's need of the list of key, until until.
type registered[K comparable] struct {
	key   K
	need  Need
	until time.Time
}

// NewNeeds returns no needs, on the clock now.
func NewNeeds[K comparable](now func() time.Time) *Needs[K] {
	return &Needs[K]{now: now, byWatch: map[string]registered[K]{}}
}

// Register records watch's need of the list of key for keepFor: past it,
// unless registered again, the need is forgotten.
func (n *Needs[K]) Register(watch string, key K, need Need, keepFor time.Duration) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.byWatch[watch] = registered[K]{key: key, need: need, until: n.now().Add(keepFor)}
}

// Forget drops watch's need.
func (n *Needs[K]) Forget(watch string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.byWatch, watch)
}

// Of are the needs registered of the list of key; it forgets those past
// their time.
func (n *Needs[K]) Of(key K) []Need {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	now := n.now()
	var out []Need
	for watch, r := range n.byWatch {
		switch {
		case !now.Before(r.until):
			delete(n.byWatch, watch)
		case r.key == key:
			out = append(out, r.need)
		}
	}
	return out
}

// Len counts the needs remembered.
func (n *Needs[K]) Len() int {
	if n == nil {
		return 0
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.byWatch)
}

// Filter is what a read of a list keeps: the alerts the needs name, and
// each selector's first matches, by id.
type Filter struct {
	ids map[string]bool
	// selectors by selectorKey.
	selectors map[string]*selectorNeed
	// namedBytes bounds the named alerts kept; selectorBytes each
	// selector's matches.
	namedBytes, selectorBytes int
}

// selectorNeed is one selector of the needs and how many of its first
// matches are kept: MaxSelected, and room for the alerts a watch names
// that it matches too (they are that watch's by ID, not by selector).
type selectorNeed struct {
	sel *swv1.AlertSelector
	// compiled is sel compiled once for the whole list.
	compiled *Selector
	keep     int
}

// NewFilter is the filter of a list read for needs. Each need may keep
// about needBytes of alerts (bound.Charge): what it names, and what each
// selector matches, so that what a list keeps is bounded by the watches
// that share it, not by what the host sends (a status keeps no more than
// its size limit anyway).
func NewFilter(needs []Need, needBytes int) *Filter {
	f := &Filter{ids: map[string]bool{}, selectors: map[string]*selectorNeed{}, selectorBytes: needBytes}
	for _, n := range needs {
		if len(n.IDs) > 0 {
			f.namedBytes += needBytes
		}
		for _, id := range n.IDs {
			f.ids[id] = true
		}
		if n.Selector == nil {
			continue
		}
		k := selectorKey(n.Selector)
		s := f.selectors[k]
		if s == nil {
			s = &selectorNeed{sel: n.Selector, compiled: Compile(n.Selector)}
			f.selectors[k] = s
		}
		s.keep = max(s.keep, MaxSelected+len(n.IDs))
	}
	return f
}

// selectorKey is the same for selectors that match the same alerts.
func selectorKey(sel *swv1.AlertSelector) string {
	tags := slices.Clone(sel.Tags)
	slices.Sort(tags)
	all := "0"
	if sel.All {
		all = "1"
	}
	return all + "\x00" + sel.Name + "\x00" + strings.Join(slices.Compact(tags), "\x00")
}

// Collector keeps, as a list streams, what its filter wants.
type Collector struct {
	f          *Filter
	byID       map[string]*cloudapi.AlertResult
	tooLarge   map[string]bool
	namedBytes int
	selections map[string]*selection
}

// Collect starts keeping what f wants of a list.
func (f *Filter) Collect() *Collector {
	c := &Collector{f: f, byID: map[string]*cloudapi.AlertResult{}, tooLarge: map[string]bool{}, selections: map[string]*selection{}}
	for k, s := range f.selectors {
		c.selections[k] = &selection{need: s, maxBytes: f.selectorBytes}
	}
	return c
}

// Keep is handed each alert of the list once (Keep): it keeps
// it when the filter wants it, and returns the work its selectors cost.
func (c *Collector) Keep(a *cloudapi.AlertResult) (work int) {
	id := a.Alert.ID
	if c.f.ids[id] && c.byID[id] == nil && !c.tooLarge[id] {
		if size := alertSize(a); c.namedBytes+size <= c.f.namedBytes {
			c.byID[id], c.namedBytes = a, c.namedBytes+size
		} else {
			c.tooLarge[id] = true
		}
	}
	name, tags := selectedName(&a.Alert), tagsOf(&a.Alert)
	for _, s := range c.selections {
		var steps int64
		if s.need.compiled.matches(name, tags, &steps) {
			s.add(a)
		}
		work += int(selectionWork(1, steps))
	}
	return work
}

// alertSize is what an alert kept costs.
func alertSize(a *cloudapi.AlertResult) int {
	size := bound.Charge(&a.Alert)
	for _, s := range a.LeftOut {
		size += len(s) + 16
	}
	return size
}

// selection is a selector's first matches by id, as the list streams:
// the longest run from the smallest id that fits its count and bytes.
type selection struct {
	need     *selectorNeed
	maxBytes int
	// count counts every match.
	count int
	// kept is a max-heap by id; bytes their size.
	kept  matchHeap
	bytes int
	// ceiling, once set, is the smallest id dropped: no match from it on
	// is kept, so that what is kept stays the first matches.
	ceiling    string
	hasCeiling bool
}

// add counts a match and keeps it when it is among the first.
func (s *selection) add(a *cloudapi.AlertResult) {
	s.count++
	if s.hasCeiling && a.Alert.ID >= s.ceiling {
		return
	}
	size := alertSize(a)
	heap.Push(&s.kept, match{a: a, size: size})
	s.bytes += size
	for s.kept.Len() > 0 && (s.kept.Len() > s.need.keep || s.bytes > s.maxBytes) {
		dropped, _ := heap.Pop(&s.kept).(match) // the heap holds matches only
		s.bytes -= dropped.size
		s.ceiling, s.hasCeiling = dropped.a.Alert.ID, true
	}
}

// match is one alert a selector matched, with what it costs kept.
type match struct {
	a    *cloudapi.AlertResult
	size int
}

// matchHeap is a max-heap of matches by id.
type matchHeap []match

func (h matchHeap) Len() int           { return len(h) }
func (h matchHeap) Less(i, j int) bool { return h[i].a.Alert.ID > h[j].a.Alert.ID }
func (h matchHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }

// Push adds x, a match.
func (h *matchHeap) Push(x any) {
	m, _ := x.(match) // only matches are pushed
	*h = append(*h, m)
}

// Pop removes the last match.
func (h *matchHeap) Pop() any {
	old := *h
	last := old[len(old)-1]
	old[len(old)-1] = match{}
	*h = old[:len(old)-1]
	return last
}

// Index is what a host's list kept for the watches that share it (see
// Filter): read once, indexed once, so that a hundred watches cost one
// index, not a hundred, and never the whole list.
type Index struct {
	byID     map[string]*cloudapi.AlertResult
	tooLarge map[string]bool
	selected map[string]selected
	filter   *Filter
	read     int
	seen     func(id string) bool
	stopped  string
}

// Index is what the collector kept, ready for picking. read counts the
// alerts the list read, seen tells whether an id was among them (it may
// say yes wrongly, never no), stopped why paging stopped early ("" when it
// did not).
func (c *Collector) Index(read int, seen func(id string) bool, stopped string) *Index {
	idx := &Index{byID: c.byID, tooLarge: c.tooLarge, filter: c.f, read: read, seen: seen, stopped: stopped, selected: map[string]selected{}}
	for k, s := range c.selections {
		kept := make([]*cloudapi.AlertResult, len(s.kept))
		for i, m := range s.kept {
			kept[i] = m.a
		}
		slices.SortFunc(kept, func(a, b *cloudapi.AlertResult) int { return strings.Compare(a.Alert.ID, b.Alert.ID) })
		idx.selected[k] = selected{kept: kept, count: s.count}
	}
	c.byID, c.selections = nil, nil
	return idx
}

// selected is a selector's first matches, by id, and the count of all.
type selected struct {
	kept  []*cloudapi.AlertResult
	count int
}

// Serves tells whether a list read for idx's filter serves need whole: its
// selector's matches were kept (the IDs it names are served anyway: by the
// list, or, for an ID the list read but did not keep, by a read of its
// own, see Picked.Unread).
func (idx *Index) Serves(need Need) bool {
	if need.Selector == nil {
		return true
	}
	s := idx.filter.selectors[selectorKey(need.Selector)]
	return s != nil && s.keep >= MaxSelected+len(need.IDs)
}

// Stopped says why paging stopped before the list's end; "" when it did
// not.
func (idx *Index) Stopped() string { return idx.stopped }
