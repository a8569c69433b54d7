package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// GetConditions returns the conditions of the ServiceWatch's status.
func (w *ServiceWatch) GetConditions() []metav1.Condition {
	return w.Status.Conditions
}

// SetConditions replaces the conditions of the ServiceWatch's status.
func (w *ServiceWatch) SetConditions(conditions []metav1.Condition) {
	w.Status.Conditions = conditions
}
