package v1beta1_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	swv1alpha1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// Both CRDs serve v1alpha1 and v1beta1 with one schema and store v1beta1:
// that is what lets the API server convert with no webhook, and what a
// v1alpha1 object needs to round-trip unchanged.
func TestBothVersionsServeOneSchema(t *testing.T) {
	var names []string
	t.Cleanup(func() {
		if !slices.Equal(names, swv1.CRDNames()) {
			t.Errorf("CRDNames() = %v, the CRD files name %v: the storage migration would miss one", swv1.CRDNames(), names)
		}
	})
	for _, file := range []string{"cloud.servicewatch.io_servicewatches.yaml", "cloud.servicewatch.io_clustercloudaccounts.yaml"} {
		t.Run(file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases", file))
			if err != nil {
				t.Fatal(err)
			}
			var crd apiextensionsv1.CustomResourceDefinition
			if err := yaml.Unmarshal(b, &crd); err != nil {
				t.Fatal(err)
			}
			names = append(names, crd.Name)
			if crd.Spec.Conversion != nil && crd.Spec.Conversion.Strategy != apiextensionsv1.NoneConverter {
				t.Errorf("conversion %q, want None", crd.Spec.Conversion.Strategy)
			}
			versions := crd.Spec.Versions
			if len(versions) != 2 || versions[0].Name != "v1alpha1" || versions[1].Name != "v1beta1" {
				t.Fatalf("versions %v, want v1alpha1 and v1beta1", versionNames(versions))
			}
			alpha, beta := versions[0], versions[1]
			if !alpha.Served || alpha.Storage || !alpha.Deprecated || alpha.DeprecationWarning == nil {
				t.Errorf("v1alpha1: served %v, storage %v, deprecated %v; want served, not stored, deprecated with a warning", alpha.Served, alpha.Storage, alpha.Deprecated)
			}
			if !beta.Served || !beta.Storage || beta.Deprecated {
				t.Errorf("v1beta1: served %v, storage %v, deprecated %v; want served, stored, not deprecated", beta.Served, beta.Storage, beta.Deprecated)
			}
			if !reflect.DeepEqual(alpha.Schema, beta.Schema) {
				t.Error("the two versions' schemas differ: conversion None would rewrite objects through the storage version's schema")
			}
			if !reflect.DeepEqual(alpha.Subresources, beta.Subresources) || !reflect.DeepEqual(alpha.AdditionalPrinterColumns, beta.AdditionalPrinterColumns) {
				t.Error("the two versions' subresources or printer columns differ")
			}
		})
	}
}

func versionNames(vs []apiextensionsv1.CustomResourceDefinitionVersion) []string {
	names := make([]string, 0, len(vs))
	for _, v := range vs {
		names = append(names, v.Name)
	}
	return names
}

// A watch written as v1alpha1 (a manifest of before v1beta1) reads the same
// as v1beta1, spec and status, and the reverse; v1alpha1 requests carry
// the deprecation warning kubectl prints, v1beta1 requests none.
func TestAnObjectReadsTheSameInBothVersions(t *testing.T) {
	testenv.SkipShort(t)
	ctx := context.Background()

	warnings := &warningLog{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandler = warnings
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}

	// Written as v1alpha1 (spec, then status), and as v1beta1.
	old := asVersion(t, validWatch("written-as-v1alpha1"), "v1alpha1")
	if err := c.Create(ctx, old); err != nil {
		t.Fatalf("creating as v1alpha1: %v", err)
	}
	status := fullStatus()
	old.Object["status"] = toJSONMap(t, status)
	if err := c.Status().Update(ctx, old); err != nil {
		t.Fatalf("writing the status as v1alpha1: %v", err)
	}
	if w := warnings.take(); !strings.Contains(w, "v1alpha1 is deprecated") {
		t.Errorf("writing as v1alpha1 warned %q, want the deprecation warning", w)
	}
	created := validWatch("written-as-v1beta1")
	if err := c.Create(ctx, created); err != nil {
		t.Fatal(err)
	}
	created.Status = status
	if err := c.Status().Update(ctx, created); err != nil {
		t.Fatal(err)
	}
	if w := warnings.take(); w != "" {
		t.Errorf("writing as v1beta1 warned %q", w)
	}

	for _, name := range []string{"written-as-v1alpha1", "written-as-v1beta1"} {
		var beta swv1.ServiceWatch
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &beta); err != nil {
			t.Fatal(err)
		}
		raw := asVersion(t, validWatch(name), "v1alpha1")
		if err := c.Get(ctx, client.ObjectKeyFromObject(raw), raw); err != nil {
			t.Fatal(err)
		}
		var alpha swv1alpha1.ServiceWatch
		if err := json.Unmarshal(mustJSON(t, raw.Object), &alpha); err != nil {
			t.Fatalf("%s: the v1alpha1 types cannot decode it: %v", name, err)
		}
		if !reflect.DeepEqual(toJSONMap(t, beta.Spec), toJSONMap(t, alpha.Spec)) {
			t.Errorf("%s: spec as v1beta1 %s\nas v1alpha1 %s", name, indentedJSON(beta.Spec), indentedJSON(alpha.Spec))
		}
		if beta.Spec.ManagementAPI.SecretRef.Name != "warehouse-api-key" || len(beta.Spec.AlertIDs) != 1 {
			t.Errorf("%s: spec as v1beta1 lost what was written: %s", name, indentedJSON(beta.Spec))
		}
		if !reflect.DeepEqual(toJSONMap(t, beta.Status), toJSONMap(t, status)) || !reflect.DeepEqual(toJSONMap(t, alpha.Status), toJSONMap(t, status)) {
			t.Errorf("%s: the status changed on the way between the versions", name)
		}
	}
}

// asVersion is w as an unstructured object of the given version.
func asVersion(t *testing.T, w *swv1.ServiceWatch, version string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: toJSONMap(t, w)}
	u.SetAPIVersion(swv1.GroupVersion.Group + "/" + version)
	u.SetKind("ServiceWatch")
	delete(u.Object, "status")
	return u
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func toJSONMap(t *testing.T, v any) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(mustJSON(t, v), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// warningLog keeps the API server's warnings, as kubectl prints them.
type warningLog struct {
	mu   sync.Mutex
	text []string
}

func (l *warningLog) HandleWarningHeader(_ int, _, text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.text = append(l.text, text)
}

// take returns the warnings seen since the last call.
func (l *warningLog) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := strings.Join(l.text, "\n")
	l.text = nil
	return s
}
