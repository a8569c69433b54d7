//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// TestFailover runs two replicas under load (100 watches), deletes the
// leader Pod, and checks the other takes over within the lease, no watch
// stops being Ready, and the cloud sees no burst of calls for watches that
// synced less than an interval ago.
func TestFailover(t *testing.T) {
	const (
		ns      = "e2e-load"
		watches = 100
	)
	cloud := deployFakeCloud(t, "e2e-cloud-load")
	restrictedNamespace(t, systemNamespace)
	restrictedNamespace(t, ns)
	dumpOnFailure(t, systemNamespace)
	cleanup(t, "helm uninstall and deleting the CRD", func() error {
		if _, err := helmErr("uninstall", "servicewatch", "-n", systemNamespace, "--wait", "--ignore-not-found"); err != nil {
			return err
		}
		_, err := kubectlErr(t, "", "delete", "crd", "servicewatches.cloud.servicewatch.io", "clustercloudaccounts.cloud.servicewatch.io", "--ignore-not-found", "--wait=true")
		return err
	})
	helm(t, "install", "servicewatch", "charts/servicewatch", "-n", systemNamespace,
		"--set", "image.repository=servicewatch", "--set", "image.tag=dev", "--set", "replicaCount=2",
		// The client-side budget (10 calls per 10 s per key by default)
		// would spread the first syncs of 100 services over minutes: this
		// test is about the fail-over, the budget has tests of its own.
		"--set-json", `extraArgs=["--management-rate-limit=0"]`,
		"--wait", "--timeout", "3m")

	// 100 watches of 100 services (copies of the sample service), so that
	// each costs the cloud calls of its own, each syncing every 10 minutes:
	// none is due again during the test.
	manyWatches(t, ns, cloud, watches, 10*time.Minute, "v1beta1")
	kubectl(t, "wait", "-n", ns, "sw", "--all", "--for=condition=Ready", "--timeout=5m")
	if n := readyWatches(t, ns); n != watches {
		t.Fatalf("%d of %d watches Ready", n, watches)
	}

	leader := leaseHolderPod(t)
	pods := managerPods(t)
	if len(pods) != 2 {
		t.Fatalf("manager Pods %v, want two", pods)
	}
	var lease struct {
		Spec struct {
			LeaseDurationSeconds int `json:"leaseDurationSeconds"`
		} `json:"spec"`
	}
	getJSON(t, &lease, "lease", "-n", systemNamespace, leaseName)
	leaseDuration := time.Duration(lease.Spec.LeaseDurationSeconds) * time.Second
	if leaseDuration == 0 {
		t.Fatal("the lease has no leaseDurationSeconds")
	}
	callsBefore := cloud.calls(t)
	if n := callsBefore[string(fakecloud.OpListPipes)]; n < watches {
		t.Fatalf("the cloud answered %d list_pipes calls for %d watches of distinct services: the test cannot see a burst", n, watches)
	}

	// Every watch's Ready, all through the fail-over.
	stopPolling := pollLapses(func() string {
		if n, err := readyWatchesErr(t, ns); err == nil && n != watches {
			return fmt.Sprintf("%d Ready", n)
		}
		return ""
	})

	t.Logf("deleting the leader %s (lease %s)", leader, leaseDuration)
	deleted := time.Now()
	kubectl(t, "delete", "pod", "-n", systemNamespace, leader, "--wait=false")
	var newLeader string
	eventually(t, 2*leaseDuration+30*time.Second, "another Pod holds the lease", func() error {
		newLeader = leaseHolderPod(t)
		if newLeader == "" || newLeader == leader {
			return fmt.Errorf("lease held by %q", newLeader)
		}
		return nil
	})
	took := time.Since(deleted)
	t.Logf("%s took over %s after the leader's deletion", newLeader, took.Round(100*time.Millisecond))
	if took > leaseDuration {
		t.Errorf("the new leader took over after %s, more than the lease (%s)", took, leaseDuration)
	}
	// Give the new leader time to look at every watch.
	time.Sleep(15 * time.Second)
	if notReady := stopPolling(); len(notReady) > 0 {
		t.Errorf("watches stopped being Ready during the fail-over: %v", notReady)
	}
	callsAfter := cloud.calls(t)
	for op, n := range callsAfter {
		if extra := n - callsBefore[op]; extra > watches/10 {
			t.Errorf("%s: %d calls after the fail-over for %d watches synced less than an interval ago, want no burst (at most %d)", op, extra, watches, watches/10)
		}
	}
	t.Logf("cloud calls before %v, after %v", callsBefore, callsAfter)
}

func leaseHolderPod(t *testing.T) string {
	t.Helper()
	return leaseHolderIn(t, systemNamespace)
}

// leaseHolderIn is the Pod holding the lease of the manager installed in ns.
func leaseHolderIn(t *testing.T, ns string) string {
	t.Helper()
	holder := kubectl(t, "get", "lease", "-n", ns, leaseName, "-o", "jsonpath={.spec.holderIdentity}")
	pod, _, _ := strings.Cut(holder, "_")
	return pod
}

func readyWatches(t *testing.T, ns string) int {
	t.Helper()
	n, err := readyWatchesErr(t, ns)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func readyWatchesErr(t *testing.T, ns string) (int, error) {
	out, err := kubectlErr(t, "", "get", "sw", "-n", ns, "-o", "json")
	if err != nil {
		return 0, err
	}
	var list struct {
		Items []watchStatus `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return 0, err
	}
	n := 0
	for _, w := range list.Items {
		if s, _ := w.ready(); s == "True" {
			n++
		}
	}
	return n, nil
}
