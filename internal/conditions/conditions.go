// Package conditions reads and writes the conditions of any object that
// exposes them, so that the controller, the tests and the demo share one
// definition of what "Ready" means.
package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

// Getter is an object with a generation and status conditions, such as a
// *swv1.ServiceWatch.
type Getter interface {
	GetGeneration() int64
	GetConditions() []metav1.Condition
}

// Setter is a Getter whose conditions can be replaced.
type Setter interface {
	Getter
	SetConditions([]metav1.Condition)
}

// Get returns the condition of type t, or nil.
func Get(obj Getter, t string) *metav1.Condition {
	return meta.FindStatusCondition(obj.GetConditions(), t)
}

// Is tells whether the condition of type t has the status and reason, and
// was computed for the object's current generation.
func Is(obj Getter, t string, status metav1.ConditionStatus, reason string) bool {
	c := Get(obj, t)
	return c != nil && c.Status == status && c.Reason == reason && c.ObservedGeneration == obj.GetGeneration()
}

// IsReady tells whether the object is Ready for its current generation: the
// one answer to "is it Ready" that the controller, the tests and the demo
// share.
func IsReady(obj Getter) bool {
	return Is(obj, swv1.ConditionReady, metav1.ConditionTrue, swv1.ReasonSynced)
}

// Set adds or updates a condition, keeping lastTransitionTime when the status
// does not change.
func Set(obj Setter, c metav1.Condition) {
	conds := obj.GetConditions()
	meta.SetStatusCondition(&conds, c)
	obj.SetConditions(conds)
}

// Delete removes the condition of type t, if present.
func Delete(obj Setter, t string) {
	conds := obj.GetConditions()
	meta.RemoveStatusCondition(&conds, t)
	obj.SetConditions(conds)
}
