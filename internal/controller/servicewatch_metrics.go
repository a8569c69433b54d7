package controller

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/conditions"
)

// Metrics are the operator's Prometheus metrics. They are registered with a
// registry passed in (controller-runtime's, in the manager) rather than a
// global one, so tests can build as many as they like.
type Metrics struct {
	cloudRequests *prometheus.CounterVec
	cloudLatency  *prometheus.HistogramVec
	syncs         *prometheus.CounterVec
	items         *prometheus.GaugeVec
}

// NewMetrics creates the metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		cloudRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "servicewatch_cloud_requests_total",
			Help: "Calls to the cloud APIs, by API, operation and HTTP status code (or a word such as timeout when there was no response).",
		}, []string{"api", "operation", "code"}),
		cloudLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "servicewatch_cloud_request_duration_seconds",
			Help:    "Latency of the calls to the cloud APIs that went over the wire.",
			Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}, []string{"api", "operation"}),
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "servicewatch_syncs_total",
			Help: "Syncs of each part of a ServiceWatch (pipes, reverse_private_endpoints, alerts), by result reason (Synced on success).",
		}, []string{"part", "reason"}),
		items: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "servicewatch_items",
			Help: "Items the cloud last reported for a ServiceWatch, by kind (pipes, reverse_private_endpoints, alerts).",
		}, []string{"namespace", "name", "kind"}),
	}
	for _, c := range []prometheus.Collector{m.cloudRequests, m.cloudLatency, m.syncs, m.items} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// ObserveRequest records one cloud call; it makes Metrics a cloudapi.Observer.
func (m *Metrics) ObserveRequest(api, operation, code string, duration time.Duration) {
	m.cloudRequests.WithLabelValues(api, operation, code).Inc()
	if duration > 0 {
		m.cloudLatency.WithLabelValues(api, operation).Observe(duration.Seconds())
	}
}

func (m *Metrics) recordSync(part, reason string) {
	m.syncs.WithLabelValues(part, reason).Inc()
}

func (m *Metrics) recordItems(watch types.NamespacedName, kind string, n int32) {
	m.items.WithLabelValues(watch.Namespace, watch.Name, kind).Set(float64(n))
}

func (m *Metrics) forget(watch types.NamespacedName) {
	m.items.DeletePartialMatch(prometheus.Labels{"namespace": watch.Namespace, "name": watch.Name})
}

// record updates the metrics after a sync. Each part's result is the reason
// its condition now shows, so metrics and status cannot disagree.
func (m *Metrics) record(watch *swv1.ServiceWatch, parts []part) {
	key := types.NamespacedName{Namespace: watch.Namespace, Name: watch.Name}
	for _, p := range parts {
		m.recordItems(key, p.name, p.count(&watch.Status))
		if !p.inUse(watch) {
			continue
		}
		if c := conditions.Get(watch, p.condition); c != nil {
			m.recordSync(p.name, c.Reason)
		}
	}
}
