package controller_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/conditions"
	"github.com/servicewatch/servicewatch/internal/controller"
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
		conditions.Set(w, c)
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
		c := conditions.Get(w, reviewedCondition)
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

	metrics, err := controller.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	r := controller.NewTestReconciler(t.Context(), env.Client, env.Client, &refusingCloud{}, metrics)
	r.WriteInterruptedSync(f.ctx, stale) // every part fails: Unreachable

	w := f.get("reviewed")
	if c := conditions.Get(w, reviewedCondition); c == nil || c.Reason != rejected.Reason || c.Message != rejected.Message {
		t.Errorf("a write built on a stale copy clobbered the other writer's condition: %+v, want %+v", c, rejected)
	}
	if !conditions.Is(w, swv1.ConditionReady, metav1.ConditionFalse, swv1.ReasonUnreachable) ||
		!conditions.Is(w, swv1.ConditionPipesSynced, metav1.ConditionFalse, swv1.ReasonUnreachable) {
		t.Errorf("the controller's write did not win on its own conditions: %s", indentedJSON(w.Status.Conditions))
	}
	if len(w.Status.Pipes) == 0 {
		t.Error("the failed sync wiped the pipes")
	}
}
