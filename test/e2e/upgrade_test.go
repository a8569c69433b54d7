//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// The release before v1beta1, kept by hack/e2e/previous.sh: its chart as
// committed test data, its manager built from its commit by
// hack/e2e/images.sh and imported as servicewatch:<commit, 7 digits>.
const (
	previousChart      = "test/e2e/testdata/upgrade/chart"
	previousCommitFile = "test/e2e/testdata/upgrade/COMMIT"
)

// The CRDs, cluster-wide: one release's at a time.
const (
	watchCRD   = "servicewatches.cloud.servicewatch.io"
	accountCRD = "clustercloudaccounts.cloud.servicewatch.io"
)

// TestUpgrade installs the release before v1beta1 (its chart and its
// manager) with 200 live watches, all Ready, then upgrades it to today's
// chart and manager with helm upgrade, as a user would, and checks what the
// user sees: the CRD serves v1beta1 (stored) and v1alpha1; the manager
// migrates storage, so that status.storedVersions is [v1beta1]; every watch
// is still there, the same object (uid), readable in both versions with
// the spec it had; no watch stops being Ready, and none is synced before
// its schedule (the cloud sees no call); the new manager syncs a watch when
// asked.
func TestUpgrade(t *testing.T) {
	const (
		ns      = "e2e-upgrade"
		sysNS   = "e2e-upgrade-system"
		release = "servicewatch-upgrade"
		watches = 200
		// The earliest a periodic sync may come is half an interval after
		// the last one less a twelfth (pacing.PeriodicSlot, MaxMove):
		// 12.5 minutes, beyond the span of this test, so that any call
		// the cloud sees after the upgrade is one beyond the schedule.
		interval = 30 * time.Minute
	)
	previous := previousTag(t)
	noCRDs(t)
	cloud := deployFakeCloud(t, "e2e-cloud-upgrade")
	restrictedNamespace(t, sysNS)
	restrictedNamespace(t, ns)
	cleanup(t, "helm uninstall and deleting the CRDs", func() error {
		if _, err := helmErr("uninstall", release, "-n", sysNS, "--wait", "--ignore-not-found"); err != nil {
			return err
		}
		_, err := kubectlErr(t, "", "delete", "crd", watchCRD, accountCRD, "--ignore-not-found", "--wait=true")
		return err
	})
	// Registered after the uninstall, so that it runs before it.
	dumpOnFailure(t, sysNS)
	// Both client-side budgets off, in both releases: the first syncs of
	// 200 services would otherwise take minutes; the budgets have tests of
	// their own.
	values := []string{"-n", sysNS, "--set", "image.repository=servicewatch",
		"--set-json", `extraArgs=["--management-rate-limit=0","--alert-rate-limit=0"]`, "--wait", "--timeout", "3m"}

	t.Logf("helm install the chart of %s, with its manager", previous)
	helm(t, append([]string{"install", release, previousChart, "--set", "image.tag=" + previous}, values...)...)
	if got, want := crdVersions(t, watchCRD), []string{"v1alpha1 served storage"}; !slices.Equal(got, want) {
		t.Fatalf("the previous chart's CRD has versions %v, want %v: is %s the release before v1beta1?", got, want, previousChart)
	}
	created := time.Now()
	manyWatches(t, ns, cloud, watches, interval, "v1alpha1")
	accountBefore := previousAccount(t, sysNS, ns, cloud)
	kubectl(t, "wait", "-n", ns, "sw", "--all", "--for=condition=Ready", "--timeout=5m")
	before := listWatches(t, ns, "v1alpha1")
	if len(before) != watches {
		t.Fatalf("%d watches before the upgrade, want %d", len(before), watches)
	}
	oldPods := managerPodsIn(t, sysNS)
	t.Logf("%d watches Ready under the previous manager %s after they were created; the cloud answered %d calls",
		watches, time.Since(created).Round(time.Second), len(cloud.callLog(t)))
	// Every sync so far was the first of its watch: forget them.
	cloud.resetCalls(t)

	stopPolling := pollLapses(func() string {
		if n, err := readyWatchesErr(t, ns); err == nil && n != watches {
			return fmt.Sprintf("%d Ready", n)
		}
		return ""
	})
	t.Log("helm upgrade to today's chart and manager")
	upgraded := time.Now()
	helm(t, append([]string{"upgrade", release, "charts/servicewatch", "--set", "image.tag=dev"}, values...)...)
	t.Logf("helm upgrade --wait took %s", time.Since(upgraded).Round(time.Second))
	if got, want := crdVersions(t, watchCRD), []string{"v1alpha1 served", "v1beta1 served storage"}; !slices.Equal(got, want) {
		t.Errorf("after helm upgrade the CRD has versions %v, want %v", got, want)
	}
	eventually(t, 2*time.Minute, "the new manager Pod leads", func() error {
		pods := managerPodsIn(t, sysNS)
		if len(pods) != 1 || slices.Contains(oldPods, pods[0]) {
			return fmt.Errorf("manager Pods %v, want one that is not %v", pods, oldPods)
		}
		if holder := leaseHolderIn(t, sysNS); holder != pods[0] {
			return fmt.Errorf("lease %s held by %q, not %s", leaseName, holder, pods[0])
		}
		return nil
	})
	// Not fatal: what the user sees of the objects is checked either way.
	if err := pollUntil(t, 2*time.Minute, func() error {
		for _, crd := range []string{watchCRD, accountCRD} {
			if got := storedVersions(t, crd); !slices.Equal(got, []string{"v1beta1"}) {
				return fmt.Errorf("%s status.storedVersions %v, want [v1beta1]", crd, got)
			}
		}
		return nil
	}); err != nil {
		t.Errorf("the manager did not migrate storage to v1beta1: %v", err)
	} else {
		t.Logf("both CRDs' storedVersions [v1beta1] %s after helm upgrade began", time.Since(upgraded).Round(time.Second))
	}
	// Give the new leader time to look at every watch: a burst of syncs
	// would come now.
	time.Sleep(15 * time.Second)
	if lapses := stopPolling(); len(lapses) > 0 {
		t.Errorf("watches stopped being Ready during the upgrade: %v", lapses)
	}

	for _, version := range []string{"v1alpha1", "v1beta1"} {
		// A regression loses all 200 alike: ten tell it.
		if losses := upgradeLosses(before, listWatches(t, ns, version), version); len(losses) > 0 {
			t.Errorf("%d losses, read as %s:\n%s", len(losses), version, strings.Join(firstOf(losses, 10), "\n"))
		}
		var a keptObject
		getJSON(t, &a, "clustercloudaccounts."+version+".cloud.servicewatch.io", accountBefore.Metadata.Name)
		if a.Metadata.UID != accountBefore.Metadata.UID || !reflect.DeepEqual(a.Spec, accountBefore.Spec) {
			t.Errorf("ClusterCloudAccount %s, read as %s: uid %s, spec %v; was uid %s, spec %v", a.Metadata.Name, version,
				a.Metadata.UID, a.Spec, accountBefore.Metadata.UID, accountBefore.Spec)
		}
	}
	earliest := interval/2 - interval/12
	if span := time.Since(oldestSync(t, before)); span >= earliest {
		t.Fatalf("the oldest sync was %s ago, past the earliest a periodic one may follow it (%s): the test cannot tell a burst from the schedule", span, earliest)
	}
	calls := cloud.callLog(t)
	t.Logf("the cloud saw %d calls in the %s since helm upgrade began", len(calls), time.Since(upgraded).Round(time.Second))
	if len(calls) > 0 {
		t.Errorf("the cloud saw %d calls after the upgrade, for watches last synced less than %s ago, the earliest their next sync is due: %s", len(calls), earliest, describeCalls(calls, 10))
	}

	// Today's manager syncs a watch when asked, and answers in v1beta1.
	kubectl(t, "annotate", "sw", "-n", ns, before[0].Metadata.Name, "--overwrite", "servicewatch.io/requested-at=after-upgrade")
	eventually(t, time.Minute, "the new manager handles a sync request", func() error {
		w := getVersioned(t, ns, before[0].Metadata.Name, "v1beta1")
		if w.Status.LastHandledRequestedAt != "after-upgrade" {
			return fmt.Errorf("status.lastHandledRequestedAt %q", w.Status.LastHandledRequestedAt)
		}
		if w.Status.LastSyncTime == before[0].Status.LastSyncTime {
			return fmt.Errorf("status.lastSyncTime still %s", w.Status.LastSyncTime)
		}
		if status, _, reason := w.ready(); status != "True" {
			return fmt.Errorf("Ready=%s (%s) after the requested sync", status, reason)
		}
		return nil
	})
	if restarts := strings.TrimSpace(kubectl(t, "get", "pods", "-n", sysNS, "-l", "app.kubernetes.io/component=manager",
		"-o", "jsonpath={.items[*].status.containerStatuses[*].restartCount}")); restarts != "0" {
		t.Errorf("the new manager's restarts: %q, want 0", restarts)
	}
}

// previousTag is the previous manager image's tag: its commit, 7 digits.
func previousTag(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e2eEnv.repo, filepath.FromSlash(previousCommitFile)))
	if err != nil {
		t.Fatal(err)
	}
	commit := strings.TrimSpace(string(b))
	if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(commit) {
		t.Fatalf("%s holds %q, want a commit's 40 hex digits", previousCommitFile, commit)
	}
	return commit[:7]
}

// noCRDs waits until no test's CRDs are left: the previous chart installs
// its own, and Helm refuses to adopt another release's.
func noCRDs(t *testing.T) {
	t.Helper()
	eventually(t, 2*time.Minute, "the cluster has no ServiceWatch CRD left by another test", func() error {
		if left := strings.TrimSpace(kubectl(t, "get", "crd", watchCRD, accountCRD, "--ignore-not-found", "-o", "name")); left != "" {
			return fmt.Errorf("%s", strings.ReplaceAll(left, "\n", ", "))
		}
		return nil
	})
}

// crdVersions lists a CRD's versions as "NAME served storage", sorted.
func crdVersions(t *testing.T, crd string) []string {
	t.Helper()
	var v struct {
		Spec struct {
			Versions []struct {
				Name    string `json:"name"`
				Served  bool   `json:"served"`
				Storage bool   `json:"storage"`
			} `json:"versions"`
		} `json:"spec"`
	}
	getJSON(t, &v, "crd", crd)
	var out []string
	for _, ver := range v.Spec.Versions {
		s := ver.Name
		if ver.Served {
			s += " served"
		}
		if ver.Storage {
			s += " storage"
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func storedVersions(t *testing.T, crd string) []string {
	t.Helper()
	var v struct {
		Status struct {
			StoredVersions []string `json:"storedVersions"`
		} `json:"status"`
	}
	getJSON(t, &v, "crd", crd)
	return v.Status.StoredVersions
}

// previousAccount applies, as v1alpha1, a ClusterCloudAccount of the fake
// cloud allowing namespace ns, its key in the operator's namespace sysNS,
// and returns it as the API server has it.
func previousAccount(t *testing.T, sysNS, ns string, cloud fakeCloud) keptObject {
	t.Helper()
	d := fakecloud.DefaultData()
	apply(t, fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: e2e-upgrade-key, namespace: %[1]s}
stringData: {keyId: %[2]s, keySecret: %[3]s}
---
apiVersion: cloud.servicewatch.io/v1alpha1
kind: ClusterCloudAccount
metadata: {name: e2e-upgrade-org}
spec:
  managementApi: {url: %[4]q, secretRef: {name: e2e-upgrade-key}}
  conditions:
  - namespaces: [%[5]s]
`, sysNS, d.ManagementKey.KeyID, d.ManagementKey.KeySecret, cloud.url, ns))
	var a keptObject
	getJSON(t, &a, "clustercloudaccounts.v1alpha1.cloud.servicewatch.io", "e2e-upgrade-org")
	return a
}

// keptObject is what must survive an upgrade of any object: its identity
// and its spec.
type keptObject struct {
	Metadata struct {
		Name string `json:"name"`
		UID  string `json:"uid"`
	} `json:"metadata"`
	Spec map[string]any `json:"spec"`
}

// versionedWatch is what the upgrade test compares of a ServiceWatch, read
// in one API version.
type versionedWatch struct {
	APIVersion string `json:"apiVersion"`
	Metadata   struct {
		Name              string `json:"name"`
		UID               string `json:"uid"`
		Generation        int64  `json:"generation"`
		DeletionTimestamp string `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec   map[string]any `json:"spec"`
	Status struct {
		ObservedGeneration     int64  `json:"observedGeneration"`
		LastSyncTime           string `json:"lastSyncTime"`
		LastHandledRequestedAt string `json:"lastHandledRequestedAt"`
		Conditions             []struct {
			Type               string `json:"type"`
			Status             string `json:"status"`
			Reason             string `json:"reason"`
			LastTransitionTime string `json:"lastTransitionTime"`
		} `json:"conditions"`
	} `json:"status"`
}

func (w versionedWatch) ready() (status, since, reason string) {
	for _, c := range w.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status, c.LastTransitionTime, c.Reason
		}
	}
	return "", "", ""
}

// listWatches reads every ServiceWatch of ns in one API version, sorted by
// name.
func listWatches(t *testing.T, ns, version string) []versionedWatch {
	t.Helper()
	var list struct {
		Items []versionedWatch `json:"items"`
	}
	getJSON(t, &list, "servicewatches."+version+".cloud.servicewatch.io", "-n", ns)
	slices.SortFunc(list.Items, func(a, b versionedWatch) int { return strings.Compare(a.Metadata.Name, b.Metadata.Name) })
	return list.Items
}

func getVersioned(t *testing.T, ns, name, version string) versionedWatch {
	t.Helper()
	var w versionedWatch
	getJSON(t, &w, "servicewatches."+version+".cloud.servicewatch.io", "-n", ns, name)
	return w
}

// upgradeLosses compares the watches read in version after the upgrade with
// those before it, and says, for each, what a user would find lost: the
// watch itself, its identity, its spec, its Ready or its last sync.
func upgradeLosses(before, after []versionedWatch, version string) []string {
	got := make(map[string]versionedWatch, len(after))
	for _, w := range after {
		got[w.Metadata.Name] = w
	}
	var losses []string
	lose := func(name, format string, args ...any) {
		losses = append(losses, fmt.Sprintf("%s, read as %s: %s", name, version, fmt.Sprintf(format, args...)))
	}
	for _, b := range before {
		name := b.Metadata.Name
		a, ok := got[name]
		switch {
		case !ok:
			lose(name, "gone")
			continue
		case a.APIVersion != "cloud.servicewatch.io/"+version:
			lose(name, "apiVersion %s", a.APIVersion)
		case a.Metadata.UID != b.Metadata.UID:
			lose(name, "uid %s, was %s: a new object", a.Metadata.UID, b.Metadata.UID)
		case a.Metadata.DeletionTimestamp != "":
			lose(name, "being deleted since %s", a.Metadata.DeletionTimestamp)
		case !reflect.DeepEqual(a.Spec, b.Spec):
			lose(name, "spec %v, was %v", a.Spec, b.Spec)
		}
		if status, since, reason := a.ready(); status != "True" {
			lose(name, "Ready=%q (%s)", status, reason)
		} else if _, wasSince, _ := b.ready(); since != wasSince {
			lose(name, "Ready since %s, was since %s: it lapsed", since, wasSince)
		}
		if a.Status.LastSyncTime != b.Status.LastSyncTime {
			lose(name, "last synced at %s, was %s: synced again before its schedule", a.Status.LastSyncTime, b.Status.LastSyncTime)
		}
		if a.Status.ObservedGeneration != a.Metadata.Generation {
			lose(name, "status.observedGeneration %d of generation %d", a.Status.ObservedGeneration, a.Metadata.Generation)
		}
	}
	for _, a := range after {
		if !slices.ContainsFunc(before, func(b versionedWatch) bool { return b.Metadata.Name == a.Metadata.Name }) {
			lose(a.Metadata.Name, "appeared with the upgrade")
		}
	}
	return losses
}

// oldestSync is the earliest last sync of the watches.
func oldestSync(t *testing.T, watches []versionedWatch) time.Time {
	t.Helper()
	var oldest time.Time
	for _, w := range watches {
		at, err := time.Parse(time.RFC3339, w.Status.LastSyncTime)
		if err != nil {
			t.Fatalf("%s status.lastSyncTime %q: %v", w.Metadata.Name, w.Status.LastSyncTime, err)
		}
		if oldest.IsZero() || at.Before(oldest) {
			oldest = at
		}
	}
	return oldest
}

// manyWatches has the fake cloud serve n copies of the sample service and
// applies n ServiceWatches of API version version, one of each, named w000
// on, so that each costs the cloud calls of its own.
func manyWatches(t *testing.T, ns string, cloud fakeCloud, n int, interval time.Duration, version string) {
	t.Helper()
	s := readSample(t)
	d := fakecloud.DefaultData()
	services := make([]string, n)
	for i := range services {
		services[i] = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		d.Organizations[s.Spec.OrganizationID][services[i]] = d.Organizations[s.Spec.OrganizationID][s.Spec.ServiceID]
	}
	cloud.setData(t, d)
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: v1
kind: Secret
metadata: {name: warehouse-api-key, namespace: %[1]s}
stringData: {keyId: %[2]s, keySecret: %[3]s}
---
apiVersion: v1
kind: Secret
metadata: {name: alerts-token, namespace: %[1]s}
stringData: {token: %[4]s}
`, ns, d.ManagementKey.KeyID, d.ManagementKey.KeySecret, d.AlertToken)
	for i := range n {
		fmt.Fprintf(&b, `---
apiVersion: cloud.servicewatch.io/%[8]s
kind: ServiceWatch
metadata: {name: w%03[1]d, namespace: %[2]s}
spec:
  organizationId: %[3]s
  serviceId: %[4]s
  alertIds: [%[5]s]
  interval: %[7]s
  managementApi: {url: %[6]q, secretRef: {name: warehouse-api-key}}
  alertApi: {url: %[6]q, secretRef: {name: alerts-token}}
`, i, ns, s.Spec.OrganizationID, services[i], strings.Join(s.Spec.AlertIDs, ", "), cloud.url, interval, version)
	}
	apply(t, b.String())
}

// resetCalls has the fake cloud forget the calls it answered.
func (f fakeCloud) resetCalls(t *testing.T) {
	t.Helper()
	f.adminDo(t, "DELETE", "calls", nil, nil)
}

// callLog is every call the fake cloud answered since its last reset.
func (f fakeCloud) callLog(t *testing.T) []fakecloud.Call {
	t.Helper()
	var v struct {
		Log []fakecloud.Call `json:"log"`
	}
	f.adminDo(t, "GET", "calls", nil, &v)
	return v.Log
}

// describeCalls names up to limit calls: when, what, for which service or
// alert.
func describeCalls(calls []fakecloud.Call, limit int) string {
	parts := make([]string, 0, len(calls))
	for _, c := range calls {
		part := c.Time.Format(time.TimeOnly) + " " + string(c.Operation)
		if c.ServiceID != "" {
			part += " of service " + c.ServiceID
		}
		if c.AlertID != "" {
			part += " of alert " + c.AlertID
		}
		parts = append(parts, part)
	}
	return strings.Join(firstOf(parts, limit), "; ")
}

// firstOf is the first limit lines, and how many more there are.
func firstOf(lines []string, limit int) []string {
	if len(lines) <= limit {
		return lines
	}
	return append(slices.Clone(lines[:limit]), fmt.Sprintf("and %d more", len(lines)-limit))
}
