package metrics

import (
	"container/heap"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/servicewatch/servicewatch/internal/pacing"
)

// Sync are the operator's own Prometheus metrics. They are registered with a
// registry passed in (controller-runtime's, in the manager) rather than a
// global one, so tests can build as many as they like.
type Sync struct {
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

// NewSync creates the metrics and registers them with reg.
func NewSync(reg prometheus.Registerer) (*Sync, error) {
	m := &Sync{
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
func (m *Sync) ObserveRequest(api, operation, code string, duration time.Duration) {
	m.cloudRequests.WithLabelValues(api, operation, code).Inc()
	if duration > 0 {
		m.cloudLatency.WithLabelValues(api, operation).Observe(duration.Seconds())
	}
}

// ObserveRateLimited counts a 429 of api by its cause; it makes Metrics a
// cloudapi.RateLimitObserver.
func (m *Sync) ObserveRateLimited(api, cause string) {
	m.rateLimited.WithLabelValues(api, cause).Inc()
}

// RecordDeferral counts a sync put off before calling api: the client-side
// rate budget (or a Retry-After hold on it) had no room for its calls.
func (m *Sync) RecordDeferral(api string) {
	m.deferrals.WithLabelValues(api).Inc()
}

// PublishBudgetDemands sets the demand ratio of each rate budget whose
// demand changed (take hands them out: pacing.Pacer.TakeDemandChanges), by
// fingerprint (the label is public, the key behind it is not), and removes
// the series of budgets no watch uses any more: a rotated key or deleted
// watches must not leave a stale ratio behind. It costs what changed, so a
// sync start or a deleted watch costs the same with 10 or 10,000 budgets.
func (m *Sync) PublishBudgetDemands(take func() []pacing.Ratio) {
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
func (m *Sync) publishShares(r pacing.Ratio) {
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
func (m *Sync) ObserveSlotWait(level pacing.Level, wait time.Duration) {
	m.slotWait.WithLabelValues(level.String()).Observe(wait.Seconds())
}

// RecordStatusConflict counts one status write refused for a conflict.
func (m *Sync) RecordStatusConflict() {
	m.statusConflicts.Inc()
}

// SetAccountsEnabled says whether the manager serves ClusterCloudAccounts
// now.
func (m *Sync) SetAccountsEnabled(enabled bool) {
	v := 0.0
	if enabled {
		v = 1
	}
	m.accountsEnabled.Set(v)
}

// RecordSync counts one sync of part that ended with reason (Synced on
// success).
func (m *Sync) RecordSync(part, reason string) {
	m.syncs.WithLabelValues(part, reason).Inc()
}

// RecordItems sets how many items of kind the cloud last reported for watch.
func (m *Sync) RecordItems(watch types.NamespacedName, kind string, n int32) {
	m.items.WithLabelValues(watch.Namespace, watch.Name, kind).Set(float64(n))
}

// Forget drops the series of a deleted watch.
func (m *Sync) Forget(watch types.NamespacedName) {
	m.items.DeletePartialMatch(prometheus.Labels{"namespace": watch.Namespace, "name": watch.Name})
}

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

// State is a prometheus.Collector of the watches' state. It is safe for
// concurrent use: the controller sets snapshots while Prometheus scrapes.
type State struct {
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

// Option tunes a State.
type Option func(*State)

// WithMaxItemBytes bounds the item series of each watch to n bytes, charged
// as the label values' bytes plus 256 per series; default
// DefaultMaxItemBytes.
func WithMaxItemBytes(n int) Option {
	return func(c *State) { c.maxItemBytes = max(0, n) }
}

// NewState returns an empty collector. With itemMetrics false it emits
// only the per-watch families (conditions, last sync, interval), not one
// series per pipe, endpoint and alert: for very many watches, or when item
// names are not to be exported.
//
// The item series of one watch are bounded in bytes (WithMaxItemBytes): past
// the bound a scrape shows the first items of each list in the order of
// their label values (ID first), alerts before endpoints before pipes, and
// servicewatch_item_metrics_omitted says how many of each kind it left out.
func NewState(itemMetrics bool, opts ...Option) *State {
	watch := []string{"namespace", "servicewatch"}
	with := func(labels ...string) []string { return append(watch[:2:2], labels...) }
	c := &State{
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
func (c *State) MaxItemBytes() int {
	if !c.itemMetrics {
		return 0
	}
	return c.maxItemBytes
}

// Set replaces the snapshot of w.Namespace/w.Name.
func (c *State) Set(w Watch) {
	w = c.normalize(w)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watches[watchKey{w.Namespace, w.Name}] = w
}

// SetIfAbsent sets the snapshot of a watch the collector knows nothing of
// yet, and leaves a known one alone: a status read back from the API server
// may hold truncated lists where the last sync's snapshot holds them all.
func (c *State) SetIfAbsent(w Watch) {
	c.mu.Lock()
	_, known := c.watches[watchKey{w.Namespace, w.Name}]
	c.mu.Unlock()
	if !known {
		c.Set(w)
	}
}

// Delete forgets a watch: its series are gone from the next scrape on.
func (c *State) Delete(namespace, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.watches, watchKey{namespace, name})
}

// DefaultMaxItemBytes is the default bound on the item series of one watch,
// in the bytes they are charged (see seriesBytes). It keeps about a thousand
// items of a typical service (UUIDs and short names), and bounds what a
// tenant whose cloud serves long names or very many items costs the manager
// and Prometheus: 60 watches at the bound are about 60,000 series at most.
const DefaultMaxItemBytes = 256 << 10

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
