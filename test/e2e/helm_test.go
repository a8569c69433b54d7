//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const leaseName = "servicewatch.cloud.servicewatch.io"

// TestHelm installs the chart as the README says (helm install --wait into a
// namespace enforcing restricted), upgrades it to a changed value and checks
// the new Pod takes over without a watch losing its status, then uninstalls
// it and checks the CRD and the watches stay, as the README promises.
func TestHelm(t *testing.T) {
	cloud := deployFakeCloud(t, "e2e-cloud-helm")
	restrictedNamespace(t, systemNamespace)
	restrictedNamespace(t, "e2e-helm-data")
	dumpOnFailure(t, systemNamespace, "e2e-helm-data")
	installed := false
	cleanup(t, "helm uninstall and deleting the CRD", func() error {
		if installed {
			if _, err := helmErr("uninstall", "servicewatch", "-n", systemNamespace, "--wait"); err != nil {
				return err
			}
		}
		// The CRD outlives the release by design; remove it, and with it
		// the watches, so the next test starts from an empty cluster.
		_, err := kubectlErr(t, "", "delete", "crd", "servicewatches.cloud.servicewatch.io", "clustercloudaccounts.cloud.servicewatch.io", "--ignore-not-found", "--wait=true")
		return err
	})

	t.Log("helm install --wait")
	helm(t, "install", "servicewatch", "charts/servicewatch", "-n", systemNamespace,
		"--set", "image.repository=servicewatch", "--set", "image.tag=dev", "--wait", "--timeout", "3m")
	installed = true
	want := sampleCounts(t)
	sampleWatch(t, "e2e-helm-data", "analytics-prod", cloud, nil)
	waitReady(t, "e2e-helm-data", "analytics-prod", 2*time.Minute)
	before := getWatch(t, "e2e-helm-data", "analytics-prod")
	checkCounts(t, before, want)
	_, readySince := before.ready()
	oldPod := managerPods(t)
	if len(oldPod) != 1 {
		t.Fatalf("manager Pods after helm install: %v, want one", oldPod)
	}

	t.Run("helm upgrade to watchNamespaces: the new Pod takes over, no status lost", func(t *testing.T) {
		// Watch the watch's Ready condition all through the upgrade.
		stopPolling := pollLapses(func() string {
			out, err := kubectlErr(t, "", "get", "sw", "-n", "e2e-helm-data", "analytics-prod", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
			if err == nil && out != "True" {
				return fmt.Sprintf("Ready=%q", out)
			}
			return ""
		})
		helm(t, "upgrade", "servicewatch", "charts/servicewatch", "-n", systemNamespace, "--reuse-values",
			"--set", "watchNamespaces={e2e-helm-data}", "--wait", "--timeout", "3m")
		args := kubectl(t, "get", "deployment", "-n", systemNamespace, "servicewatch-controller-manager", "-o", "jsonpath={.spec.template.spec.containers[0].args}")
		if !strings.Contains(args, "--watch-namespaces=e2e-helm-data") {
			t.Fatalf("after helm upgrade the manager's args are %s, want --watch-namespaces=e2e-helm-data", args)
		}
		var newPod string
		eventually(t, 2*time.Minute, "the old manager Pod gone and the new one leading", func() error {
			pods := managerPods(t)
			if len(pods) != 1 || pods[0] == oldPod[0] {
				return fmt.Errorf("manager Pods %v, want one that is not %s", pods, oldPod[0])
			}
			newPod = pods[0]
			holder := kubectl(t, "get", "lease", "-n", systemNamespace, leaseName, "-o", "jsonpath={.spec.holderIdentity}")
			if !strings.HasPrefix(holder, newPod+"_") {
				return fmt.Errorf("lease %s held by %q, not %s", leaseName, holder, newPod)
			}
			return nil
		})
		// The new leader syncs: ask for a sync and see it answered.
		kubectl(t, "annotate", "sw", "-n", "e2e-helm-data", "analytics-prod", "--overwrite", "servicewatch.io/requested-at=helm-upgrade")
		eventually(t, time.Minute, "the new manager handles a sync request", func() error {
			got := kubectl(t, "get", "sw", "-n", "e2e-helm-data", "analytics-prod", "-o", "jsonpath={.status.lastHandledRequestedAt}")
			if got != "helm-upgrade" {
				return fmt.Errorf("status.lastHandledRequestedAt %q", got)
			}
			return nil
		})
		if lost := stopPolling(); len(lost) > 0 {
			t.Errorf("the watch was not Ready during the upgrade: %v", lost)
		}
		after := getWatch(t, "e2e-helm-data", "analytics-prod")
		checkCounts(t, after, want)
		if status, since := after.ready(); status != "True" || since != readySince {
			t.Errorf("Ready after the upgrade: %s since %s, want True since %s (before the upgrade)", status, since, readySince)
		}
	})

	t.Run("helm uninstall keeps the CRD and the watches", func(t *testing.T) {
		helm(t, "uninstall", "servicewatch", "-n", systemNamespace, "--wait", "--timeout", "3m")
		installed = false
		if pods := managerPods(t); len(pods) != 0 {
			t.Errorf("manager Pods after helm uninstall: %v", pods)
		}
		kubectl(t, "get", "crd", "servicewatches.cloud.servicewatch.io")
		w := getWatch(t, "e2e-helm-data", "analytics-prod")
		checkCounts(t, w, want)
		if status, _ := w.ready(); status != "True" {
			t.Errorf("the watch's status after helm uninstall: Ready=%q, want the last status kept", status)
		}
	})
}

// managerPods names the manager's Pods that are not being deleted.
func managerPods(t *testing.T) []string {
	t.Helper()
	return managerPodsIn(t, systemNamespace)
}

// managerPodsIn names the Pods of the manager installed in ns that are not
// being deleted.
func managerPodsIn(t *testing.T, ns string) []string {
	t.Helper()
	out := kubectl(t, "get", "pods", "-n", ns, "-l", "app.kubernetes.io/component=manager",
		"-o", `jsonpath={range .items[*]}{.metadata.name} {.metadata.deletionTimestamp}{"\n"}{end}`)
	var pods []string
	for l := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) == 1 {
			pods = append(pods, f[0])
		}
	}
	return pods
}
