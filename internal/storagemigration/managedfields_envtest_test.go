package storagemigration_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/servicewatch/servicewatch/internal/kubectlplugin"
	"github.com/servicewatch/servicewatch/internal/storagemigration"
	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// The release that removes v1alpha1 from the CRD breaks every apply to an
// object whose managed fields still name it (kubernetes/kubernetes#111937):
// a GitOps tool that applied v1alpha1 manifests could no longer change the
// watch. CleanManagedFields (run by `kubectl servicewatch migrate`, with
// the user's rights) moves those entries to v1beta1 before that release;
// the tool keeps owning its fields, so a field it stops applying is still
// removed.
func TestCleanedManagedFieldsLetGitOpsApplyOnceV1alpha1IsRemoved(t *testing.T) {
	testenv.SkipShort(t)
	installPrevious(t)
	ns := newNamespace(t)
	names := createPreviousWatches(t, ns, 1)
	apply := func(version, url string, labels map[string]any) error {
		u := previousWatch(ns, 0, url)
		u.SetAPIVersion(group + "/" + version)
		if err := unstructured.SetNestedMap(u.Object, labels, "metadata", "labels"); err != nil {
			t.Fatal(err)
		}
		return env.Client.Patch(t.Context(), u, client.Apply, client.FieldOwner("gitops"), client.ForceOwnership) //nolint:staticcheck // client.Apply of an unstructured object is what a GitOps tool sends
	}
	if err := apply("v1alpha1", "http://127.0.0.1:2", map[string]any{"team": "a", "tier": "gold"}); err != nil {
		t.Fatal(err)
	}
	installToday(t)
	m, _, _ := newMigrator(t)
	if outcome, err := m.Migrate(t.Context(), watchesCRD); outcome != storagemigration.OutcomeMigrated || err != nil {
		t.Fatalf("migrating: %s, %v", outcome, err)
	}
	// The user who created the watch in v1alpha1 edits it in v1beta1: two
	// entries of one manager, which must become one.
	edited := object(t, "v1beta1", "ServiceWatch", ns, names[0])
	edited.SetAnnotations(map[string]string{"note": "edited after the upgrade"})
	if err := env.Client.Update(t.Context(), edited, client.FieldOwner(userManager)); err != nil {
		t.Fatal(err)
	}
	removeVersion(t, watchesCRD, "v1alpha1")

	err := apply("v1beta1", "http://127.0.0.1:3", map[string]any{"team": "a", "tier": "gold"})
	if err == nil || !strings.Contains(err.Error(), "v1alpha1") {
		t.Fatalf("applying v1beta1 over managed fields of a removed version: %v; want the API server's refusal naming v1alpha1 (else this test shows nothing)", err)
	}
	t.Logf("before the cleaning, the apply fails: %v", err)

	// The admin runs the plugin: v1beta1 is the only stored version, one
	// object, whose one stale entry moved.
	kubectlServicewatchMigrate(t, "servicewatches.cloud.servicewatch.io up-to-date v1beta1 1 1 1")
	cleaned := object(t, "v1beta1", "ServiceWatch", ns, names[0])
	var userEntries int
	for _, e := range cleaned.GetManagedFields() {
		if e.APIVersion != group+"/v1beta1" {
			t.Errorf("managed fields entry of %s (%s) names %s after the cleaning", e.Manager, e.Operation, e.APIVersion)
		}
		if e.Manager == userManager && e.Subresource == "" {
			userEntries++
		}
	}
	if userEntries != 1 {
		t.Errorf("%s has %d entries of the main resource, want its two versions' entries merged into 1", userManager, userEntries)
	}

	// GitOps works again, and still owns what it applied: the label it
	// stops applying goes, the annotation of the user's edit stays.
	if err := apply("v1beta1", "http://127.0.0.1:3", map[string]any{"team": "a"}); err != nil {
		t.Fatalf("applying v1beta1 after the cleaning: %v", err)
	}
	after := object(t, "v1beta1", "ServiceWatch", ns, names[0])
	if url, _, _ := unstructured.NestedString(after.Object, "spec", "managementApi", "url"); url != "http://127.0.0.1:3" {
		t.Errorf("spec.managementApi.url = %q after the apply, want http://127.0.0.1:3", url)
	}
	if _, kept := after.GetLabels()["tier"]; kept {
		t.Errorf("labels = %v: the label GitOps stopped applying stayed, so the cleaning lost GitOps's ownership of it", after.GetLabels())
	}
	if after.GetAnnotations()["note"] == "" {
		t.Errorf("annotations = %v: the user's edit was lost", after.GetAnnotations())
	}

	// A second run writes nothing.
	rv := after.GetResourceVersion()
	kubectlServicewatchMigrate(t, "servicewatches.cloud.servicewatch.io up-to-date v1beta1 1 0 0")
	if got := object(t, "v1beta1", "ServiceWatch", ns, names[0]).GetResourceVersion(); got != rv {
		t.Errorf("the second run wrote the watch: resourceVersion %s, then %s", rv, got)
	}
}

// kubectlServicewatchMigrate runs `kubectl servicewatch migrate` as an
// admin and fails t unless it succeeds with the row wantRow (its columns
// one space apart) for ServiceWatches.
func kubectlServicewatchMigrate(t *testing.T, wantRow string) {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.WriteKubeconfig(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, kubeconfig); err != nil {
		t.Fatal(err)
	}
	var out, errOut testenv.LockedBuffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	if code := kubectlplugin.Main(t.Context(), []string{"--kubeconfig", kubeconfig, "migrate"}, streams, clock.RealClock{}); code != 0 {
		t.Fatalf("kubectl servicewatch migrate: exit status %d\n%s%s", code, out.String(), errOut.String())
	}
	var rows []string
	for line := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
		rows = append(rows, strings.Join(strings.Fields(line), " "))
	}
	if !slices.Contains(rows, wantRow) {
		t.Errorf("kubectl servicewatch migrate printed\n%s\nwant a row %q", out.String(), wantRow)
	}
}

// removeVersion removes version from the CRD altogether, as a release
// after v1alpha1's deprecation will; storedVersions must not name it.
func removeVersion(t *testing.T, name, version string) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := crds.Get(t.Context(), client.ObjectKey{Name: name}, crd); err != nil {
		t.Fatal(err)
	}
	crd.Spec.Versions = slices.DeleteFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == version })
	if err := crds.Update(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	poll(t, 30*time.Second, version+" removed", func() bool {
		u := &unstructured.UnstructuredList{}
		u.SetAPIVersion(group + "/" + version)
		u.SetKind(crd.Spec.Names.ListKind)
		return env.Client.List(t.Context(), u) != nil
	})
}

// Once a release stops serving v1alpha1 (still listing it in the CRD), the
// leader (Start, not Migrate, which the plugin runs too) counts the objects whose managed fields name it, and its log says
// what to run before the release that removes it; after that run, none.
func TestManagerCountsManagedFieldsOfAnUnservedVersion(t *testing.T) {
	testenv.SkipShort(t)
	upgradedWatches(t, 3)
	reg, _ := startMigrator(t, storagemigration.OutcomeMigrated)
	const stale = "servicewatch_storage_migration_stale_managed_fields_objects"
	if got := gauge(t, reg, stale, "crd", watchesCRD); got != 0 {
		t.Errorf("%s = %v while v1alpha1 is served, want 0", stale, got)
	}

	stopServing(t, watchesCRD, "v1alpha1")
	reg, log := startMigrator(t, storagemigration.OutcomeUpToDate)
	if got := gauge(t, reg, stale, "crd", watchesCRD); got != 3 {
		t.Errorf("%s = %v once v1alpha1 is no longer served, want the 3 watches written in it", stale, got)
	}
	if !strings.Contains(log.String(), "run `kubectl servicewatch migrate` before") {
		t.Errorf("the log does not say what to run:\n%s", log)
	}

	kubectlServicewatchMigrate(t, "servicewatches.cloud.servicewatch.io up-to-date v1beta1 3 3 3")
	reg, _ = startMigrator(t, storagemigration.OutcomeUpToDate)
	if got := gauge(t, reg, stale, "crd", watchesCRD); got != 0 {
		t.Errorf("%s = %v after kubectl servicewatch migrate, want 0", stale, got)
	}
}

// startMigrator runs the manager's migrator, as a new leader does, and
// fails t unless its run of the ServiceWatch CRD had outcome.
func startMigrator(t *testing.T, outcome string) (*prometheus.Registry, *testenv.LockedBuffer) {
	t.Helper()
	m, reg, log := newMigrator(t)
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := gauge(t, reg, "servicewatch_storage_migration_runs_total", "crd", watchesCRD, "outcome", outcome); got != 1 {
		t.Fatalf("runs_total{outcome=%s} = %v, want 1\n%s", outcome, got, log)
	}
	return reg, log
}
