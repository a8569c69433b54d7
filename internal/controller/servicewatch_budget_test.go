package controller

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

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
				factor = b.note(types.NamespacedName{Namespace: "ns", Name: fmt.Sprint(i)}, tt.every,
					[]budgetDemand{{fingerprint: "key-1", allowed: allowed, callsPerSync: 2}})
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
		b.note(key(i), 30*time.Second, []budgetDemand{{fingerprint: "busy", allowed: 1, callsPerSync: 2}})
	}
	if f := b.note(key(100), 30*time.Second, []budgetDemand{{fingerprint: "quiet", allowed: 1, callsPerSync: 2}}); f != 1 {
		t.Errorf("a watch on another key is stretched by %v", f)
	}
	if r := b.ratios()["busy"]; math.Abs(r-20*2/30.0) > 1e-9 {
		t.Errorf("busy ratio = %v", r)
	}
	for i := range 20 {
		b.forget(key(i))
	}
	if _, ok := b.ratios()["busy"]; ok {
		t.Error("a budget with no watches left is still reported")
	}
	// Noting a watch again replaces, never adds to, what it asked.
	b.note(key(100), 30*time.Second, []budgetDemand{{fingerprint: "quiet", allowed: 1, callsPerSync: 2}})
	if r := b.ratios()["quiet"]; math.Abs(r-2/30.0) > 1e-9 {
		t.Errorf("quiet ratio = %v after noting the same watch twice", r)
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
