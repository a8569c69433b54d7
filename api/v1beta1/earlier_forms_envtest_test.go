package v1beta1_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// earlierGroup is the group of a copy of the ServiceWatch CRD, so that its
// schema can go through an upgrade without touching the one the other tests
// use.
const earlierGroup = "earlier.servicewatch.test"

// The status an earlier manager stored (kinesis timestamp and pubsub
// ackDeadline as strings) outlives the CRD's change to integers: the API
// server still serves it, today's types decode it, a status patch that
// keeps it is accepted (the API server ratchets: a value the patch does not
// change is not validated again), and the next patch of the pipes replaces
// it with integers.
func TestStatusOfEarlierManagersSurvivesTheSchemaChange(t *testing.T) {
	testenv.SkipShort(t)
	ctx := context.Background()
	crd := earlierCRD(t)
	setKinesisAndPubSubTypes(t, crd, "string")
	if err := env.Client.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, crd) })
	gvk := schema.GroupVersionKind{Group: earlierGroup, Version: "v1beta1", Kind: "ServiceWatch"}
	w := &unstructured.Unstructured{}
	w.SetGroupVersionKind(gvk)
	w.SetNamespace("default")
	w.SetName("earlier")
	spec, err := toMap(validWatch("earlier").Spec)
	if err != nil {
		t.Fatal(err)
	}
	w.Object["spec"] = spec
	eventually(t, "creating a watch of the copied CRD", func() error { return env.Client.Create(ctx, w) })
	earlierPipes := []any{map[string]any{"id": "p1", "source": map[string]any{
		"kinesis": map[string]any{"timestamp": "1767225600", "iteratorType": "AT_TIMESTAMP"},
	}}, map[string]any{"id": "p2", "source": map[string]any{"pubsub": map[string]any{"ackDeadline": "60"}}}}
	patchStatus(t, w, map[string]any{"pipes": earlierPipes})

	// The manager of issue 28 is installed: the schema says integer.
	eventually(t, "changing the CRD's schema", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
			return err
		}
		setKinesisAndPubSubTypes(t, crd, "integer")
		return env.Client.Update(ctx, crd)
	})
	waitForIntegerSchema(t, gvk)

	// Read: served as stored, and today's types decode it.
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(gvk)
	eventually(t, "reading the stored watch", func() error { return env.Client.Get(ctx, client.ObjectKeyFromObject(w), got) })
	raw, err := utiljson.Marshal(got.Object["status"])
	if err != nil {
		t.Fatal(err)
	}
	var status swv1.ServiceWatchStatus
	if err := utiljson.Unmarshal(raw, &status); err != nil {
		t.Fatalf("today's types cannot decode a status of an earlier manager: %v\n%s", err, raw)
	}
	if len(status.Pipes) != 2 || status.Pipes[0].Source.Kinesis.Timestamp != nil || status.Pipes[1].Source.PubSub.AckDeadline != nil {
		t.Errorf("decoded %s, want two pipes, their string values absent", raw)
	}

	// A patch that keeps the pipes as stored, and one that replaces them.
	patchStatus(t, got, map[string]any{"lastSyncTime": "2026-11-26T12:00:00Z"})
	todayPipes := []any{map[string]any{"id": "p1", "source": map[string]any{"kinesis": map[string]any{"timestamp": 1767225600}}},
		map[string]any{"id": "p2", "source": map[string]any{"pubsub": map[string]any{"ackDeadline": 60}}}}
	patchStatus(t, got, map[string]any{"pipes": todayPipes})
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(w), got); err != nil {
		t.Fatal(err)
	}
	if ts, _, _ := unstructured.NestedFieldNoCopy(got.Object, "status", "pipes"); !strings.Contains(mustMarshal(t, ts), `"timestamp":1767225600`) {
		t.Errorf("pipes after the patch: %s, want the integer", mustMarshal(t, ts))
	}
	// A new string is refused: the schema is integer now.
	p := got.DeepCopy()
	p.Object["status"] = map[string]any{"pipes": earlierPipes}
	if err := env.Client.Status().Patch(ctx, p, client.MergeFrom(got)); err == nil {
		t.Error("a new string timestamp was accepted; want the integer schema to refuse it")
	}
}

// waitForIntegerSchema waits until the API server validates with the new
// schema: a new watch's status with strings is refused.
func waitForIntegerSchema(t *testing.T, gvk schema.GroupVersionKind) {
	t.Helper()
	ctx := context.Background()
	probe := &unstructured.Unstructured{}
	probe.SetGroupVersionKind(gvk)
	probe.SetNamespace("default")
	probe.SetName("probe")
	spec, err := toMap(validWatch("probe").Spec)
	if err != nil {
		t.Fatal(err)
	}
	probe.Object["spec"] = spec
	if err := env.Client.Create(ctx, probe); err != nil {
		t.Fatal(err)
	}
	// Each try writes strings the probe does not hold yet: once a try is
	// accepted under the old schema, the API server's ratcheting would let
	// the same values through again without validating them.
	tries := 0
	eventually(t, "the new schema to refuse strings", func() error {
		tries++
		pipes := []any{map[string]any{"id": "p1", "source": map[string]any{
			"kinesis": map[string]any{"timestamp": fmt.Sprint(1767225600 + tries)},
		}}}
		patch := client.RawPatch("application/merge-patch+json", []byte(mustMarshal(t, map[string]any{"status": map[string]any{"pipes": pipes}})))
		if err := env.Client.Status().Patch(ctx, probe.DeepCopy(), patch); err == nil {
			return errors.New("a string timestamp was accepted")
		}
		return nil
	})
}

// earlierCRD is the ServiceWatch CRD of config/crd/bases, in earlierGroup.
func earlierCRD(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases", "cloud.servicewatch.io_servicewatches.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &crd.Object); err != nil {
		t.Fatal(err)
	}
	crd.SetName("servicewatches." + earlierGroup)
	if err := unstructured.SetNestedField(crd.Object, earlierGroup, "spec", "group"); err != nil {
		t.Fatal(err)
	}
	return crd
}

// setKinesisAndPubSubTypes sets the schema's type of the kinesis timestamp
// and the pubsub ackDeadline of status.pipes.
func setKinesisAndPubSubTypes(t *testing.T, crd *unstructured.Unstructured, typ string) {
	t.Helper()
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	// Every served version has the one schema (conversion: None).
	for i := range versions {
		v, ok := versions[i].(map[string]any)
		if !ok {
			t.Fatalf("the CRD's version %d is a %T", i, versions[i])
		}
		source := []string{"schema", "openAPIV3Schema", "properties", "status", "properties", "pipes", "items", "properties", "source", "properties"}
		for _, leaf := range [][]string{{"kinesis", "properties", "timestamp"}, {"pubsub", "properties", "ackDeadline"}} {
			path := append(append([]string{}, source...), leaf...)
			field, ok, err := unstructured.NestedMap(v, path...)
			if !ok || err != nil {
				t.Fatalf("%v not in the CRD: %v", path, err)
			}
			field["type"] = typ
			delete(field, "format")
			if err := unstructured.SetNestedMap(v, field, path...); err != nil {
				t.Fatal(err)
			}
		}
		versions[i] = v
	}
	if err := unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
}

// patchStatus merge-patches w's status with status, or fails the test.
func patchStatus(t *testing.T, w *unstructured.Unstructured, status map[string]any) {
	t.Helper()
	patch := client.RawPatch("application/merge-patch+json", []byte(mustMarshal(t, map[string]any{"status": status})))
	eventually(t, "patching status with "+mustMarshal(t, status), func() error {
		return env.Client.Status().Patch(context.Background(), w.DeepCopy(), patch)
	})
}

// eventually retries f for a few seconds: the API server serves a new CRD,
// or a new schema, a moment after it accepted it.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err = f(); err == nil {
			return
		}
	}
	t.Fatalf("%s: %v", what, err)
}

func toMap(v any) (map[string]any, error) {
	b, err := utiljson.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := utiljson.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := utiljson.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
