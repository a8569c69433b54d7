package statemetrics

import (
	"container/heap"
	"slices"
	"time"
)

// DefaultMaxItemBytes is the default bound on the item series of one watch,
// in the bytes they are charged (see seriesBytes). It keeps about a thousand
// items of a typical service (UUIDs and short names), and bounds what a
// tenant whose cloud serves long names or very many items costs the manager
// and Prometheus: 60 watches at the bound are about 60,000 series at most.
const DefaultMaxItemBytes = 256 << 10

// seriesBytes is what each item series is charged besides its label values:
// about what its snapshot and its share of a scrape cost the manager (label
// pairs, a metric, the text encoding), so that a bound in bytes also bounds
// the number of series of items with empty labels.
const seriesBytes = 256

// Item is a pipe, an endpoint or an alert: an item of a watch's lists that
// the state metrics show as one info series.
type Item interface {
	Pipe | Endpoint | Alert
	// appendLabels appends the item's label values, in the order of its
	// info series' labels; they also order the items.
	appendLabels(dst []string) []string
	// bytes is what the item's series are charged.
	bytes() int
}

func (p Pipe) appendLabels(dst []string) []string {
	return append(dst, p.ID, p.Name, p.State, p.SourceKind)
}

func (p Pipe) bytes() int { return labelBytes(p) + sinceBytes(p.Since, p.ID, p.State) }

// sinceBytes charges an item's since series, when it shows.
func sinceBytes(since time.Time, id, state string) int {
	if since.IsZero() {
		return 0
	}
	return seriesBytes + len(id) + len(state)
}

func (e Endpoint) appendLabels(dst []string) []string {
	return append(dst, e.ID, e.Type, e.Status)
}

func (e Endpoint) bytes() int { return labelBytes(e) + sinceBytes(e.Since, e.ID, e.Status) }

func (a Alert) appendLabels(dst []string) []string {
	return append(dst, a.ID, a.Name, a.State)
}

// bytes charges an alert for each of its series: its info, its execution
// errors, and when they show, its failed fetch, its silence and its end, and
// the time of its last execution error.
func (a Alert) bytes() int {
	n := labelBytes(a) + sinceBytes(a.Since, a.ID, a.State)
	perID := seriesBytes + len(a.ID)
	n += perID // servicewatch_alert_execution_errors, always
	for _, shown := range []bool{a.FetchFailed, a.Silenced, !a.SilencedUntil.IsZero(), !a.LastExecutionError.IsZero()} {
		if shown {
			n += perID
		}
	}
	return n
}

func labelBytes[T Item](item T) int {
	var buf [6]string
	n := seriesBytes
	for _, l := range item.appendLabels(buf[:0]) {
		n += len(l)
	}
	return n
}

// compareItems orders items by their label values, the first label (the ID)
// first: the stable order in which the bound keeps items.
func compareItems[T Item](a, b T) int {
	var bufA, bufB [6]string
	return slices.Compare(a.appendLabels(bufA[:0]), b.appendLabels(bufB[:0]))
}

// keepFirst sorts items and returns the longest prefix whose bytes fit in
// budget, with the bytes it uses.
func keepFirst[T Item](items []T, budget int) (kept []T, used int) {
	slices.SortFunc(items, compareItems[T])
	for i, item := range items {
		n := item.bytes()
		if used+n > budget {
			// A copy: the items left out must not stay reachable through
			// the backing array.
			return slices.Clone(items[:i]), used
		}
		used += n
	}
	return items, used
}

// Selection keeps, of items added one at a time, the first in the stable
// order (by label values) whose bytes fit a budget, so that a list streamed
// from the cloud costs at most the budget whatever its length or the length
// of its names. What it keeps is what the bound of a watch's snapshot keeps
// of the whole list, given the same budget.
type Selection[T Item] struct {
	budget, used, seen int
	kept               maxHeap[T]
	// present are the kept items: a repeated item is kept once, as the
	// snapshot keeps it.
	present map[T]struct{}
	// cut is the first item in the order that was left out; nil: none yet.
	// Every item from it on is left out, so what is kept stays a prefix.
	cut *T
}

// NewSelection returns an empty selection that keeps items of at most
// budget bytes in all; a budget of 0 keeps none.
func NewSelection[T Item](budget int) *Selection[T] {
	return &Selection[T]{budget: budget, present: map[T]struct{}{}}
}

// Add offers an item.
func (s *Selection[T]) Add(item T) {
	s.seen++
	if _, dup := s.present[item]; dup || s.cut != nil && compareItems(item, *s.cut) >= 0 {
		return
	}
	heap.Push(&s.kept, item)
	s.present[item] = struct{}{}
	s.used += item.bytes()
	for s.used > s.budget {
		last, _ := heap.Pop(&s.kept).(T) // the heap holds only T
		s.used -= last.bytes()
		delete(s.present, last)
		s.cut = &last
	}
}

// Items returns the kept items in order.
func (s *Selection[T]) Items() []T {
	items := slices.Clone([]T(s.kept))
	slices.SortFunc(items, compareItems[T])
	return items
}

// Seen is how many items were offered.
func (s *Selection[T]) Seen() int { return s.seen }

// maxHeap is a heap of items (container/heap), the last in the order on top.
type maxHeap[T Item] []T

func (h maxHeap[T]) Len() int           { return len(h) }
func (h maxHeap[T]) Less(i, j int) bool { return compareItems(h[i], h[j]) > 0 }
func (h maxHeap[T]) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }

// Push adds an item; only Selection.Add pushes, and only items of type T.
func (h *maxHeap[T]) Push(x any) {
	if item, ok := x.(T); ok {
		*h = append(*h, item)
	}
}

// Pop removes the last item of the slice (container/heap's contract).
func (h *maxHeap[T]) Pop() any {
	old := *h
	last := old[len(old)-1]
	*h = old[:len(old)-1]
	return last
}

// bound keeps, of each list of a normalized snapshot, the first items in
// order that fit the collector's budget for the watch, alerts first (the
// user named them, and they are at most a hundred), then endpoints (few,
// and pipes reach their sources through them), then pipes; and counts what
// it left out, with what the caller had already left out (the totals).
func (c *Collector) bound(w Watch) Watch {
	budget := c.maxItemBytes
	if w.MaxItemBytes > 0 {
		budget = min(budget, w.MaxItemBytes)
	}
	alerts, endpoints, pipes := max(w.AlertsTotal, len(w.Alerts)), max(w.EndpointsTotal, len(w.Endpoints)), max(w.PipesTotal, len(w.Pipes))
	var used int
	w.Alerts, used = keepFirst(w.Alerts, budget)
	budget -= used
	w.Endpoints, used = keepFirst(w.Endpoints, budget)
	budget -= used
	w.Pipes, _ = keepFirst(w.Pipes, budget)
	w.omitted = omitted{alerts: alerts - len(w.Alerts), endpoints: endpoints - len(w.Endpoints), pipes: pipes - len(w.Pipes)}
	return w
}
