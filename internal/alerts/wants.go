package alerts

import (
	"container/heap"
	"slices"
	"strings"
	"sync"
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

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
