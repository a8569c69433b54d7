//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestVariants deploys config/namespaced and config/sharded as committed and
// checks each syncs the watches it should and leaves the others alone.
func TestVariants(t *testing.T) {
	cloud := deployFakeCloud(t, "e2e-cloud-variants")

	t.Run("config/namespaced syncs only team-a and team-b", func(t *testing.T) {
		for _, ns := range []string{"team-a", "team-b", "team-c"} {
			restrictedNamespace(t, ns)
		}
		dumpOnFailure(t, systemNamespace, "team-a", "team-c")
		deployVariant(t, "config/namespaced")
		sampleWatch(t, "team-a", "inside", cloud, nil)
		sampleWatch(t, "team-c", "outside", cloud, nil)
		waitReady(t, "team-a", "inside", 2*time.Minute)
		checkCounts(t, getWatch(t, "team-a", "inside"), sampleCounts(t))
		untouched(t, "team-c", "outside")
	})

	t.Run("config/sharded syncs only shard-0's watches", func(t *testing.T) {
		restrictedNamespace(t, "e2e-shard")
		dumpOnFailure(t, systemNamespace, "e2e-shard")
		deployVariant(t, "config/sharded")
		sampleWatch(t, "e2e-shard", "mine", cloud, map[string]string{"sharding.servicewatch.io/shard": "shard-0"})
		sampleWatch(t, "e2e-shard", "other", cloud, map[string]string{"sharding.servicewatch.io/shard": "shard-1"})
		sampleWatch(t, "e2e-shard", "unlabelled", cloud, nil)
		waitReady(t, "e2e-shard", "mine", 2*time.Minute)
		untouched(t, "e2e-shard", "other")
		untouched(t, "e2e-shard", "unlabelled")
	})
}

// deployVariant applies a kustomization of config/, waits for its manager,
// and deletes it all at the end of the test.
func deployVariant(t *testing.T, dir string) {
	t.Helper()
	cleanup(t, "deleting "+dir, func() error {
		_, err := kubectlErr(t, "", "delete", "-k", dir, "--ignore-not-found", "--wait=true", "--timeout=3m")
		return err
	})
	kubectl(t, "apply", "--server-side", "-k", dir)
	out := kubectl(t, "get", "deployments", "-n", systemNamespace, "-l", "app.kubernetes.io/component=manager", "-o", "name")
	deploys := strings.Fields(out)
	if len(deploys) != 1 {
		t.Fatalf("%s deployed %v, want one manager Deployment", dir, deploys)
	}
	kubectl(t, "rollout", "status", "-n", systemNamespace, deploys[0], "--timeout=3m")
}

// untouched fails if the manager wrote any status to a watch it should not
// sync. It is called after a watch it does sync became Ready, so the
// manager has had its chance; it then waits a few seconds more.
func untouched(t *testing.T, ns, name string) {
	t.Helper()
	time.Sleep(5 * time.Second)
	w := getWatch(t, ns, name)
	if len(w.Status.Conditions) != 0 || w.Status.LastSyncTime != "" {
		t.Errorf("%s/%s, which this manager must not sync, has a status: %+v", ns, name, w.Status)
	}
}
