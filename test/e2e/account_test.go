//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// TestAccountThroughTheChart installs the chart, and, as the platform team,
// one ClusterCloudAccount whose key is in the operator's namespace and
// which allows one tenant namespace: a watch there uses it and is Ready
// with no Secret of its own; a watch in another namespace is refused
// (AccountNotAllowed, naming its namespace); the account counts both, and
// a tenant cannot read the key.
func TestAccountThroughTheChart(t *testing.T) {
	cloud := deployFakeCloud(t, "e2e-cloud-account")
	restrictedNamespace(t, systemNamespace)
	restrictedNamespace(t, "e2e-account-a")
	restrictedNamespace(t, "e2e-account-b")
	dumpOnFailure(t, systemNamespace, "e2e-account-a", "e2e-account-b")
	installed := false
	cleanup(t, "helm uninstall, the account and the CRDs", func() error {
		if _, err := kubectlErr(t, "", "delete", "clustercloudaccount", "e2e-org", "--ignore-not-found", "--wait=true"); err != nil {
			return err
		}
		if installed {
			if _, err := helmErr("uninstall", "servicewatch", "-n", systemNamespace, "--wait"); err != nil {
				return err
			}
		}
		_, err := kubectlErr(t, "", "delete", "crd", "servicewatches.cloud.servicewatch.io", "clustercloudaccounts.cloud.servicewatch.io", "--ignore-not-found", "--wait=true")
		return err
	})
	helm(t, "install", "servicewatch", "charts/servicewatch", "-n", systemNamespace,
		"--set", "image.repository=servicewatch", "--set", "image.tag=dev", "--wait", "--timeout", "3m")
	installed = true

	s := readSample(t)
	d := fakecloud.DefaultData()
	apply(t, fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: e2e-org-key
  namespace: %[1]s
stringData:
  keyId: %[2]s
  keySecret: %[3]s
---
apiVersion: cloud.servicewatch.io/v1beta1
kind: ClusterCloudAccount
metadata:
  name: e2e-org
spec:
  managementApi:
    url: %[4]s
    secretRef: {name: e2e-org-key}
  conditions:
  - namespaces: [e2e-account-a]
`, systemNamespace, d.ManagementKey.KeyID, d.ManagementKey.KeySecret, cloud.url))
	for _, ns := range []string{"e2e-account-a", "e2e-account-b"} {
		apply(t, fmt.Sprintf(`apiVersion: cloud.servicewatch.io/v1beta1
kind: ServiceWatch
metadata:
  name: via-account
  namespace: %[1]s
spec:
  organizationId: %[2]s
  serviceId: %[3]s
  interval: 1m
  managementApi:
    accountRef: {name: e2e-org}
`, ns, s.Spec.OrganizationID, s.Spec.ServiceID))
	}

	waitReady(t, "e2e-account-a", "via-account", 2*time.Minute)
	if w := getWatch(t, "e2e-account-a", "via-account"); w.Status.Summary == nil || w.Status.Summary.Pipes == 0 {
		t.Errorf("the watch through the account has no pipes: %+v", w.Status.Summary)
	}
	kubectl(t, "wait", "-n", "e2e-account-b", "servicewatch/via-account", "--for=condition=Stalled", "--timeout=1m")
	refused := getWatch(t, "e2e-account-b", "via-account")
	for _, c := range refused.Status.Conditions {
		if c.Type == "Stalled" && (c.Reason != "AccountNotAllowed" || !strings.Contains(c.Message, `namespace "e2e-account-b"`)) {
			t.Errorf("the refused watch is Stalled with %s: %s", c.Reason, c.Message)
		}
	}
	eventually(t, time.Minute, "the account counts both namespaces", func() error {
		got := kubectl(t, "get", "cca", "e2e-org", "-o", "jsonpath={.status.namespaceCount} {.status.watches}")
		if got != "2 2" {
			return fmt.Errorf("namespaces and watches %q, want \"2 2\"", got)
		}
		return nil
	})
	// Tenants cannot read the key: the chart grants them nothing in the
	// operator's namespace.
	if out, err := kubectlErr(t, "", "auth", "can-i", "get", "secret/e2e-org-key", "-n", systemNamespace,
		"--as", "system:serviceaccount:e2e-account-a:default"); err == nil || !strings.HasPrefix(strings.TrimSpace(out), "no") {
		t.Errorf("a tenant's ServiceAccount may read the account's key: %q %v", out, err)
	}
}
