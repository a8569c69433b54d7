package kubectlplugin

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// TestMigrateOnAFreshInstall: the CRDs of a fresh install store v1beta1
// alone and no managed fields name an unserved version, so migrate writes
// nothing and says so, one row per CRD.
func TestMigrateOnAFreshInstall(t *testing.T) {
	needEnv(t)
	watches := &serviceWatchList{}
	if err := env.Client.List(t.Context(), watches); err != nil {
		t.Fatal(err)
	}
	r := runPlugin(testContext(t), clocktesting.NewFakeClock(now), "migrate")
	if r.code != exitOK || r.stderr != "" {
		t.Fatalf("exit status %d, stderr %q", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	want := [][]string{
		{"CRD", "STORAGE", "STORED", "VERSIONS", "OBJECTS", "STALE", "MANAGED", "FIELDS", "MOVED"},
		{"servicewatches.cloud.servicewatch.io", "up-to-date", "v1beta1", itoa(len(watches.Items)), "0", "0"},
		{"clustercloudaccounts.cloud.servicewatch.io", "up-to-date", "v1beta1", "0", "0", "0"},
	}
	if len(lines) != len(want) {
		t.Fatalf("output:\n%s\nwant a header and a row per CRD", r.stdout)
	}
	for i, line := range lines {
		if got := strings.Fields(line); strings.Join(got, " ") != strings.Join(want[i], " ") {
			t.Errorf("line %d: %q, want %q", i, strings.Join(got, " "), strings.Join(want[i], " "))
		}
	}
}

// TestMigrateWithoutTheRights: a user who may not read the CRDs gets exit
// status 1 and an error that says which right is missing, for each CRD.
func TestMigrateWithoutTheRights(t *testing.T) {
	needEnv(t)
	restricted := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.WriteKubeconfig(envtest.User{Name: "app-team"}, restricted); err != nil {
		t.Fatal(err)
	}
	r := runPlugin(testContext(t), clocktesting.NewFakeClock(now), "migrate", "--kubeconfig", restricted)
	if r.code != exitFailed {
		t.Errorf("exit status %d, want %d", r.code, exitFailed)
	}
	for _, crd := range []string{"servicewatches", "clustercloudaccounts"} {
		if n := strings.Count(r.stderr, `cannot get resource "customresourcedefinitions"`); n != 2 {
			t.Errorf("stderr says %d times that app-team cannot get a CRD, want once per CRD:\n%s", n, r.stderr)
		}
		if !strings.Contains(r.stderr, `"`+crd+`.cloud.servicewatch.io" is forbidden`) {
			t.Errorf("stderr does not name %s:\n%s", crd, r.stderr)
		}
		if want := crd + ".cloud.servicewatch.io forbidden - - - -"; !slices.Contains(rows(r.stdout), want) {
			t.Errorf("stdout has no row %q:\n%s", want, r.stdout)
		}
	}
}

// rows are the lines of a table with their columns one space apart.
func rows(table string) []string {
	var out []string
	for line := range strings.SplitSeq(strings.TrimSpace(table), "\n") {
		out = append(out, strings.Join(strings.Fields(line), " "))
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
