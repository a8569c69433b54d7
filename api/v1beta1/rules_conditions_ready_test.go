package v1beta1_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

func TestIsReady(t *testing.T) {
	ready := metav1.Condition{Type: swv1.ConditionReady, Status: metav1.ConditionTrue, Reason: swv1.ReasonSynced, ObservedGeneration: 2}
	tests := []struct {
		name string
		gen  int64
		cond []metav1.Condition
		want bool
	}{
		{"Ready True for the current generation", 2, []metav1.Condition{ready}, true},
		{"no conditions yet", 2, nil, false},
		{"Ready for an older generation is not Ready", 3, []metav1.Condition{ready}, false},
		{"Ready False", 2, []metav1.Condition{{Type: swv1.ConditionReady, Status: metav1.ConditionFalse, Reason: swv1.ReasonServerError, ObservedGeneration: 2}}, false},
		{"Suspended", 2, []metav1.Condition{{Type: swv1.ConditionReady, Status: metav1.ConditionFalse, Reason: swv1.ReasonSuspended, ObservedGeneration: 2}}, false},
	}
	for _, tt := range tests {
		w := &swv1.ServiceWatch{ObjectMeta: metav1.ObjectMeta{Generation: tt.gen}, Status: swv1.ServiceWatchStatus{Conditions: tt.cond}}
		if got := w.IsReady(); got != tt.want {
			t.Errorf("%s: IsReady = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSetKeepsTransitionTimeAndDelete(t *testing.T) {
	w := &swv1.ServiceWatch{}
	w.SetCondition(metav1.Condition{Type: "A", Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: metav1.Unix(1, 0)})
	w.SetCondition(metav1.Condition{Type: "A", Status: metav1.ConditionTrue, Reason: "R2", LastTransitionTime: metav1.Unix(2, 0)})
	if c := w.Condition("A"); c == nil || c.Reason != "R2" || c.LastTransitionTime.Unix() != 1 {
		t.Errorf("after an update without a status change: %+v", c)
	}
	w.DeleteCondition("A")
	if w.Condition("A") != nil {
		t.Error("Delete left the condition")
	}
}
