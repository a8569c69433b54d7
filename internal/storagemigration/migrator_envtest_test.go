package storagemigration_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/servicewatch/servicewatch/internal/storagemigration"
	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// snapshot is what users see of each object before the upgrade, by name.
func snapshot(t *testing.T, kind, ns string, names []string) map[string]map[string]any {
	t.Helper()
	views := map[string]map[string]any{}
	for _, name := range names {
		views[name] = userView(object(t, "v1alpha1", kind, ns, name))
	}
	return views
}

// checkStored fails t unless every object is encoded in version in etcd.
func checkStored(t *testing.T, resource, ns string, names []string, version string) {
	t.Helper()
	for _, name := range names {
		if got := etcdAPIVersion(t, resource, ns, name); got != group+"/"+version {
			t.Errorf("etcd holds %s %s/%s as %s, want %s/%s", resource, ns, name, got, group, version)
		}
	}
}

// checkUnchanged fails t unless every object reads, in both versions, as it
// did before.
func checkUnchanged(t *testing.T, kind, ns string, before map[string]map[string]any) {
	t.Helper()
	for name, want := range before {
		for _, version := range []string{"v1alpha1", "v1beta1"} {
			if got := userView(object(t, version, kind, ns, name)); !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s/%s read as %s changed:\n got %v\nwant %v", kind, ns, name, version, got, want)
			}
		}
	}
}

func TestMigrationRewritesEveryObjectInTheStorageVersion(t *testing.T) {
	testenv.SkipShort(t)
	installPrevious(t)
	ns := newNamespace(t)
	watches := createPreviousWatches(t, ns, 30)
	accounts := createPreviousAccounts(t, 3)
	watchesBefore, accountsBefore := snapshot(t, "ServiceWatch", ns, watches), snapshot(t, "ClusterCloudAccount", "", accounts)
	checkStored(t, "servicewatches", ns, watches, "v1alpha1")

	installToday(t)
	if got := storedVersions(t, watchesCRD); !slices.Equal(got, []string{"v1alpha1", "v1beta1"}) {
		t.Fatalf("after the upgrade, storedVersions = %v, want [v1alpha1 v1beta1]", got)
	}
	// Installing the new CRD rewrites nothing: the objects are still v1alpha1.
	checkStored(t, "servicewatches", ns, watches, "v1alpha1")

	// A watch created after the upgrade is stored in v1beta1 already.
	createPrevious(t, previousWatch(ns, 99, "http://127.0.0.1:1"), previousStatus(time.Now()))

	m, reg, _ := newMigrator(t)
	// A watch deleted while the migration pages through them is fine.
	m.SetAfterObject(func(crd string, done int) {
		if crd == watchesCRD && done == 1 {
			gone := previousWatch(ns, 5, "")
			if err := env.Client.Delete(t.Context(), gone); err != nil {
				t.Error(err)
			}
		}
	})
	for _, crd := range ourCRDs {
		if outcome, err := m.Migrate(t.Context(), crd); outcome != storagemigration.OutcomeMigrated || err != nil {
			t.Fatalf("migrating %s: %s, %v", crd, outcome, err)
		}
	}
	delete(watchesBefore, "w-005")
	watches = slices.DeleteFunc(watches, func(n string) bool { return n == "w-005" })

	checkStored(t, "servicewatches", ns, watches, "v1beta1")
	checkStored(t, "clustercloudaccounts", "", accounts, "v1beta1")
	for _, crd := range ourCRDs {
		if got := storedVersions(t, crd); !slices.Equal(got, []string{"v1beta1"}) {
			t.Errorf("%s: storedVersions = %v, want [v1beta1]", crd, got)
		}
		if got := gauge(t, reg, "servicewatch_storage_migration_pending", "crd", crd); got != 0 {
			t.Errorf("%s: pending = %v after the migration, want 0", crd, got)
		}
	}
	checkUnchanged(t, "ServiceWatch", ns, watchesBefore)
	checkUnchanged(t, "ClusterCloudAccount", "", accountsBefore)
	for _, c := range []struct {
		crd, result string
		want        float64
	}{
		{watchesCRD, storagemigration.ResultRewritten, 29},
		{watchesCRD, storagemigration.ResultGone, 1},
		{watchesCRD, storagemigration.ResultUnchanged, 1},
		{accountsCRD, storagemigration.ResultRewritten, 3},
	} {
		if got := gauge(t, reg, "servicewatch_storage_migration_objects_total", "crd", c.crd, "result", c.result); got != c.want {
			t.Errorf("objects_total{crd=%s,result=%s} = %v, want %v", c.crd, c.result, got, c.want)
		}
	}
	// v1alpha1 is still served: its managed fields keep their owners (a
	// GitOps tool applying v1alpha1 manifests still owns its fields).
	for _, mf := range object(t, "v1beta1", "ServiceWatch", ns, watches[0]).GetManagedFields() {
		if mf.APIVersion != group+"/v1alpha1" {
			t.Errorf("managed fields of %s: %s by %s, want v1alpha1 entries kept while v1alpha1 is served", watches[0], mf.APIVersion, mf.Manager)
		}
	}
}

// An empty merge patch is a write the API server makes only when the
// encoding changes: an object stored in an older version is written again
// (a new resourceVersion, v1beta1 in etcd), one already in v1beta1 is not.
// That is why the migration costs one write per old object and none after.
func TestEmptyPatchRewritesOnlyAnOlderEncoding(t *testing.T) {
	testenv.SkipShort(t)
	ns, names := upgradedWatches(t, 1)
	emptyPatch := func() string {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(group + "/v1beta1")
		u.SetKind("ServiceWatch")
		u.SetNamespace(ns)
		u.SetName(names[0])
		if err := env.Client.Status().Patch(t.Context(), u, client.RawPatch(types.MergePatchType, []byte("{}"))); err != nil {
			t.Fatal(err)
		}
		return u.GetResourceVersion()
	}
	before := object(t, "v1beta1", "ServiceWatch", ns, names[0]).GetResourceVersion()
	first := emptyPatch()
	if first == before {
		t.Errorf("the empty patch of an object stored as v1alpha1 was not written (resourceVersion %s)", first)
	}
	checkStored(t, "servicewatches", ns, names, "v1beta1")
	if second := emptyPatch(); second != first {
		t.Errorf("the empty patch of an object stored as v1beta1 was written: resourceVersion %s, then %s", first, second)
	}
}

func TestInterruptedMigrationResumes(t *testing.T) {
	testenv.SkipShort(t)
	ns, names := upgradedWatches(t, 20)

	m, reg, _ := newMigrator(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	m.SetAfterObject(func(_ string, done int) {
		if done == 8 {
			cancel() // the leader loses its lease, or the pod is stopped
		}
	})
	outcome, err := m.Migrate(ctx, watchesCRD)
	if outcome != storagemigration.OutcomeFailed || !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted migration: %s, %v; want failed, context canceled", outcome, err)
	}
	if got := storedVersions(t, watchesCRD); !slices.Equal(got, []string{"v1alpha1", "v1beta1"}) {
		t.Fatalf("storedVersions after an interrupted migration = %v, want [v1alpha1 v1beta1] untouched", got)
	}
	if got := gauge(t, reg, "servicewatch_storage_migration_pending", "crd", watchesCRD); got != 1 {
		t.Errorf("pending = %v after an interrupted migration, want 1", got)
	}
	checkStored(t, "servicewatches", ns, names[:8], "v1beta1")
	checkStored(t, "servicewatches", ns, names[8:], "v1alpha1")

	// The next leader starts the manager's Runnable afresh.
	m, reg, _ = newMigrator(t)
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkStored(t, "servicewatches", ns, names, "v1beta1")
	for _, crd := range ourCRDs {
		if got := storedVersions(t, crd); !slices.Equal(got, []string{"v1beta1"}) {
			t.Errorf("%s: storedVersions = %v after the resumed migration, want [v1beta1]", crd, got)
		}
	}
	if got := gauge(t, reg, "servicewatch_storage_migration_pending", "crd", watchesCRD); got != 0 {
		t.Errorf("pending = %v after the resumed migration, want 0", got)
	}
}

func TestSecondRunWritesNothing(t *testing.T) {
	testenv.SkipShort(t)
	ns, names := upgradedWatches(t, 10)
	first, _, _ := newMigrator(t)
	if err := first.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	versions := map[string]string{}
	for _, name := range names {
		versions[name] = object(t, "v1beta1", "ServiceWatch", ns, name).GetResourceVersion()
	}

	second, reg, log := newMigrator(t)
	for _, crd := range ourCRDs {
		if outcome, err := second.Migrate(t.Context(), crd); outcome != storagemigration.OutcomeUpToDate || err != nil {
			t.Errorf("second run of %s: %s, %v; want up_to_date", crd, outcome, err)
		}
		if got := gauge(t, reg, "servicewatch_storage_migration_pending", "crd", crd); got != 0 {
			t.Errorf("%s: pending = %v on the second run, want 0", crd, got)
		}
	}
	for _, name := range names {
		if got := object(t, "v1beta1", "ServiceWatch", ns, name).GetResourceVersion(); got != versions[name] {
			t.Errorf("the second run wrote %s: resourceVersion %s, then %s", name, versions[name], got)
		}
	}
	if got := strings.Count(log.String(), "nothing written"); got != len(ourCRDs) {
		t.Errorf("the second run said %d times that it wrote nothing, want %d:\n%s", got, len(ourCRDs), log)
	}
}

// managerRole is the manager's ClusterRole as config/rbac generates it
// from the code's markers.
func managerRole(t *testing.T) *rbacv1.ClusterRole {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.Unmarshal(raw, role); err != nil {
		t.Fatal(err)
	}
	role.Name = "manager-role-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	if err := env.Client.Create(t.Context(), role); err != nil {
		t.Fatal(err)
	}
	return role
}

// migratorAs is a migrator whose requests the API server authorizes as the
// user, with the RBAC the test gave it.
func migratorAs(t *testing.T, user string) (*storagemigration.Migrator, *prometheus.Registry, *testenv.LockedBuffer) {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	m, reg, log := newMigrator(t)
	c, err := client.New(cfg, client.Options{Scheme: crds.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	m.Client = c
	return m, reg, log
}

// The manager's ClusterRole, bound cluster-wide as config/default binds
// it, is all the migration needs: read the CRDs, patch their status, list
// the objects and patch theirs.
func TestManagerRoleSufficesToMigrate(t *testing.T) {
	testenv.SkipShort(t)
	installPrevious(t)
	ns := newNamespace(t)
	names := createPreviousWatches(t, ns, 3)
	createPreviousAccounts(t, 1)
	installToday(t)
	role := managerRole(t)
	user := "system:serviceaccount:servicewatch-system:manager-" + role.Name
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if err := env.Client.Create(t.Context(), binding); err != nil {
		t.Fatal(err)
	}
	m, _, _ := migratorAs(t, user)
	for _, crd := range ourCRDs {
		if outcome, err := m.Migrate(t.Context(), crd); outcome != storagemigration.OutcomeMigrated || err != nil {
			t.Errorf("migrating %s under the manager's role: %s, %v", crd, outcome, err)
		}
	}
	checkStored(t, "servicewatches", ns, names, "v1beta1")
}

// A namespaced install (config/namespaced, or the chart's watchNamespaces)
// binds the manager's rules in its namespaces only, where they grant
// nothing on CRDs: the migration is skipped and says so, and the manager
// goes on.
func TestNamespacedInstallSkipsTheMigration(t *testing.T) {
	testenv.SkipShort(t)
	ns, _ := upgradedWatches(t, 1)
	role := managerRole(t)
	user := "system:serviceaccount:servicewatch-system:manager-" + role.Name
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if err := env.Client.Create(t.Context(), binding); err != nil {
		t.Fatal(err)
	}
	m, reg, log := migratorAs(t, user)
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, crd := range ourCRDs {
		if got := gauge(t, reg, "servicewatch_storage_migration_runs_total", "crd", crd, "outcome", storagemigration.OutcomeForbidden); got != 1 {
			t.Errorf("%s: runs_total{outcome=forbidden} = %v, want 1", crd, got)
		}
		if got := storedVersions(t, crd); !slices.Equal(got, []string{"v1alpha1", "v1beta1"}) {
			t.Errorf("%s: storedVersions = %v, want them untouched", crd, got)
		}
	}
	if !strings.Contains(log.String(), "Storage migration skipped") {
		t.Errorf("no log line says the migration was skipped:\n%s", log)
	}
}

// The migration leaves managed fields alone: the manager may write status
// only, and the API server keeps an object's managed fields on any write to
// a subresource. That costs nothing while v1alpha1 is listed in the CRD,
// served or not (conversion None converts between listed versions): a
// GitOps tool that applied v1alpha1 applies v1beta1 on top, and the
// manager's status writes go on. (kubernetes/kubernetes#111937 breaks
// apply only once a version is removed from the CRD altogether.)
func TestV1alpha1ManagedFieldsDoNotBreakApplyOnceUnserved(t *testing.T) {
	testenv.SkipShort(t)
	installPrevious(t)
	ns := newNamespace(t)
	names := createPreviousWatches(t, ns, 1)
	applied := previousWatch(ns, 0, "http://127.0.0.1:2")
	if err := env.Client.Patch(t.Context(), applied, client.Apply, client.FieldOwner("gitops"), client.ForceOwnership); err != nil { //nolint:staticcheck // client.Apply of an unstructured object is what a GitOps tool sends
		t.Fatal(err)
	}
	installToday(t)
	m, _, _ := newMigrator(t)
	if outcome, err := m.Migrate(t.Context(), watchesCRD); outcome != storagemigration.OutcomeMigrated || err != nil {
		t.Fatalf("migrating: %s, %v", outcome, err)
	}
	stopServing(t, watchesCRD, "v1alpha1")

	applied = previousWatch(ns, 0, "http://127.0.0.1:3")
	applied.SetAPIVersion(group + "/v1beta1")
	if err := env.Client.Patch(t.Context(), applied, client.Apply, client.FieldOwner("gitops"), client.ForceOwnership); err != nil { //nolint:staticcheck // as above
		t.Fatalf("applying v1beta1 over v1alpha1's managed fields: %v", err)
	}
	u := object(t, "v1beta1", "ServiceWatch", ns, names[0])
	if got, _, _ := unstructured.NestedString(u.Object, "spec", "managementApi", "url"); got != "http://127.0.0.1:3" {
		t.Errorf("the apply did not take: spec.managementApi.url = %q", got)
	}
	if err := env.Client.Status().Update(t.Context(), u, client.FieldOwner(previousManager)); err != nil {
		t.Errorf("the manager's status write: %v", err)
	}
}

// stopServing marks version of the CRD as no longer served, as the
// release after the next will.
func stopServing(t *testing.T, name, version string) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := crds.Get(t.Context(), client.ObjectKey{Name: name}, crd); err != nil {
		t.Fatal(err)
	}
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == version {
			crd.Spec.Versions[i].Served = false
		}
	}
	if err := crds.Update(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	poll(t, 30*time.Second, version+" no longer served", func() bool {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(group + "/" + version)
		u.SetKind("ServiceWatchList")
		err := env.Client.List(t.Context(), u)
		return err != nil
	})
}
