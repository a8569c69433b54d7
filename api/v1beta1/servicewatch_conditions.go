package v1beta1

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GetConditions returns the conditions of the ServiceWatch's status.
func (w *ServiceWatch) GetConditions() []metav1.Condition {
	return w.Status.Conditions
}

// SetConditions replaces the conditions of the ServiceWatch's status.
func (w *ServiceWatch) SetConditions(conditions []metav1.Condition) {
	w.Status.Conditions = conditions
}

// Condition returns the status condition of type t, or nil.
func (w *ServiceWatch) Condition(t string) *metav1.Condition {
	return meta.FindStatusCondition(w.Status.Conditions, t)
}

// ConditionIs tells whether the condition of type t has the status and
// reason, and was computed for the watch's current generation.
func (w *ServiceWatch) ConditionIs(t string, status metav1.ConditionStatus, reason string) bool {
	c := w.Condition(t)
	return c != nil && c.Status == status && c.Reason == reason && c.ObservedGeneration == w.Generation
}

// IsReady tells whether the watch is Ready for its current generation: the
// one answer to "is it Ready" that the controller, the plugin, the demo and
// the test harnesses share.
func (w *ServiceWatch) IsReady() bool {
	return w.ConditionIs(ConditionReady, metav1.ConditionTrue, ReasonSynced)
}

// SetCondition adds or updates a condition, keeping its lastTransitionTime
// when its status does not change.
func (w *ServiceWatch) SetCondition(c metav1.Condition) {
	meta.SetStatusCondition(&w.Status.Conditions, c)
}

// DeleteCondition removes the condition of type t, if present.
func (w *ServiceWatch) DeleteCondition(t string) {
	meta.RemoveStatusCondition(&w.Status.Conditions, t)
}
