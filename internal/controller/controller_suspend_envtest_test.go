package controller_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/metrics"
)

// A suspended watch leaves the budget book: the other watches on its
// credentials are no longer stretched for calls it does not make, and the
// budget's demand ratio drops; resuming puts it back (issue 17).
func TestSuspendedWatchLeavesTheBudgetBook(t *testing.T) {
	f := newFixture(t)
	f.createSecrets()
	reg := prometheus.NewRegistry()
	syncMetrics, err := metrics.NewSync(reg)
	if err != nil {
		t.Fatal(err)
	}
	// One call a second on each budget: the heavy watch's 60 alerts every
	// 30s ask for 2.
	cloud := &refusingCloud{}
	r := controller.NewTestReconciler(t.Context(), env.Client, env.Client, cloud, cloud, syncMetrics)
	light := f.newWatch("light", "alert-1")
	light.Spec.Interval = metav1.Duration{Duration: 30 * time.Second}
	var many []string
	for i := range 60 {
		many = append(many, fmt.Sprintf("alert-%d", i+100))
	}
	heavy := f.newWatch("heavy", many...)
	heavy.Spec.Interval = metav1.Duration{Duration: 30 * time.Second}
	f.create(light)
	f.create(heavy)
	alertRatio := func() float64 {
		t.Helper()
		for _, m := range controller.GatheredSeries(t, reg, "servicewatch_budget_demand_ratio") {
			for _, l := range m.GetLabel() {
				if l.GetName() == "api" && l.GetValue() == "alert" {
					return m.GetGauge().GetValue()
				}
			}
		}
		return 0
	}

	r.BudgetedInterval(f.ctx, heavy)
	if got := r.BudgetedInterval(f.ctx, light); got <= 30*time.Second {
		t.Fatalf("beside the heavy watch the light one syncs every %v, want it stretched past 30s", got)
	}
	if got := alertRatio(); got <= 1 {
		t.Fatalf("the alert budget's demand ratio is %v with both watches, want over 1", got)
	}

	heavy.Spec.Suspend = true
	if err := r.Suspend(f.ctx, heavy); err != nil {
		t.Fatal(err)
	}
	if got := alertRatio(); got > 1 {
		t.Errorf("the heavy watch suspended, the alert budget's demand ratio is still %v, want at most 1", got)
	}
	if got := r.BudgetedInterval(f.ctx, light); got != 30*time.Second {
		t.Errorf("the heavy watch suspended, the light one syncs every %v, want its own 30s", got)
	}

	heavy.Spec.Suspend = false // resumed: its next sync asks again
	r.BudgetedInterval(f.ctx, heavy)
	if got := r.BudgetedInterval(f.ctx, light); got <= 30*time.Second {
		t.Errorf("the heavy watch resumed, the light one syncs every %v, want it stretched again", got)
	}
}
