package main

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

func watchWithReady(name string, generation int64, status metav1.ConditionStatus, observed int64) *swv1.ServiceWatch {
	w := &swv1.ServiceWatch{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Generation: generation}}
	if status != "" {
		w.Status.Conditions = []metav1.Condition{{Type: swv1.ConditionReady, Status: status, ObservedGeneration: observed, Reason: swv1.ReasonSynced}}
	}
	return w
}

func TestReadinessCountsFlapsAndFirstReady(t *testing.T) {
	r := &readiness{watches: map[types.NamespacedName]*watchLife{}}
	for _, w := range []*swv1.ServiceWatch{
		watchWithReady("a", 1, "", 0),
		watchWithReady("a", 1, metav1.ConditionTrue, 1),
		watchWithReady("a", 1, metav1.ConditionFalse, 1),
		watchWithReady("a", 1, metav1.ConditionFalse, 1),
		watchWithReady("a", 1, metav1.ConditionTrue, 1),
		watchWithReady("a", 2, metav1.ConditionTrue, 1), // a new generation not yet synced
		watchWithReady("b", 1, metav1.ConditionUnknown, 1),
	} {
		r.observe(w)
	}
	total, ready, last, flaps := r.summary("ns")
	if total != 2 || ready != 0 || !last.IsZero() || flaps != 2 {
		t.Errorf("total %d ready %d last %v flaps %d; want 2, 0, zero (b never Ready), 2", total, ready, last, flaps)
	}
	a := types.NamespacedName{Namespace: "ns", Name: "a"}
	first := r.firstReady(a)
	if first.IsZero() {
		t.Fatal("a never recorded Ready")
	}
	r.observe(watchWithReady("a", 2, metav1.ConditionTrue, 2))
	r.observe(watchWithReady("b", 1, metav1.ConditionTrue, 1))
	total, ready, last, _ = r.summary("")
	if total != 2 || ready != 2 || last.Before(first) || !r.firstReady(a).Equal(first) {
		t.Errorf("total %d ready %d last %v; want 2, 2, b's first Ready; a's first Ready kept", total, ready, last)
	}
	if total, _, _, _ := r.summary("other"); total != 0 {
		t.Errorf("namespace filter: %d watches", total)
	}
	if _, ok := r.condition(a, swv1.ConditionReady); !ok {
		t.Error("a's Ready condition for its generation not found")
	}
	r.observe(watchWithReady("a", 3, metav1.ConditionTrue, 2))
	if _, ok := r.condition(a, swv1.ConditionReady); ok {
		t.Error("a condition of an older generation counted as current")
	}
}

func TestSelectScenarios(t *testing.T) {
	all, err := selectScenarios("")
	if err != nil || len(all) != len(scenarios()) {
		t.Fatalf("default: %d scenarios, %v", len(all), err)
	}
	some, err := selectScenarios("priority, ready-1000")
	if err != nil || len(some) != 2 || some[0].name != "priority" || some[1].name != "ready-1000" {
		t.Errorf("two by name: %v, %v", some, err)
	}
	if _, err := selectScenarios("ready"); err == nil {
		t.Error("unknown scenario accepted")
	}
}

func TestReadinessPipesShowing(t *testing.T) {
	r := &readiness{watches: map[types.NamespacedName]*watchLife{}}
	withPipes := func(name string, states ...string) *swv1.ServiceWatch {
		w := watchWithReady(name, 1, metav1.ConditionTrue, 1)
		for _, s := range states {
			w.Status.Pipes = append(w.Status.Pipes, swv1.Pipe{State: &s})
		}
		return w
	}
	r.observe(withPipes("a", "Stopped", "Running"))
	r.observe(withPipes("b", "Running", "Stopped"))
	changed := time.Now()
	if got := r.pipesShowing([]string{"Running", "Stopped"}, changed); len(got) != 0 {
		t.Errorf("states seen before the change counted: %v", got)
	}
	r.observe(withPipes("a", "Failed", "Failed"))
	first := r.pipesShowing([]string{"Failed", "Failed"}, changed)
	r.observe(withPipes("a", "Failed", "Failed")) // a resync that changes nothing
	r.observe(withPipes("b", "Failed", "Running"))
	got := r.pipesShowing([]string{"Failed", "Failed"}, changed)
	if len(first) != 1 || len(got) != 1 || !got[0].Equal(first[0]) {
		t.Errorf("a's change seen at %v, then %v; want once, kept across a resync, and b not counted", first, got)
	}
}
