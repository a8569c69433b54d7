// Package statemetrics exports what the ServiceWatches show, in the style of
// kube-state-metrics: one snapshot per watch, turned into metrics only when
// Prometheus scrapes. Because nothing is kept between scrapes but the
// snapshots, a pipe that went away, a state that changed or a watch that was
// deleted leaves no stale series behind.
package statemetrics

import (
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Watch is what the state metrics show of one ServiceWatch, as the controller
// last wrote it to status, with the full (untruncated) item lists.
type Watch struct {
	Namespace, Name string
	Conditions      []metav1.Condition
	// LastSyncTime is the last sync that reached the cloud; zero: never.
	LastSyncTime time.Time
	Interval     time.Duration
	Pipes        []Pipe
	Endpoints    []Endpoint
	Alerts       []Alert
}

// Pipe is one pipe of a watch.
type Pipe struct {
	ID, Name, State string
	// SourceKind is kafka, objectStorage, kinesis or postgres; "" when the
	// pipe has no source, several joined by "," when it has more than one.
	SourceKind string
}

// Endpoint is one reverse private endpoint of a watch.
type Endpoint struct{ ID, Type, Status string }

// Alert is one alert of a watch. FetchFailed is true while its latest fetch
// failed; its other fields then are those of the last successful fetch.
type Alert struct {
	ID, Name, State string
	FetchFailed     bool
}

// Collector is a prometheus.Collector of the watches' state. It is safe for
// concurrent use: the controller sets snapshots while Prometheus scrapes.
type Collector struct {
	itemMetrics bool
	descs       descriptors

	mu      sync.RWMutex
	watches map[watchKey]Watch
}

type watchKey struct{ namespace, name string }

// descriptors are the metric families the collector emits.
type descriptors struct {
	pipeInfo, endpointInfo, alertInfo, alertFetchFailed *prometheus.Desc
	condition, lastSync, interval                       *prometheus.Desc
}

// NewCollector returns an empty collector. With itemMetrics false it emits
// only the per-watch families (conditions, last sync, interval), not one
// series per pipe, endpoint and alert: for very many watches, or when item
// names are not to be exported.
func NewCollector(itemMetrics bool) *Collector {
	watch := []string{"namespace", "servicewatch"}
	with := func(labels ...string) []string { return append(watch[:2:2], labels...) }
	return &Collector{
		itemMetrics: itemMetrics,
		watches:     map[watchKey]Watch{},
		descs: descriptors{
			pipeInfo: prometheus.NewDesc("servicewatch_pipe_info",
				"A pipe of a ServiceWatch, with its state and source kind (kafka, objectStorage, kinesis, postgres; several joined by a comma). Always 1.",
				with("pipe_id", "pipe_name", "state", "source_kind"), nil),
			endpointInfo: prometheus.NewDesc("servicewatch_reverse_private_endpoint_info",
				"A reverse private endpoint of a ServiceWatch, with its type and status. Always 1.",
				with("endpoint_id", "type", "status"), nil),
			alertInfo: prometheus.NewDesc("servicewatch_alert_info",
				"An alert of a ServiceWatch, with its state as the alert API last returned it. Always 1.",
				with("alert_id", "alert_name", "state"), nil),
			alertFetchFailed: prometheus.NewDesc("servicewatch_alert_fetch_failed",
				"1 while the latest fetch of an alert of a ServiceWatch failed (its info then shows the last successful fetch); absent otherwise.",
				with("alert_id"), nil),
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
		for _, desc := range []*prometheus.Desc{d.pipeInfo, d.endpointInfo, d.alertInfo, d.alertFetchFailed} {
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
	for _, w := range c.watches {
		c.collectWatch(ch, w)
	}
}

func (c *Collector) collectWatch(ch chan<- prometheus.Metric, w Watch) {
	d := c.descs
	one := func(desc *prometheus.Desc, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, 1, append([]string{w.Namespace, w.Name}, labels...)...)
	}
	for _, p := range w.Pipes {
		one(d.pipeInfo, p.ID, p.Name, p.State, p.SourceKind)
	}
	for _, e := range w.Endpoints {
		one(d.endpointInfo, e.ID, e.Type, e.Status)
	}
	for _, a := range w.Alerts {
		one(d.alertInfo, a.ID, a.Name, a.State)
		if a.FetchFailed {
			one(d.alertFetchFailed, a.ID)
		}
	}
	for _, cond := range w.Conditions {
		one(d.condition, cond.Type, string(cond.Status), cond.Reason)
	}
	if !w.LastSyncTime.IsZero() {
		ch <- prometheus.MustNewConstMetric(d.lastSync, prometheus.GaugeValue, float64(w.LastSyncTime.UnixNano())/1e9, w.Namespace, w.Name)
	}
	ch <- prometheus.MustNewConstMetric(d.interval, prometheus.GaugeValue, w.Interval.Seconds(), w.Namespace, w.Name)
}

// normalize makes a snapshot safe to collect at every scrape, once, when it is
// set: the item lists are dropped when item metrics are off (no memory is
// spent on what is never shown), label values are made valid UTF-8 (a
// const metric with anything else panics), and items whose labels are all
// equal are kept once, since cloud data may repeat an item and a registry
// fails the whole scrape on a duplicate series.
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
		return Pipe{ID: valid(p.ID), Name: valid(p.Name), State: valid(p.State), SourceKind: valid(p.SourceKind)}
	}, func(p Pipe) Pipe { return p })
	w.Endpoints = uniqueBy(w.Endpoints, func(e Endpoint) Endpoint {
		return Endpoint{ID: valid(e.ID), Type: valid(e.Type), Status: valid(e.Status)}
	}, func(e Endpoint) Endpoint { return e })
	// Alerts are unique by ID in spec; the fetch-failed series is keyed by
	// ID alone, so the first of a repeated ID wins.
	w.Alerts = uniqueBy(w.Alerts, func(a Alert) Alert {
		return Alert{ID: valid(a.ID), Name: valid(a.Name), State: valid(a.State), FetchFailed: a.FetchFailed}
	}, func(a Alert) string { return a.ID })
	return w
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
