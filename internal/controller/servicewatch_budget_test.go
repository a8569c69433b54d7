package controller

import (
	"fmt"
	"maps"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
)

func TestBudgetBookStretchesWhenOverBudget(t *testing.T) {
	const allowed = 10.0 / 11 // 10 calls per 11 s
	tests := []struct {
		name       string
		watches    int
		every      time.Duration
		wantFactor float64
	}{
		{"30 watches at 5m fit: 0.2 calls/s of 0.91", 30, 5 * time.Minute, 1},
		{"30 watches at 30s ask 2 calls/s: stretched by 2.2", 30, 30 * time.Second, 2.2},
		{"one watch alone at 30s fits", 1, 30 * time.Second, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBudgetBook()
			var factor float64
			for i := range tt.watches {
				factor = b.note(types.NamespacedName{Namespace: "ns", Name: fmt.Sprint(i)}, tt.every, uint64(i),
					[]budgetDemand{{fingerprint: "key-1", allowed: allowed, reads: serviceReads(fmt.Sprint(i))}})
			}
			if math.Abs(factor-tt.wantFactor) > 0.01 {
				t.Errorf("factor = %.3f, want %.3f", factor, tt.wantFactor)
			}
			// The stretched demand fits the budget.
			if got := float64(tt.watches*2) / stretched(tt.every, factor).Seconds(); got > allowed+1e-9 {
				t.Errorf("stretched demand %.3f calls/s is over the budget's %.3f", got, allowed)
			}
		})
	}
}

func TestBudgetBookForgetsAndSeparatesBudgets(t *testing.T) {
	b := newBudgetBook()
	key := func(i int) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: fmt.Sprint(i)} }
	for i := range 20 {
		b.note(key(i), 30*time.Second, uint64(i), []budgetDemand{{fingerprint: "busy", allowed: 1, reads: serviceReads(fmt.Sprint(i))}})
	}
	if f := b.note(key(100), 30*time.Second, 100, []budgetDemand{{fingerprint: "quiet", allowed: 1, reads: serviceReads("100")}}); f != 1 {
		t.Errorf("a watch on another key is stretched by %v", f)
	}
	if r := b.ratios()["busy"]; math.Abs(r.ratio-20*2/30.0) > 1e-9 {
		t.Errorf("busy ratio = %v", r)
	}
	for i := range 20 {
		b.forget(key(i))
	}
	if _, ok := b.ratios()["busy"]; ok {
		t.Error("a budget with no watches left is still reported")
	}
	// Noting a watch again replaces, never adds to, what it asked.
	b.note(key(100), 30*time.Second, 100, []budgetDemand{{fingerprint: "quiet", allowed: 1, reads: serviceReads("100")}})
	if r := b.ratios()["quiet"]; math.Abs(r.ratio-2/30.0) > 1e-9 {
		t.Errorf("quiet ratio = %v after noting the same watch twice", r)
	}
}

// serviceReads are the two list reads of a service of its own.
func serviceReads(service string) []readKey {
	return []readKey{{kind: pipesReadKind, serviceID: service}, {kind: endpointsReadKind, serviceID: service}}
}

// Watches that make a read together ask for it once; the same read made at
// other moments (another interval, another phase group) is asked for again.
func TestBudgetBookCountsSharedReadsOnce(t *testing.T) {
	const allowed = 10.0 / 11
	alert := func(id string) readKey { return readKey{kind: alertReadKind, alertID: id} }
	type watch struct {
		every time.Duration
		group uint64
		reads []readKey
	}
	same := func(n int, w watch) []watch {
		out := make([]watch, n)
		for i := range out {
			out[i] = w
		}
		return out
	}
	tests := []struct {
		name       string
		watches    []watch
		wantCalls  float64 // per second
		wantFactor float64
	}{
		{"10 watches of one service at 30s ask 2 calls per 30s", same(10, watch{30 * time.Second, 1, serviceReads("a")}), 2.0 / 30, 1},
		{"30 watches of one service at 30s fit where 30 services need 2.2x",
			same(30, watch{30 * time.Second, 1, serviceReads("a")}), 2.0 / 30, 1},
		{"one service at two intervals: each interval reads for itself",
			append(same(5, watch{30 * time.Second, 1, serviceReads("a")}), same(5, watch{time.Minute, 1, serviceReads("a")})...), 2.0/30 + 2.0/60, 1},
		{"one alert, two services: the groups read it at their own phases",
			[]watch{{30 * time.Second, 1, []readKey{alert("x")}}, {30 * time.Second, 2, []readKey{alert("x")}}, {30 * time.Second, 2, []readKey{alert("x")}}}, 2.0 / 30, 1},
		{"two alerts, one group: an alert named twice is read once",
			[]watch{{30 * time.Second, 1, []readKey{alert("x"), alert("y")}}, {30 * time.Second, 1, []readKey{alert("y"), alert("x")}}}, 2.0 / 30, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBudgetBook()
			var factor float64
			for i, w := range tt.watches {
				factor = b.note(types.NamespacedName{Namespace: "ns", Name: fmt.Sprint(i)}, w.every, w.group,
					[]budgetDemand{{fingerprint: "key-1", allowed: allowed, reads: w.reads}})
			}
			if got := b.ratios()["key-1"].ratio * allowed; math.Abs(got-tt.wantCalls) > 1e-9 {
				t.Errorf("demand = %.4f calls/s, want %.4f", got, tt.wantCalls)
			}
			if math.Abs(factor-tt.wantFactor) > 0.01 {
				t.Errorf("factor = %.3f, want %.3f", factor, tt.wantFactor)
			}
			for i := range tt.watches {
				b.forget(types.NamespacedName{Namespace: "ns", Name: fmt.Sprint(i)})
			}
			if len(b.ratios()) != 0 {
				t.Errorf("budgets left after every watch was forgotten: %v", b.ratios())
			}
		})
	}
}

func TestSetIntervalMetCondition(t *testing.T) {
	w := testWatch() // interval 1m
	setIntervalMetCondition(w, time.Minute)
	if condition(w, swv1.ConditionIntervalMet) != "absent" {
		t.Error("IntervalMet present while the interval is met")
	}
	setIntervalMetCondition(w, 132*time.Second)
	if got := condition(w, swv1.ConditionIntervalMet); got != "False/BudgetExceeded" {
		t.Errorf("IntervalMet = %s", got)
	}
	if msg := w.Status.Conditions[0].Message; !strings.Contains(msg, "every 2m12s instead of every 1m0s") {
		t.Errorf("message %q does not give the effective interval", msg)
	}
	setIntervalMetCondition(w, time.Minute)
	if condition(w, swv1.ConditionIntervalMet) != "absent" {
		t.Error("IntervalMet outlived the overload")
	}
}

// The demand gauge follows the budgets in use: a budget no watch uses any
// more (a rotated key, deleted watches) loses its series.
func TestBudgetDemandSeriesFollowTheBudgetsInUse(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
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
	m.setBudgetDemands(map[string]budgetRatio{"aaa": {api: "management", ratio: 2}, "bbb": {api: "alert", ratio: 0.5}})
	if got, want := shown(), map[string]float64{gauge("management", "aaa"): 2, gauge("alert", "bbb"): 0.5}; !maps.Equal(got, want) {
		t.Fatalf("series %v, want %v", got, want)
	}
	m.setBudgetDemands(map[string]budgetRatio{"bbb": {api: "alert", ratio: 0.25}})
	if got, want := shown(), map[string]float64{gauge("alert", "bbb"): 0.25}; !maps.Equal(got, want) {
		t.Fatalf("after the management key went away: series %v, want %v", got, want)
	}
	m.setBudgetDemands(nil)
	if got := shown(); len(got) != 0 {
		t.Fatalf("after every watch went away: series %v", got)
	}
}
