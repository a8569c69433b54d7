package controller_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/metrics"
)

// reviewedCondition is a condition another writer (a reviewer's tool, a
// policy engine) keeps in the watch's status.
const reviewedCondition = "example.com/Reviewed"

// setOthersConditions writes conditions into the watch's status as another
// client does: through the status subresource, on the watch as it is now.
func (f *fixture) setOthersConditions(name string, conds ...metav1.Condition) *swv1.ServiceWatch {
	f.t.Helper()
	w := f.get(name)
	for _, c := range conds {
		c.ObservedGeneration = w.Generation
		w.SetCondition(c)
	}
	if err := env.Client.Status().Update(f.ctx, w); err != nil {
		f.t.Fatalf("setting conditions of %s as another writer: %v", name, err)
	}
	return w
}

// The controller owns its conditions and only those: another writer's
// condition survives every sync, and a write the controller built on a copy
// of the watch older than the API server's (a cache that lags) clobbers
// nothing, while on the conditions it owns the controller's value wins.
func TestAnotherWritersConditionSurvivesSyncs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.readyWatch("reviewed")
	reviewed := metav1.Condition{Type: reviewedCondition, Status: metav1.ConditionTrue, Reason: "Approved", Message: "reviewed by the platform team"}
	f.setOthersConditions("reviewed", reviewed)

	for i := range 3 {
		w := f.requestSyncAndWait("reviewed")
		c := w.Condition(reviewedCondition)
		if c == nil || c.Status != reviewed.Status || c.Reason != reviewed.Reason || c.Message != reviewed.Message {
			t.Fatalf("after sync %d, the other writer's condition is %+v, want %+v", i+1, c, reviewed)
		}
		if !isReady(w) {
			t.Fatalf("after sync %d the watch is not Ready: %+v", i+1, w.Status.Conditions)
		}
	}

	// A copy as a lagging cache shows it; then the other writer changes its
	// condition and tampers with Ready, which the controller owns.
	stale := f.get("reviewed")
	rejected := metav1.Condition{Type: reviewedCondition, Status: metav1.ConditionFalse, Reason: "Rejected", Message: "changed after the copy"}
	f.setOthersConditions("reviewed", rejected,
		metav1.Condition{Type: swv1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Tampered", Message: "not the controller's"})

	syncMetrics, err := metrics.NewSync(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	cloud := &refusingCloud{}
	r := controller.NewTestReconciler(t.Context(), env.Client, env.Client, cloud, cloud, syncMetrics)
	r.WriteInterruptedSync(f.ctx, stale) // every part fails: Unreachable

	w := f.get("reviewed")
	if c := w.Condition(reviewedCondition); c == nil || c.Reason != rejected.Reason || c.Message != rejected.Message {
		t.Errorf("a write built on a stale copy clobbered the other writer's condition: %+v, want %+v", c, rejected)
	}
	if !w.ConditionIs(swv1.ConditionReady, metav1.ConditionFalse, swv1.ReasonUnreachable) ||
		!w.ConditionIs(swv1.ConditionPipesSynced, metav1.ConditionFalse, swv1.ReasonUnreachable) {
		t.Errorf("the controller's write did not win on its own conditions: %s", indentedJSON(w.Status.Conditions))
	}
	if len(w.Status.Pipes) == 0 {
		t.Error("the failed sync wiped the pipes")
	}
}

// A status write built on a watch that another writer has changed since is
// refused by the API server, built again on the live watch, and counted in
// servicewatch_status_write_conflicts_total, so that an operator can see
// another client fighting over the watches' status.
func TestAConflictingStatusWriteIsCounted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.readyWatch("contended")
	reg := prometheus.NewRegistry()
	syncMetrics, err := metrics.NewSync(reg)
	if err != nil {
		t.Fatal(err)
	}
	cloud := &refusingCloud{}
	r := controller.NewTestReconciler(t.Context(), env.Client, env.Client, cloud, cloud, syncMetrics)
	if got := statusConflicts(t, reg); got != 0 {
		t.Fatalf("before any write, %g status conflicts counted, want 0", got)
	}

	// The controller builds on this copy; another writer changes the status
	// before the controller's patch.
	built := f.get("contended")
	f.setOthersConditions("contended", metav1.Condition{Type: reviewedCondition, Status: metav1.ConditionTrue, Reason: "Approved", Message: "written between build and patch"})
	r.WriteInterruptedSync(f.ctx, built)

	if got := statusConflicts(t, reg); got != 1 {
		t.Errorf("servicewatch_status_write_conflicts_total is %g after one conflicting write, want 1", got)
	}
	w := f.get("contended")
	if !w.ConditionIs(swv1.ConditionPipesSynced, metav1.ConditionFalse, swv1.ReasonUnreachable) {
		t.Errorf("the write was not built again after its conflict: %s", indentedJSON(w.Status.Conditions))
	}
	if w.Condition(reviewedCondition) == nil {
		t.Error("the write after the conflict clobbered the other writer's condition")
	}
}

// statusConflicts is servicewatch_status_write_conflicts_total as reg shows
// it.
func statusConflicts(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	series := controller.GatheredSeries(t, reg, "servicewatch_status_write_conflicts_total")
	if len(series) != 1 {
		t.Fatalf("servicewatch_status_write_conflicts_total has %d series, want 1", len(series))
	}
	return series[0].GetCounter().GetValue()
}
