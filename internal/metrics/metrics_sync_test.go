package metrics_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"

	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/pacing"
	"github.com/servicewatch/servicewatch/internal/tenancy"
)

// A registry takes the metrics once; the read-slot waits have a series per
// level from the start; a deleted watch leaves no item series behind, and
// another's stay.
func TestMetricsRegisterAndForget(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.NewSync(reg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := metrics.NewSync(reg); err == nil {
		t.Error("registering the metrics twice with one registry succeeded")
	}
	if n, err := testutil.GatherAndCount(reg, "servicewatch_sync_slot_wait_seconds"); err != nil || n != 3 {
		t.Errorf("slot wait series before any wait: %d (%v), want one per level (3)", n, err)
	}
	a := types.NamespacedName{Namespace: "ns", Name: "a"}
	b := types.NamespacedName{Namespace: "ns", Name: "b"}
	m.RecordItems(a, "pipes", 3)
	m.RecordItems(a, "alerts", 1)
	m.RecordItems(b, "pipes", 7)
	m.Forget(a)
	if n, err := testutil.GatherAndCount(reg, "servicewatch_items"); err != nil || n != 1 {
		t.Errorf("item series after forgetting a: %d (%v), want b's only (1)", n, err)
	}
}

// Each namespace on a budget shows its share and its need; a namespace that
// leaves the budget, and a budget no watch uses, leave no series behind.
func TestNamespaceSharesFollowTheNamespaces(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.NewSync(reg)
	if err != nil {
		t.Fatal(err)
	}
	publish := func(r pacing.Ratio) { m.PublishBudgetDemands(func() []pacing.Ratio { return []pacing.Ratio{r} }) }
	publish(pacing.Ratio{API: "management", Label: "abc", Ratio: 2, Namespaces: map[string]tenancy.Share{
		"big": {Share: 0.7, Need: 1.6}, "one": {Share: 0.07, Need: 0.07},
	}})
	want := `
# HELP servicewatch_budget_namespace_share Calls per second of one client-side rate budget that a namespace's watches may make: its fair share by weight, what idle namespaces leave going to the others. Below servicewatch_budget_namespace_need, the namespace's watches sync less often (IntervalMet False); other namespaces are not slowed by it.
# TYPE servicewatch_budget_namespace_share gauge
servicewatch_budget_namespace_share{api="management",budget="abc",namespace="big"} 0.7
servicewatch_budget_namespace_share{api="management",budget="abc",namespace="one"} 0.07
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "servicewatch_budget_namespace_share"); err != nil {
		t.Error(err)
	}
	publish(pacing.Ratio{API: "management", Label: "abc", Ratio: 1.8, Namespaces: map[string]tenancy.Share{"big": {Share: 0.9, Need: 1.6}}})
	if n, _ := testutil.GatherAndCount(reg, "servicewatch_budget_namespace_share", "servicewatch_budget_namespace_need"); n != 2 {
		t.Errorf("series once one namespace left: %d, want big's share and need (2)", n)
	}
	publish(pacing.Ratio{API: "management", Label: "abc", Gone: true})
	if n, _ := testutil.GatherAndCount(reg, "servicewatch_budget_namespace_share", "servicewatch_budget_namespace_need"); n != 0 {
		t.Errorf("series once the budget is gone: %d, want 0", n)
	}
}
