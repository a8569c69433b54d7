package v1alpha1_test

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

func unstructuredFrom(obj map[string]any) *unstructured.Unstructured {
	if obj == nil {
		obj = map[string]any{}
	}
	return &unstructured.Unstructured{Object: obj}
}
