package storagemigration

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of one CRD's migration, the outcome label of
// servicewatch_storage_migration_runs_total.
const (
	// OutcomeMigrated: every object was rewritten and storedVersions trimmed.
	OutcomeMigrated = "migrated"
	// OutcomeUpToDate: nothing to do, nothing written.
	OutcomeUpToDate = "up_to_date"
	// OutcomeForbidden: the manager may not read the CRD (a namespaced
	// install); the CRD's owner migrates it.
	OutcomeForbidden = "forbidden"
	// OutcomeFailed: an object or the CRD could not be written; tried again.
	OutcomeFailed = "failed"
)

// Results of one object, the result label of
// servicewatch_storage_migration_objects_total.
const (
	// ResultRewritten: written again in the storage version.
	ResultRewritten = "rewritten"
	// ResultUnchanged: already stored in the storage version (created or
	// written since the upgrade); the API server wrote nothing.
	ResultUnchanged = "unchanged"
	// ResultGone: deleted between the list and the write; nothing to do.
	ResultGone = "gone"
	// ResultFailed: the write was refused; the CRD's storedVersions stays.
	ResultFailed = "failed"
)

// Metrics say whether a migration is pending and what it did. They are
// registered with a registry passed in (controller-runtime's, in the
// manager), so tests can build as many as they like.
type Metrics struct {
	pending *prometheus.GaugeVec
	objects *prometheus.CounterVec
	runs    *prometheus.CounterVec
	stale   *prometheus.GaugeVec
}

// NewMetrics creates the metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "servicewatch_storage_migration_pending",
			Help: "1 while some objects of the CRD may still be stored in a version other than its storage version (its status.storedVersions lists another); 0 once the manager rewrote them all and trimmed storedVersions.",
		}, []string{"crd"}),
		objects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "servicewatch_storage_migration_objects_total",
			Help: "Objects the storage migration handled, by CRD and result: rewritten (in the storage version), unchanged (already in it: nothing written), gone (deleted meanwhile) or failed.",
		}, []string{"crd", "result"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "servicewatch_storage_migration_runs_total",
			Help: "Storage migrations of a CRD, by outcome: migrated, up_to_date (nothing written), forbidden (the manager may not read the CRD) or failed (tried again).",
		}, []string{"crd", "outcome"}),
		stale: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "servicewatch_storage_migration_stale_managed_fields_objects",
			Help: "Objects of the CRD whose managed fields name a version the CRD lists but no longer serves, as the leader counted them at start; once that version is removed, applies to them fail until `kubectl servicewatch migrate` moves those fields. 0 while the CRD serves every version it lists.",
		}, []string{"crd"}),
	}
	for _, c := range []prometheus.Collector{m.pending, m.objects, m.runs, m.stale} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Metrics) setPending(crd string, pending bool) {
	if m == nil {
		return
	}
	v := 0.0
	if pending {
		v = 1
	}
	m.pending.WithLabelValues(crd).Set(v)
}

func (m *Metrics) setStale(crd string, objects int) {
	if m != nil {
		m.stale.WithLabelValues(crd).Set(float64(objects))
	}
}

func (m *Metrics) object(crd, result string) {
	if m != nil {
		m.objects.WithLabelValues(crd, result).Inc()
	}
}

func (m *Metrics) run(crd, outcome string) {
	if m != nil {
		m.runs.WithLabelValues(crd, outcome).Inc()
	}
}
