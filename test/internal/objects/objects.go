// Package objects reads rendered Kubernetes manifests (kubectl kustomize,
// helm template) into unstructured objects, for the tests that check what
// the chart and config/ install; one decoder, so both read YAML alike.
package objects

import (
	"bytes"
	"errors"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Decode returns each non-empty YAML or JSON document of b as an object.
func Decode(b []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// ID names an object as Kind/namespace/name, or Kind/name for one without
// a namespace.
func ID(u *unstructured.Unstructured) string {
	if u.GetNamespace() != "" {
		return u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
	}
	return u.GetKind() + "/" + u.GetName()
}

// ByID indexes objects by ID.
func ByID(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	m := map[string]*unstructured.Unstructured{}
	for _, u := range objs {
		m[ID(u)] = u
	}
	return m
}
