package objects

import "testing"

func TestDecodeSkipsEmptyDocumentsAndIndexesByID(t *testing.T) {
	in := []byte(`---
apiVersion: v1
kind: Namespace
metadata:
  name: a
---
# only a comment
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  namespace: a
`)
	objs, err := Decode(in)
	if err != nil {
		t.Fatal(err)
	}
	m := ByID(objs)
	if len(objs) != 2 || m["Namespace/a"] == nil || m["ConfigMap/a/c"] == nil {
		t.Errorf("got %d objects, by ID %v; want Namespace/a and ConfigMap/a/c", len(objs), m)
	}
	if _, err := Decode([]byte("kind: [")); err == nil {
		t.Error("broken YAML decoded without error")
	}
}
