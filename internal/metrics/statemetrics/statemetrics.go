// Package statemetrics exports what the ServiceWatches show, in the style of
// kube-state-metrics: one snapshot per watch, turned into metrics only when
// Prometheus scrapes. Because nothing is kept between scrapes but the
// snapshots, a pipe that went away, a state that changed or a watch that was
// deleted leaves no stale series behind.
package statemetrics

import (
	"container/heap"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Watch is what the state metrics show of one ServiceWatch, as the controller
// last wrote it to status, with the item lists the last sync read (not
// truncated as status may be, but bounded in bytes: see Selection).
type Watch struct {
	Namespace, Name string
	Conditions      []metav1.Condition
	// LastSyncTime is the last sync that reached the cloud; zero: never.
	LastSyncTime time.Time
	Interval     time.Duration
	Pipes        []Pipe
	Endpoints    []Endpoint
	Alerts       []Alert
	// PipesTotal, EndpointsTotal and AlertsTotal are how many pipes,
	// endpoints and alerts the watch has, when the lists above hold fewer
	// (the caller bounded them while they streamed, a selector matched more
	// than a status takes, or they come from a truncated status); less than
	// a list's length means the list is whole. The difference shows in
	// servicewatch_item_metrics_omitted.
	PipesTotal, EndpointsTotal, AlertsTotal int
	// MaxItemBytes, when positive, bounds this watch's item series below the
	// collector's bound: the room a status budget left the watch's status
	// (--namespace-status-budget, --total-status-budget), so that a
	// namespace's budget bounds its watches' series as well.
	MaxItemBytes int

	// omitted counts the items of each list the snapshot does not show.
	omitted omitted
}

// omitted counts, by kind, the items a snapshot leaves out.
type omitted struct{ pipes, endpoints, alerts int }

// Pipe is one pipe of a watch.
type Pipe struct {
	ID, Name, State string
	// SourceKind is the pipe's sourceKind: kafka, objectStorage, kinesis,
	// postgres, pubsub, mysql, bigquery, mongodb, or the cloud's own name for
	// a kind the operator does not know; "" when the pipe has no source,
	// several joined by "," when it has more than one.
	SourceKind string
	// Since is when its state was first seen with its value; zero: unknown.
	Since time.Time
}

// Endpoint is one reverse private endpoint of a watch; Since is when its
// status was first seen with its value (zero: unknown).
type Endpoint struct {
	ID, Type, Status string
	Since            time.Time
}

// Alert is one alert of a watch. FetchFailed is true while its latest fetch
// failed; its other fields then are those of the last successful fetch.
type Alert struct {
	ID, Name, State string
	// Since is when its state was first seen with its value; zero: unknown.
	Since       time.Time
	FetchFailed bool
	// Silenced is true when the alert API reports a silence on the alert;
	// SilencedUntil is when it ends, zero when it does not say. A silence
	// whose end has passed at a scrape is not shown.
	Silenced      bool
	SilencedUntil time.Time
	// ExecutionErrors counts the recent failures to evaluate the alert or
	// to deliver its notifications that status shows; LastExecutionError is
	// when the latest happened, zero when unknown.
	ExecutionErrors    int
	LastExecutionError time.Time
}

// Collector is a prometheus.Collector of the watches' state. It is safe for
// concurrent use: the controller sets snapshots while Prometheus scrapes.
type Collector struct {
	itemMetrics bool
	// maxItemBytes bounds the item series of each watch; see Selection.
	maxItemBytes int
	descs        descriptors
	// now tells, at a scrape, whether a silence has ended.
	now func() time.Time

	mu      sync.RWMutex
	watches map[watchKey]Watch
}

type watchKey struct{ namespace, name string }

// descriptors are the metric families the collector emits.
type descriptors struct {
	pipeInfo, endpointInfo, alertInfo, alertFetchFailed *prometheus.Desc
	pipeSince, endpointSince, alertSince                *prometheus.Desc
	alertSilenced, alertSilencedUntil                   *prometheus.Desc
	alertExecutionErrors, alertLastExecutionError       *prometheus.Desc
	omitted                                             *prometheus.Desc
	condition, lastSync, interval                       *prometheus.Desc
}

// Option tunes a Collector.
type Option func(*Collector)

// WithMaxItemBytes bounds the item series of each watch to n bytes, charged
// as the label values' bytes plus 256 per series; default
// DefaultMaxItemBytes.
func WithMaxItemBytes(n int) Option {
	return func(c *Collector) { c.maxItemBytes = max(0, n) }
}

// NewCollector returns an empty collector. With itemMetrics false it emits
// only the per-watch families (conditions, last sync, interval), not one
// series per pipe, endpoint and alert: for very many watches, or when item
// names are not to be exported.
//
// The item series of one watch are bounded in bytes (WithMaxItemBytes): past
// the bound a scrape shows the first items of each list in the order of
// their label values (ID first), alerts before endpoints before pipes, and
// servicewatch_item_metrics_omitted says how many of each kind it left out.
func NewCollector(itemMetrics bool, opts ...Option) *Collector {
	watch := []string{"namespace", "servicewatch"}
	with := func(labels ...string) []string { return append(watch[:2:2], labels...) }
	c := &Collector{
		itemMetrics:  itemMetrics,
		maxItemBytes: DefaultMaxItemBytes,
		now:          time.Now,
		watches:      map[watchKey]Watch{},
		descs: descriptors{
			pipeInfo: prometheus.NewDesc("servicewatch_pipe_info",
				"A pipe of a ServiceWatch, with its state and source kind (kafka, objectStorage, kinesis, postgres, pubsub, mysql, bigquery, mongodb, or the cloud's own name of a kind the operator does not know; several joined by a comma). Always 1.",
				with("pipe_id", "pipe_name", "state", "source_kind"), nil),
			endpointInfo: prometheus.NewDesc("servicewatch_reverse_private_endpoint_info",
				"A reverse private endpoint of a ServiceWatch, with its type and status. Always 1.",
				with("endpoint_id", "type", "status"), nil),
			alertInfo: prometheus.NewDesc("servicewatch_alert_info",
				"An alert of a ServiceWatch, with its state as the alert API last returned it. Always 1.",
				with("alert_id", "alert_name", "state"), nil),
			pipeSince: prometheus.NewDesc("servicewatch_pipe_state_since_timestamp_seconds",
				"Unix time since which a pipe of a ServiceWatch has been in its state (status.pipes[].since): its state was first seen with that value then. Absent until known.",
				with("pipe_id", "state"), nil),
			endpointSince: prometheus.NewDesc("servicewatch_reverse_private_endpoint_status_since_timestamp_seconds",
				"Unix time since which a reverse private endpoint of a ServiceWatch has had its status (status.reversePrivateEndpoints[].since). Absent until known.",
				with("endpoint_id", "status"), nil),
			alertSince: prometheus.NewDesc("servicewatch_alert_state_since_timestamp_seconds",
				"Unix time since which an alert of a ServiceWatch has been in its state (status.alerts[].since). Absent until known.",
				with("alert_id", "state"), nil),
			alertFetchFailed: prometheus.NewDesc("servicewatch_alert_fetch_failed",
				"1 while the latest fetch of an alert of a ServiceWatch failed (its info then shows the last successful fetch); absent otherwise.",
				with("alert_id"), nil),
			alertSilenced: prometheus.NewDesc("servicewatch_alert_silenced",
				"1 while the alert API reports an alert of a ServiceWatch silenced (its notifications are not sent), until the silence ends; absent otherwise.",
				with("alert_id"), nil),
			alertSilencedUntil: prometheus.NewDesc("servicewatch_alert_silenced_until_timestamp_seconds",
				"Unix time at which the silence of a silenced alert of a ServiceWatch ends; absent when it is not silenced or the alert API does not say.",
				with("alert_id"), nil),
			alertExecutionErrors: prometheus.NewDesc("servicewatch_alert_execution_errors",
				"Recent failures of an alert of a ServiceWatch to evaluate or to deliver its notifications, as the alert API last reported them (at most the 5 status keeps); 0 when none.",
				with("alert_id"), nil),
			alertLastExecutionError: prometheus.NewDesc("servicewatch_alert_last_execution_error_timestamp_seconds",
				"Unix time of the latest execution failure of an alert of a ServiceWatch; absent when there is none or its time is unknown. It changes when a new failure is reported.",
				with("alert_id"), nil),
			omitted: prometheus.NewDesc("servicewatch_item_metrics_omitted",
				"Items of a ServiceWatch, by kind (pipe, reverse_private_endpoint, alert), left out of the item series because the watch's series passed their bound in bytes (--item-metrics-max-bytes, or less: the room the namespace's or the manager's status budget left the watch); the first items ordered by ID are shown. Absent when none are left out.",
				with("kind"), nil),
			condition: prometheus.NewDesc("servicewatch_condition",
				"A condition of a ServiceWatch's status, with its status and reason. Always 1.",
				with("type", "status", "reason"), nil),
			lastSync: prometheus.NewDesc("servicewatch_last_sync_timestamp_seconds",
				"Unix time of a ServiceWatch's last sync that reached the cloud; absent until the first.",
				watch, nil),
			interval: prometheus.NewDesc("servicewatch_interval_seconds",
				"Sync interval of a ServiceWatch, in seconds.",
				watch, nil),
		},
	}
	for _, opt := range opts {
		opt(c)
	}
	return c
}

// MaxItemBytes is the bound on one watch's item series, 0 with item
// metrics off: a caller gathering items for a snapshot need keep no more.
func (c *Collector) MaxItemBytes() int {
	if !c.itemMetrics {
		return 0
	}
	return c.maxItemBytes
}

// Set replaces the snapshot of w.Namespace/w.Name.
func (c *Collector) Set(w Watch) {
	w = c.normalize(w)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watches[watchKey{w.Namespace, w.Name}] = w
}

// SetIfAbsent sets the snapshot of a watch the collector knows nothing of
// yet, and leaves a known one alone: a status read back from the API server
// may hold truncated lists where the last sync's snapshot holds them all.
func (c *Collector) SetIfAbsent(w Watch) {
	c.mu.Lock()
	_, known := c.watches[watchKey{w.Namespace, w.Name}]
	c.mu.Unlock()
	if !known {
		c.Set(w)
	}
}

// Delete forgets a watch: its series are gone from the next scrape on.
func (c *Collector) Delete(namespace, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.watches, watchKey{namespace, name})
}

// Describe sends the descriptors of the families the collector emits.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
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
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	now := c.now()
	for _, w := range c.watches {
		c.collectWatch(ch, w, now)
	}
}

func (c *Collector) collectWatch(ch chan<- prometheus.Metric, w Watch, now time.Time) {
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
func (c *Collector) normalize(w Watch) Watch {
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
