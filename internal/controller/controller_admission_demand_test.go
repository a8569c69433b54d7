package controller

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/pacing"
	"github.com/servicewatch/servicewatch/internal/tenancy"
)

func TestSetIntervalMetCondition(t *testing.T) {
	w := testWatch() // interval 1m
	setIntervalMetCondition(w, pacing.Allowance{Every: time.Minute})
	if condition(w, swv1.ConditionIntervalMet) != "absent" {
		t.Error("IntervalMet present while the interval is met")
	}
	setIntervalMetCondition(w, pacing.Allowance{Every: 132 * time.Second, Share: tenancy.Share{Share: 1.0 / 6, Need: 1.0 / 3}})
	if got := condition(w, swv1.ConditionIntervalMet); got != "False/BudgetExceeded" {
		t.Errorf("IntervalMet = %s", got)
	}
	if msg := w.Status.Conditions[0].Message; !strings.Contains(msg, "every 2m12s instead of every 1m0s") {
		t.Errorf("message %q does not give the effective interval", msg)
	}
	if msg := w.Status.Conditions[0].Message; !strings.Contains(msg, "this namespace's share of the key is 10.0 calls/min; its watches need 20.0") {
		t.Errorf("message %q does not give the namespace's share and need", msg)
	}
	setIntervalMetCondition(w, pacing.Allowance{Every: time.Minute})
	if condition(w, swv1.ConditionIntervalMet) != "absent" {
		t.Error("IntervalMet outlived the overload")
	}
}

// The demand gauge follows the budgets in use: a budget no watch uses any
// more (a rotated key, deleted watches) loses its series.
func TestBudgetDemandSeriesFollowTheBudgetsInUse(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.NewSync(reg)
	if err != nil {
		t.Fatal(err)
	}
	gauge := func(api, fp string) string {
		return fmt.Sprintf(`servicewatch_budget_demand_ratio{api=%q,budget=%q}`, api, fp)
	}
	shown := func() map[string]float64 {
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, f := range families {
			if f.GetName() != "servicewatch_budget_demand_ratio" {
				continue
			}
			for _, s := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range s.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				out[gauge(labels["api"], labels["budget"])] = s.GetGauge().GetValue()
			}
		}
		return out
	}
	pacer := pacing.New[types.NamespacedName, readKey](pacing.NewClock(time.Now, nil), nil)
	watch := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }
	note := func(name string, demands ...pacing.Demand[readKey]) {
		pacer.Demand(pacing.Watch[types.NamespacedName]{Key: watch(name), Every: time.Second}, demands)
		m.PublishBudgetDemands(pacer.TakeDemandChanges)
	}
	forget := func(name string) {
		pacer.Forget(watch(name))
		m.PublishBudgetDemands(pacer.TakeDemandChanges)
	}
	reads := func(n int) []readKey {
		out := make([]readKey, n)
		for i := range out {
			out[i] = readKey{kind: alertReadKind, alertID: fmt.Sprint(i)}
		}
		return out
	}
	note("a", pacing.Demand[readKey]{API: "management", Budget: "key-a", Label: "aaa", Allowed: 1, Reads: reads(2)},
		pacing.Demand[readKey]{API: "alert", Budget: "token-b", Label: "bbb", Allowed: 8, Reads: reads(5)})
	if got, want := shown(), map[string]float64{gauge("management", "aaa"): 2, gauge("alert", "bbb"): 0.625}; !maps.Equal(got, want) {
		t.Fatalf("series %v, want %v", got, want)
	}
	// A budget whose fingerprint collides with another's is its own budget
	// (0.625 and 0.25, not 0.875 together); the label shows the higher.
	note("c", pacing.Demand[readKey]{API: "alert", Budget: "token-c", Label: "bbb", Allowed: 8, Reads: reads(2)})
	if got, want := shown(), map[string]float64{gauge("management", "aaa"): 2, gauge("alert", "bbb"): 0.625}; !maps.Equal(got, want) {
		t.Fatalf("with a colliding budget: series %v, want %v", got, want)
	}
	note("a", pacing.Demand[readKey]{API: "alert", Budget: "token-b", Label: "bbb", Allowed: 8, Reads: reads(1)})
	if got, want := shown(), map[string]float64{gauge("alert", "bbb"): 0.25}; !maps.Equal(got, want) {
		t.Fatalf("after the management key went away: series %v, want %v", got, want)
	}
	forget("a")
	if got, want := shown(), map[string]float64{gauge("alert", "bbb"): 0.25}; !maps.Equal(got, want) {
		t.Fatalf("after one of two colliding budgets went away: series %v, want %v", got, want)
	}
	forget("c")
	if got := shown(); len(got) != 0 {
		t.Fatalf("after every watch went away: series %v", got)
	}
}
