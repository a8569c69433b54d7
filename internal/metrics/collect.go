package metrics

import (
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Describe sends the descriptors of the families the collector emits.
func (c *State) Describe(ch chan<- *prometheus.Desc) {
	d := c.descs
	if c.itemMetrics {
		for _, desc := range []*prometheus.Desc{d.pipeInfo, d.endpointInfo, d.alertInfo, d.pipeSince, d.endpointSince, d.alertSince, d.alertFetchFailed,
			d.alertSilenced, d.alertSilencedUntil, d.alertExecutionErrors, d.alertLastExecutionError, d.omitted} {
			ch <- desc
		}
	}
	for _, desc := range []*prometheus.Desc{d.condition, d.lastSync, d.interval} {
		ch <- desc
	}
}

// Collect sends the metrics of every snapshot.
func (c *State) Collect(ch chan<- prometheus.Metric) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	now := c.now()
	for _, w := range c.watches {
		c.collectWatch(ch, w, now)
	}
}

func (c *State) collectWatch(ch chan<- prometheus.Metric, w Watch, now time.Time) {
	d := c.descs
	gauge := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, append([]string{w.Namespace, w.Name}, labels...)...)
	}
	one := func(desc *prometheus.Desc, labels ...string) { gauge(desc, 1, labels...) }
	var buf [6]string
	since := func(desc *prometheus.Desc, t time.Time, id, state string) {
		if !t.IsZero() {
			gauge(desc, unixSeconds(t), id, state)
		}
	}
	for _, p := range w.Pipes {
		one(d.pipeInfo, p.appendLabels(buf[:0])...)
		since(d.pipeSince, p.Since, p.ID, p.State)
	}
	for _, e := range w.Endpoints {
		one(d.endpointInfo, e.appendLabels(buf[:0])...)
		since(d.endpointSince, e.Since, e.ID, e.Status)
	}
	for _, a := range w.Alerts {
		one(d.alertInfo, a.appendLabels(buf[:0])...)
		since(d.alertSince, a.Since, a.ID, a.State)
		if a.FetchFailed {
			one(d.alertFetchFailed, a.ID)
		}
		if a.Silenced && (a.SilencedUntil.IsZero() || now.Before(a.SilencedUntil)) {
			one(d.alertSilenced, a.ID)
			if !a.SilencedUntil.IsZero() {
				gauge(d.alertSilencedUntil, unixSeconds(a.SilencedUntil), a.ID)
			}
		}
		gauge(d.alertExecutionErrors, float64(a.ExecutionErrors), a.ID)
		if !a.LastExecutionError.IsZero() {
			gauge(d.alertLastExecutionError, unixSeconds(a.LastExecutionError), a.ID)
		}
	}
	for _, o := range []struct {
		kind string
		n    int
	}{{"pipe", w.omitted.pipes}, {"reverse_private_endpoint", w.omitted.endpoints}, {"alert", w.omitted.alerts}} {
		if o.n > 0 {
			ch <- prometheus.MustNewConstMetric(d.omitted, prometheus.GaugeValue, float64(o.n), w.Namespace, w.Name, o.kind)
		}
	}
	for _, cond := range w.Conditions {
		one(d.condition, cond.Type, string(cond.Status), cond.Reason)
	}
	if !w.LastSyncTime.IsZero() {
		ch <- prometheus.MustNewConstMetric(d.lastSync, prometheus.GaugeValue, unixSeconds(w.LastSyncTime), w.Namespace, w.Name)
	}
	ch <- prometheus.MustNewConstMetric(d.interval, prometheus.GaugeValue, w.Interval.Seconds(), w.Namespace, w.Name)
}

// normalize makes a snapshot safe to collect at every scrape, once, when it is
// set: the item lists are dropped when item metrics are off (no memory is
// spent on what is never shown), label values are made valid UTF-8 (a
// const metric with anything else panics), and items whose labels are all
// equal are kept once, since cloud data may repeat an item and a registry
// fails the whole scrape on a duplicate series; then the lists are bounded
// in bytes (see bound).
func (c *State) normalize(w Watch) Watch {
	w.Namespace, w.Name = valid(w.Namespace), valid(w.Name)
	w.Conditions = uniqueBy(w.Conditions, func(cond metav1.Condition) metav1.Condition {
		return metav1.Condition{Type: valid(cond.Type), Status: metav1.ConditionStatus(valid(string(cond.Status))), Reason: valid(cond.Reason)}
	}, func(cond metav1.Condition) string { return cond.Type })
	if !c.itemMetrics {
		w.Pipes, w.Endpoints, w.Alerts = nil, nil, nil
		return w
	}
	w.Pipes = uniqueBy(w.Pipes, func(p Pipe) Pipe {
		return Pipe{ID: valid(p.ID), Name: valid(p.Name), State: valid(p.State), SourceKind: valid(p.SourceKind), Since: p.Since}
	}, func(p Pipe) Pipe { return p })
	w.Endpoints = uniqueBy(w.Endpoints, func(e Endpoint) Endpoint {
		return Endpoint{ID: valid(e.ID), Type: valid(e.Type), Status: valid(e.Status), Since: e.Since}
	}, func(e Endpoint) Endpoint { return e })
	// Alerts are unique by ID in spec; the fetch-failed series is keyed by
	// ID alone, so the first of a repeated ID wins.
	w.Alerts = uniqueBy(w.Alerts, func(a Alert) Alert {
		a.ID, a.Name, a.State = valid(a.ID), valid(a.Name), valid(a.State)
		return a
	}, func(a Alert) string { return a.ID })
	return c.bound(w)
}

// uniqueBy returns a new slice of the cleaned items, keeping the first of
// those with equal keys.
func uniqueBy[T any, K comparable](items []T, clean func(T) T, key func(T) K) []T {
	if len(items) == 0 {
		return nil
	}
	out := make([]T, 0, len(items))
	seen := make(map[K]struct{}, len(items))
	for _, item := range items {
		item = clean(item)
		k := key(item)
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		out = append(out, item)
	}
	return out
}

func valid(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// unixSeconds is t as a Unix time in seconds, with its fraction.
func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

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
func (c *State) bound(w Watch) Watch {
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
