package storagemigration_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/servicewatch/servicewatch/internal/storagemigration"
	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// The suite's control plane starts with the previous release's CRDs
// (v1alpha1 alone, from the last commit before v1beta1); each test installs
// them afresh, creates objects, and installs today's CRDs over them, as an
// upgrade does.
var (
	env *testenv.Env
	// crds reads and writes CustomResourceDefinitions.
	crds client.Client
)

const (
	previousCRDs = "testdata/v1alpha1"
	group        = "cloud.servicewatch.io"
	watchesCRD   = "servicewatches." + group
	accountsCRD  = "clustercloudaccounts." + group
)

var ourCRDs = []string{watchesCRD, accountsCRD}

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard()) // envtest's own chatter; the migrator logs to each test
	os.Exit(testenv.MainWith(m, testenv.Options{CRDs: previousCRDs, Unlimited: true}, func(e *testenv.Env) (int, error) {
		env = e
		scheme := runtime.NewScheme()
		if err := apiextensionsv1.AddToScheme(scheme); err != nil {
			return 0, err
		}
		c, err := client.New(e.Config, client.Options{Scheme: scheme})
		if err != nil {
			return 0, err
		}
		crds = c
		return m.Run(), nil
	}))
}

// newMigrator is the manager's migrator of our two CRDs, with its own
// metrics registry, a small page (to page through a few objects) and
// progress lines every few objects.
func newMigrator(t testing.TB) (*storagemigration.Migrator, *prometheus.Registry, *testenv.LockedBuffer) {
	t.Helper()
	reg := prometheus.NewRegistry()
	metrics, err := storagemigration.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	log := &testenv.LockedBuffer{}
	return &storagemigration.Migrator{
		Client: crds, CRDs: ourCRDs, Metrics: metrics, Log: testLogger(t, log),
		PageSize: 7, ProgressEvery: 10,
	}, reg, log
}

// installPrevious deletes our CRDs, and with them every object, and
// installs the previous release's.
func installPrevious(t testing.TB) {
	t.Helper()
	ctx := t.Context()
	for _, name := range ourCRDs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		crd.Name = name
		if err := crds.Delete(ctx, crd); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		poll(t, time.Minute, "CRD "+name+" deleted", func() bool {
			return apierrors.IsNotFound(crds.Get(ctx, client.ObjectKey{Name: name}, crd))
		})
	}
	installed, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: []string{previousCRDs}, ErrorIfPathMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	waitServed(t, installed)
}

// installToday installs today's CRDs over the previous ones, as `helm
// upgrade` or `kubectl apply` of the new release does.
func installToday(t testing.TB) {
	t.Helper()
	today := filepath.Join(testenv.RepoRoot(), "config", "crd", "bases")
	o := envtest.CRDInstallOptions{Paths: []string{today}, ErrorIfPathMissing: true, MaxTime: time.Minute, PollInterval: 100 * time.Millisecond}
	if err := envtest.ReadCRDFiles(&o); err != nil {
		t.Fatal(err)
	}
	for _, crd := range o.CRDs {
		if storageVersion(crd) != "v1beta1" {
			t.Fatalf("%s: today's CRD stores %s, not v1beta1", crd.Name, storageVersion(crd))
		}
	}
	if err := envtest.CreateCRDs(env.Config, o.CRDs); err != nil {
		t.Fatal(err)
	}
	if err := envtest.WaitForCRDs(env.Config, o.CRDs, o); err != nil {
		t.Fatal(err)
	}
	waitServed(t, o.CRDs)
}

// waitServed waits until every version of every CRD answers a list. Discovery
// (what envtest waits for) can show a new version a moment before the API
// server's handler for the updated CRD serves it: a read in that moment is a
// 404, as CI once saw.
func waitServed(t testing.TB, installed []*apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	for _, crd := range installed {
		for _, v := range crd.Spec.Versions {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.ListKind})
			poll(t, time.Minute, crd.Name+" "+v.Name+" served", func() bool {
				return env.Client.List(t.Context(), list, client.Limit(1)) == nil
			})
		}
	}
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// storedVersions reads a CRD's status.storedVersions.
func storedVersions(t testing.TB, name string) []string {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := crds.Get(t.Context(), client.ObjectKey{Name: name}, crd); err != nil {
		t.Fatal(err)
	}
	return crd.Status.StoredVersions
}

// etcdAPIVersion reads the apiVersion an object is encoded in, from etcd
// itself (through its JSON gateway, /v3/kv/range): what the API server
// stored, not what it serves. Custom resources are stored as JSON.
func etcdAPIVersion(t testing.TB, resource, namespace, name string) string {
	t.Helper()
	key := "/registry/" + group + "/" + resource + "/"
	if namespace != "" {
		key += namespace + "/"
	}
	key += name
	body, _ := json.Marshal(map[string]string{"key": base64.StdEncoding.EncodeToString([]byte(key))})
	u := *env.EtcdURL()
	u.Path = "/v3/kv/range"
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("reading %s from etcd: %v", key, err)
	}
	defer resp.Body.Close()
	var answer struct {
		KVs []struct {
			Value []byte `json:"value"` // base64 in JSON, decoded by encoding/json
		} `json:"kvs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		t.Fatalf("decoding etcd's answer for %s: %v", key, err)
	}
	if len(answer.KVs) != 1 {
		t.Fatalf("etcd holds %d values at %s, want 1", len(answer.KVs), key)
	}
	var stored struct {
		APIVersion string `json:"apiVersion"`
	}
	if err := json.Unmarshal(answer.KVs[0].Value, &stored); err != nil {
		t.Fatalf("%s in etcd is not JSON: %v", key, err)
	}
	return stored.APIVersion
}

// object reads namespace/name in one version as unstructured, the way a
// client of that version sees it.
func object(t testing.TB, version, kind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: version, Kind: kind})
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: name}, u); err != nil {
		t.Fatalf("reading %s %s/%s as %s: %v", kind, namespace, name, version, err)
	}
	return u
}

// userView is what a user sees of an object: its spec and status.
func userView(u *unstructured.Unstructured) map[string]any {
	return map[string]any{"spec": u.Object["spec"], "status": u.Object["status"]}
}

func poll(t testing.TB, timeout time.Duration, what string, done func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) { return done(), nil })
	if err != nil {
		t.Fatalf("%s: not within %v", what, timeout)
	}
}

// gauge and counter read one series of the migrator's metrics.
func gauge(t testing.TB, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if matchLabels(m.GetLabel(), labels) {
				if m.GetGauge() != nil {
					return m.GetGauge().GetValue()
				}
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func matchLabels(have []*dto.LabelPair, want []string) bool {
	for i := 0; i+1 < len(want); i += 2 {
		if !slices.ContainsFunc(have, func(l *dto.LabelPair) bool { return l.GetName() == want[i] && l.GetValue() == want[i+1] }) {
			return false
		}
	}
	return true
}

// testLogger logs to the test and into log, for a test to read.
func testLogger(t testing.TB, log *testenv.LockedBuffer) logr.Logger {
	return funcr.New(func(prefix, args string) {
		t.Log(prefix, args)
		_, _ = fmt.Fprintln(log, prefix, args)
	}, funcr.Options{})
}
