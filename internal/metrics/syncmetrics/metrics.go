package syncmetrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	"github.com/servicewatch/servicewatch/internal/pacing"
)

// Metrics are the operator's Prometheus metrics. They are registered with a
// registry passed in (controller-runtime's, in the manager) rather than a
// global one, so tests can build as many as they like.
type Metrics struct {
	cloudRequests *prometheus.CounterVec
	cloudLatency  *prometheus.HistogramVec
	rateLimited   *prometheus.CounterVec
	syncs         *prometheus.CounterVec
	items         *prometheus.GaugeVec
	deferrals     *prometheus.CounterVec
	budgetDemand  *prometheus.GaugeVec
	// namespaceShare and namespaceNeed are each namespace's share of a
	// budget and what its watches ask of it, in calls per second.
	namespaceShare *prometheus.GaugeVec
	namespaceNeed  *prometheus.GaugeVec
	slotWait       *prometheus.HistogramVec
	// statusConflicts counts status patches the API server refused for an
	// older resourceVersion (writeStatus builds them again).
	statusConflicts prometheus.Counter
	// accountsEnabled is 1 while the manager serves ClusterCloudAccounts.
	accountsEnabled prometheus.Gauge

	// budgetMu orders the publication of budget demands, so that a ratio
	// taken earlier never overwrites one taken later.
	budgetMu sync.Mutex
	// shownNamespaces are the namespaces whose share series exist, by API
	// and budget label, to delete those that left.
	shownNamespaces map[[2]string]map[string]bool
}

// New creates the metrics and registers them with reg.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		cloudRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "servicewatch_cloud_requests_total",
			Help: "Calls to the cloud APIs, by API, operation and HTTP status code (or a word such as timeout when there was no response).",
		}, []string{"api", "operation", "code"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "servicewatch_cloud_rate_limited_total",
			Help: "429 answers of the cloud APIs, by API and cause: others when the manager had kept under its part of the key's budget (the key's other users, or the reserve's, filled it), manager when it had not (its limit is disabled, or it had sent more).",
		}, []string{"api", "cause"}),
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
		deferrals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "servicewatch_sync_deferrals_total",
			Help: "Syncs put off because the client-side rate budget, or a Retry-After hold of the cloud on it, did not allow their calls yet, by API.",
		}, []string{"api"}),
		budgetDemand: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "servicewatch_budget_demand_ratio",
			Help: "Calls per second that the watches sharing one client-side rate budget ask for, divided by what the budget allows; above 1 they cannot all sync on time. budget is a fingerprint of the credential, never the credential.",
		}, []string{"api", "budget"}),
		namespaceShare: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "servicewatch_budget_namespace_share",
			Help: "Calls per second of one client-side rate budget that a namespace's watches may make: its fair share by weight, what idle namespaces leave going to the others. Below servicewatch_budget_namespace_need, the namespace's watches sync less often (IntervalMet False); other namespaces are not slowed by it.",
		}, []string{"api", "budget", "namespace"}),
		namespaceNeed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "servicewatch_budget_namespace_need",
			Help: "Calls per second of one client-side rate budget that a namespace's watches ask for at their intervals.",
		}, []string{"api", "budget", "namespace"}),
		slotWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "servicewatch_sync_slot_wait_seconds",
			Help:    "How long a sync waited for a read slot (--max-concurrent-syncs, --max-syncs-per-host, --max-syncs-per-namespace) before calling a host, by the work it was for (user, secret, periodic). Periodic waits near the watches' intervals mean the slots, not the cloud's budget, are the limit.",
			Buckets: []float64{0.001, 0.01, 0.1, 0.5, 1, 5, 15, 60, 300},
		}, []string{"work"}),
		statusConflicts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "servicewatch_status_write_conflicts_total",
			Help: "Status writes the API server refused because the ServiceWatch had changed since the status was built (another writer, or a cache behind the API server); each is built again on the watch as the API server has it. A rate near the sync rate means another client keeps writing the watches' status.",
		}),
		accountsEnabled: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "servicewatch_accounts_enabled",
			Help: "1 while the manager serves ClusterCloudAccounts; 0 when it serves none: its --account-namespace is empty, or the ClusterCloudAccount CRD is not installed (the manager starts serving them when it is, without a restart). Watches that refer to an account are Stalled meanwhile.",
		}),
	}
	for _, c := range []prometheus.Collector{m.cloudRequests, m.rateLimited, m.cloudLatency, m.syncs, m.items, m.deferrals, m.budgetDemand, m.namespaceShare, m.namespaceNeed, m.slotWait, m.statusConflicts, m.accountsEnabled} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	// The levels are known: their series exist from the start, so a rate
	// over them has no gap before the first wait.
	for level := range pacing.Levels {
		m.slotWait.WithLabelValues(level.String())
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

// ObserveRateLimited counts a 429 of api by its cause; it makes Metrics a
// cloudapi.RateLimitObserver.
func (m *Metrics) ObserveRateLimited(api, cause string) {
	m.rateLimited.WithLabelValues(api, cause).Inc()
}

// RecordDeferral counts a sync put off before calling api: the client-side
// rate budget (or a Retry-After hold on it) had no room for its calls.
func (m *Metrics) RecordDeferral(api string) {
	m.deferrals.WithLabelValues(api).Inc()
}

// PublishBudgetDemands sets the demand ratio of each rate budget whose
// demand changed (take hands them out: pacing.Pacer.TakeDemandChanges), by
// fingerprint (the label is public, the key behind it is not), and removes
// the series of budgets no watch uses any more: a rotated key or deleted
// watches must not leave a stale ratio behind. It costs what changed, so a
// sync start or a deleted watch costs the same with 10 or 10,000 budgets.
func (m *Metrics) PublishBudgetDemands(take func() []pacing.Ratio) {
	m.budgetMu.Lock()
	defer m.budgetMu.Unlock()
	for _, r := range take() {
		m.publishShares(r)
		if r.Gone {
			m.budgetDemand.DeleteLabelValues(r.API, r.Label)
			continue
		}
		m.budgetDemand.WithLabelValues(r.API, r.Label).Set(r.Ratio)
	}
}

// publishShares sets the share and need of each namespace on the budget
// and removes those of namespaces that no longer use it. Callers hold
// budgetMu.
func (m *Metrics) publishShares(r pacing.Ratio) {
	if m.shownNamespaces == nil {
		m.shownNamespaces = map[[2]string]map[string]bool{}
	}
	k := [2]string{r.API, r.Label}
	for ns := range m.shownNamespaces[k] {
		if _, ok := r.Namespaces[ns]; !ok || r.Gone {
			m.namespaceShare.DeleteLabelValues(r.API, r.Label, ns)
			m.namespaceNeed.DeleteLabelValues(r.API, r.Label, ns)
			delete(m.shownNamespaces[k], ns)
		}
	}
	if r.Gone {
		delete(m.shownNamespaces, k)
		return
	}
	for ns, s := range r.Namespaces {
		m.namespaceShare.WithLabelValues(r.API, r.Label, ns).Set(s.Share)
		m.namespaceNeed.WithLabelValues(r.API, r.Label, ns).Set(s.Need)
		if m.shownNamespaces[k] == nil {
			m.shownNamespaces[k] = map[string]bool{}
		}
		m.shownNamespaces[k][ns] = true
	}
}

// ObserveSlotWait records how long a sync of this level waited for its read
// slots.
func (m *Metrics) ObserveSlotWait(level pacing.Level, wait time.Duration) {
	m.slotWait.WithLabelValues(level.String()).Observe(wait.Seconds())
}

// RecordStatusConflict counts one status write refused for a conflict.
func (m *Metrics) RecordStatusConflict() {
	m.statusConflicts.Inc()
}

// SetAccountsEnabled says whether the manager serves ClusterCloudAccounts
// now.
func (m *Metrics) SetAccountsEnabled(enabled bool) {
	v := 0.0
	if enabled {
		v = 1
	}
	m.accountsEnabled.Set(v)
}

// RecordSync counts one sync of part that ended with reason (Synced on
// success).
func (m *Metrics) RecordSync(part, reason string) {
	m.syncs.WithLabelValues(part, reason).Inc()
}

// RecordItems sets how many items of kind the cloud last reported for watch.
func (m *Metrics) RecordItems(watch types.NamespacedName, kind string, n int32) {
	m.items.WithLabelValues(watch.Namespace, watch.Name, kind).Set(float64(n))
}

// Forget drops the series of a deleted watch.
func (m *Metrics) Forget(watch types.NamespacedName) {
	m.items.DeletePartialMatch(prometheus.Labels{"namespace": watch.Namespace, "name": watch.Name})
}
