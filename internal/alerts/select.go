package alerts

import (
	"container/heap"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/egress"
	"github.com/servicewatch/servicewatch/internal/metrics"
)

// MaxSelected bounds the entries a selector adds to a status: a selector
// that matches a host's ten thousand alerts must not cost ten thousand
// entries of memory before the status size limit cuts them. The summary
// still counts every match, so StatusTruncated and the omitted metric say
// how many were left out.
const MaxSelected = 1000

// MaxNameBytes bounds the alert names a name pattern is tried on: a longer
// name matches no pattern (tags alone may still select its alert, and an
// ID names it). A host decides its names, and one may fill a 16 MiB answer,
// which every watch sharing the list would match once per sync; no real
// alert name comes near 4 KiB (a pattern has at most 256 characters).
const MaxNameBytes = 4 << 10

// Selector is an AlertSelector compiled once for every alert of a list it
// is tried on. A nil *Selector matches nothing.
type Selector struct {
	all  bool
	name *Pattern // nil: no name pattern
	tags []string
}

// Compile compiles sel; nil for nil.
func Compile(sel *swv1.AlertSelector) *Selector {
	if sel == nil {
		return nil
	}
	s := &Selector{all: sel.All, tags: sel.Tags}
	if sel.Name != "" {
		s.name = CompilePattern(sel.Name)
	}
	return s
}

// Matches tells whether an alert of that name and those tags matches: all,
// or every tag of the selector among tags and the name, at most
// MaxNameBytes, matching the selector's pattern (when it has one). A
// selector with neither matches nothing.
func (s *Selector) Matches(name string, tags []string) bool {
	var steps int64
	return s.matches(name, tags, &steps)
}

// matches is Matches, adding the steps it took to *steps (see
// Pattern.match; a comparison of two tags is one).
func (s *Selector) matches(name string, tags []string, steps *int64) bool {
	switch {
	case s == nil:
		return false
	case s.all:
		return true
	case s.name == nil && len(s.tags) == 0:
		return false
	}
	for _, t := range s.tags { // the tags first: they cost the least
		*steps += int64(len(tags))
		if !slices.Contains(tags, t) {
			return false
		}
	}
	return s.name == nil || (len(name) <= MaxNameBytes && s.name.match(name, steps))
}

// Matches tells whether an alert of that name and those tags matches sel:
// all, or the name matching sel.Name (when set, see Selector) and every
// tag of sel.Tags among tags. Picking compiles sel once instead (Compile).
func Matches(sel *swv1.AlertSelector, name string, tags []string) bool {
	return Compile(sel).Matches(name, tags)
}

// Glob tells whether s matches pattern whole: * matches any run of
// characters (none included), ? any one character, anything else itself
// (a byte that is not UTF-8 is one character, U+FFFD). Every pattern is
// valid, and the match takes time linear in len(s), whatever the pattern
// (see CompilePattern, which compiles a pattern once for many names).
func Glob(pattern, s string) bool { return CompilePattern(pattern).Match(s) }

// Picked is what picking a watch's alerts from a host's list found.
type Picked struct {
	// Entries are the alerts followed: the IDs in spec order (absent from
	// the list: Missing), then the selector's matches not named by an ID,
	// ordered by id, at most MaxSelected.
	Entries []Entry
	// Matched counts every alert the selector matched, those beyond
	// MaxSelected (or the bytes a list keeps of them) included.
	Matched int
	// Unread are the positions in Entries of the IDs the list read but did
	// not keep (they were named after it was read): each is to be read on
	// its own. Never reported missing: the list had them.
	Unread []int
}

// Pick picks the alerts a watch follows from a host's list: each ID of ids
// found there, or failed NotFound when the list is complete (the host's
// answer that it has no such alert, as a 404 of its single GET is); when
// paging stopped early an ID not among those read is not known to be gone:
// it fails InvalidResponse and keeps its last fetch. An ID the list read
// but did not keep is Unread, never missing. Then the alerts sel matches,
// which the list must serve (Index.Serves).
func Pick(ids []string, sel *swv1.AlertSelector, idx *Index) Picked {
	var out Picked
	named := make(map[string]bool, len(ids))
	alsoMatched := 0 // named alerts the selector matches: the ID's, not the selector's
	for _, id := range ids {
		named[id] = true
		entry := Entry{ID: id, SelectedBy: swv1.SelectedByID}
		got := idx.byID[id]
		switch {
		case got != nil:
			entry.Alert, entry.LeftOut = &got.Alert, got.LeftOut
			if sel != nil && Matches(sel, selectedName(&got.Alert), tagsOf(&got.Alert)) {
				alsoMatched++
			}
		case idx.tooLarge[id]:
			entry.Failed = &ReadError{Reason: swv1.ReasonInvalidResponse, Message: fmt.Sprintf(
				"listed, but the alerts named by the watches that share the host's list are larger than a list keeps for them (%d bytes a watch); its last fetch is kept", idx.filter.selectorBytes)}
		case !idx.filter.ids[id] && idx.seen != nil && idx.seen(id):
			out.Unread = append(out.Unread, len(out.Entries))
		default:
			entry.Failed = missing(id, idx.read, idx.stopped)
		}
		out.Entries = append(out.Entries, entry)
	}
	if sel == nil {
		return out
	}
	matches := idx.selected[selectorKey(sel)]
	out.Matched = matches.count - alsoMatched
	selected := 0
	for _, a := range matches.kept {
		if selected == MaxSelected {
			break
		}
		if !named[a.Alert.ID] {
			out.Entries = append(out.Entries, Entry{ID: a.Alert.ID, SelectedBy: swv1.SelectedBySelector, Alert: &a.Alert, LeftOut: a.LeftOut})
			selected++
		}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// missing is the failure of an ID absent from a list of n alerts. An ID
// that could not be fetched on its own (it cannot stay one path segment)
// fails as its single GET would, so that it reads the same on every host.
func missing(id string, n int, stopped string) *ReadError {
	if _, err := egress.PathSegment(id); err != nil {
		return &ReadError{Reason: swv1.ReasonConfigurationError, Message: fmt.Sprintf("alert ID in spec.alertIds: %v", err)}
	}
	if stopped != "" {
		return &ReadError{Reason: swv1.ReasonInvalidResponse,
			Message: fmt.Sprintf("not among the %d alerts read before paging stopped (%s); its last fetch is kept", n, stopped)}
	}
	return &ReadError{Reason: swv1.ReasonNotFound,
		Message: fmt.Sprintf("the host's list of %d alerts has no alert %q; check the ID in spec.alertIds", n, id)}
}

// tagsOf are an alert's tags, for a selector's tags.
func tagsOf(a *swv1.AlertStatus) []string { return a.Tags }

// selectedName is the name of a that spec.alertSelector.name matches: its
// displayName when not empty, else its name. It is what the selector
// matched while status showed displayName under name, so that a selector
// picks the same alerts now that status shows each under the cloud's own
// field name (swv1.AlertStatus.Label, the name people read, prefers name).
func selectedName(a *swv1.AlertStatus) string {
	if a.DisplayName != nil && *a.DisplayName != "" {
		return *a.DisplayName
	}
	return deref(a.Name)
}

// Weights of the work of a selection, in units of decode work (about 10 ns
// of a core each, see lenient.Work). A step of the matcher took 1 to 3 ns
// in BenchmarkGlobWorst (docs/benchmarks.md).
const (
	// SelectWorkPerAlert is the fixed charge of trying a selector on one
	// alert of a list: finding it in the index, its tags.
	SelectWorkPerAlert = 2
	// SelectStepsPerUnit are the matcher's steps (see Pattern.match) in a
	// unit of work: a name of n bytes costs at most about
	// 16n ÷ SelectStepsPerUnit units (see MaxNameBytes).
	SelectStepsPerUnit = 4
)

// selectionWork is the work of trying a selector on n alerts in steps
// steps of the matcher.
func selectionWork(n int, steps int64) int64 {
	return int64(n)*SelectWorkPerAlert + (steps+SelectStepsPerUnit-1)/SelectStepsPerUnit
}

// maxListMessageBytes bounds the list of failing or incomplete alerts in
// a message, so that Ready, which joins the failing parts' messages, stays
// within the condition's bound.
const maxListMessageBytes = 1 << 10

// ReadError is why one alert's read failed: a condition reason, the user's
// message, and the wait the cloud asked for.
type ReadError struct {
	Reason     string
	Message    string
	RetryAfter time.Duration
}

// Error is the failure as an entry's error shows it.
func (f *ReadError) Error() string { return f.Reason + ": " + f.Message }

// Entry is one alert a watch follows and what this sync read of it.
type Entry struct {
	ID string
	// SelectedBy is swv1.SelectedByID or swv1.SelectedBySelector.
	SelectedBy string
	// Alert is what this sync read, nil when it failed or was left for
	// later. It may be shared with other watches: Apply copies it.
	Alert *swv1.AlertStatus
	// LeftOut names the members of the alert whose values could not be
	// read (cloudapi.AlertResult.LeftOut).
	LeftOut []string
	// Failed says why the read failed; the entry keeps its last fetch.
	Failed *ReadError
	// Later: not in this sync's batch; the entry keeps its last fetch.
	Later bool
}

// Told is what the alerts part's condition says of its entries.
type Told struct {
	// Message is the condition's message when the part synced.
	Message string
	// Failure is the condition's failure: the reason of the first failing
	// entry, every failing ID with its reason, and a stop of paging; nil
	// when every entry synced.
	Failure *ReadError
}

// Tell is what the condition says of entries. stopped, when set, says why
// paging stopped before the list's end.
func Tell(entries []Entry, stopped string) Told {
	return Told{Message: fetchedMessage(entries) + leftOutNote(entries), Failure: summarize(entries, stopped)}
}

// Apply writes entries into status, in their order: each read entry as
// read (a copy: the read may be shared), each failed one with its last
// successful fetch, if any, and its error, each left for later as it was.
// matched counts every selector match, also those beyond the entries, for
// the summary; readBy is status.alertsReadBy. It returns the entries
// written, before any truncation of the status, for the state metrics.
func Apply(s *swv1.ServiceWatchStatus, entries []Entry, matched int, readBy string) []swv1.AlertStatus {
	previous := make(map[string]swv1.AlertStatus, len(s.Alerts))
	for _, a := range s.Alerts {
		previous[a.ID] = a
	}
	var alerts []swv1.AlertStatus
	failed, selected := 0, 0
	for _, e := range entries {
		entry := previous[e.ID] // the last successful fetch, if there was one
		switch {
		case e.Failed != nil:
			entry.Error = e.Failed.Error()
			failed++
		case e.Alert != nil:
			entry = *e.Alert.DeepCopy()
		}
		entry.ID, entry.SelectedBy = e.ID, e.SelectedBy
		if e.SelectedBy == swv1.SelectedBySelector {
			selected++
		}
		alerts = append(alerts, entry)
	}
	s.Alerts, s.AlertsReadBy = alerts, readBy
	if s.Summary != nil {
		s.Summary.Alerts = int32(len(alerts) - failed + max(0, matched-selected))
	}
	return alerts
}

// fetchedMessage says how many alerts this sync read, and, when the
// token's budget made it fetch only a batch, that the others keep their last
// fetch.
func fetchedMessage(entries []Entry) string {
	later := 0
	for _, e := range entries {
		if e.Later {
			later++
		}
	}
	if later == 0 {
		return fmt.Sprintf("Fetched %d alerts", len(entries))
	}
	return fmt.Sprintf("Fetched %d of %d alerts: the alert API token's rate budget admits fewer calls at once than there are alerts, so each sync fetches the next ones in turn and the others keep their last fetch", len(entries)-later, len(entries))
}

// leftOutNote tells which alerts had values the operator could not read and
// left out (the rest of each alert is in status), bounded; "" when none.
func leftOutNote(entries []Entry) string {
	var notes []string
	for _, e := range entries {
		if len(e.LeftOut) > 0 && e.Failed == nil {
			notes = append(notes, fmt.Sprintf("%s (%s)", e.ID, strings.Join(e.LeftOut, ", ")))
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return fmt.Sprintf("; %d left out values of a type the operator cannot read: %s", len(notes), bound.Join(notes, maxListMessageBytes))
}

// summarize is the failure AlertsSynced shows: the reason of the first
// failing alert in order, and every failing ID with its reason; a stop of
// paging comes first, as InvalidResponse.
func summarize(entries []Entry, stopped string) *ReadError {
	var first *ReadError
	var failed []string
	for _, e := range entries {
		if e.Failed == nil {
			continue
		}
		if first == nil {
			first = e.Failed
		}
		failed = append(failed, fmt.Sprintf("%s (%s)", e.ID, e.Failed.Error()))
	}
	var msgs []string
	if stopped != "" {
		first = &ReadError{Reason: swv1.ReasonInvalidResponse}
		msgs = append(msgs, "paging the host's alert list stopped before its end: "+stopped+"; the alerts read are shown")
	}
	if first == nil {
		return nil
	}
	if len(failed) > 0 {
		msgs = append(msgs, fmt.Sprintf("%d of %d alerts failed: %s", len(failed), len(entries), bound.Join(failed, maxListMessageBytes)))
	}
	return &ReadError{Reason: first.Reason, RetryAfter: first.RetryAfter, Message: strings.Join(msgs, "; ")}
}

// Items are what the state metrics show of alerts.
func Items(alerts []swv1.AlertStatus) []metrics.Alert {
	items := make([]metrics.Alert, len(alerts))
	for i := range alerts {
		items[i] = item(&alerts[i])
	}
	return items
}

// item is what the state metrics show of an alert: with the silence
// and the execution errors, so that an alert that is silenced or whose
// evaluations or deliveries fail is visible to alerting.
func item(a *swv1.AlertStatus) metrics.Alert {
	item := metrics.Alert{ID: a.ID, Name: a.Label(), State: ptr.Deref(a.State, ""), FetchFailed: a.Error != "",
		Silenced: a.Silenced != nil, ExecutionErrors: len(a.ExecutionErrors)}
	if a.Since != nil {
		item.Since = a.Since.Time
	}
	if a.Silenced != nil && a.Silenced.Until != nil {
		if until, err := time.Parse(time.RFC3339Nano, *a.Silenced.Until); err == nil {
			item.SilencedUntil = until
		}
	}
	for _, e := range a.ExecutionErrors {
		if at := cloudapi.ExecutionErrorTime(e); at.After(item.LastExecutionError) {
			item.LastExecutionError = at
		}
	}
	return item
}

// AllFailed are the entries of a watch whose alerts could not be read at
// all (no credential, no list route for its selector): each ID, and each
// alert its selector matched before, keeps its last data and says f.
func AllFailed(spec *swv1.ServiceWatchSpec, previous []swv1.AlertStatus, f *ReadError) []Entry {
	var entries []Entry
	for _, id := range spec.AlertIDs {
		entries = append(entries, Entry{ID: id, SelectedBy: swv1.SelectedByID, Failed: f})
	}
	for _, a := range previous {
		if a.SelectedBy == swv1.SelectedBySelector && spec.AlertSelector != nil {
			entries = append(entries, Entry{ID: a.ID, SelectedBy: a.SelectedBy, Failed: f})
		}
	}
	return entries
}

// Later is an alert ID left for a later sync's batch: one fetched before
// keeps its last fetch; one never fetched waits for its turn, and its
// watch is not Ready until it came.
func Later(spec *swv1.ServiceWatchSpec, previous []swv1.AlertStatus, id string, batch int) Entry {
	for _, a := range previous {
		if a.ID == id && a.Error == "" {
			return Entry{ID: id, SelectedBy: swv1.SelectedByID, Later: true}
		}
	}
	return Entry{ID: id, SelectedBy: swv1.SelectedByID, Failed: &ReadError{Reason: swv1.ReasonRateLimited, Message: fmt.Sprintf(
		"not fetched yet: the %s's rate budget admits at most %d calls at once, and each sync fetches the next %d alerts", BudgetName(spec), batch, batch)}}
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

func (h matchHeap) Len() int { return len(h) }

func (h matchHeap) Less(i, j int) bool { return h[i].a.Alert.ID > h[j].a.Alert.ID }

func (h matchHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

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
