package v1beta1_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func unstructuredFrom(obj map[string]any) *unstructured.Unstructured {
	if obj == nil {
		obj = map[string]any{}
	}
	return &unstructured.Unstructured{Object: obj}
}

// lookup walks obj, decoded JSON, along path: a string steps into an object
// field, an int into an array element. A step that does not fit the shape
// fails the test with the path so far, where a bare type assertion would
// panic without saying which step.
func lookup(t *testing.T, obj any, path ...any) any {
	t.Helper()
	cur := obj
	for i, step := range path {
		switch key := step.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				t.Fatalf("%v: %T is not an object", path[:i], cur)
			}
			if cur, ok = m[key]; !ok {
				t.Fatalf("%v: no field %q", path[:i], key)
			}
		case int:
			a, ok := cur.([]any)
			if !ok || key >= len(a) {
				t.Fatalf("%v: %T has no element %d", path[:i], cur, key)
			}
			cur = a[key]
		default:
			t.Fatalf("path step %#v is neither a field name nor an index", step)
		}
	}
	return cur
}

// indentedJSON renders v for a failure message, or says why it cannot.
func indentedJSON(v any) string {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return fmt.Sprintf("%#v (not JSON: %v)", v, err)
	}
	return string(b)
}
