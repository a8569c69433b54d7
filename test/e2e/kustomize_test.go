//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// TestKustomize installs the operator as the README says (kubectl apply -k
// config/default, with the image built from this tree), watches the fake
// cloud's sample service, reads the metrics as Prometheus would, has a real
// Prometheus scrape them and alert on them, and uninstalls it again.
func TestKustomize(t *testing.T) {
	cloud := deployFakeCloud(t, "e2e-cloud")
	dumpOnFailure(t, systemNamespace, "e2e-data")
	uninstalled := false
	cleanup(t, "kubectl delete -k config/default", func() error {
		if uninstalled {
			return nil
		}
		_, err := kubectlErr(t, "", "delete", "-k", "config/default", "--ignore-not-found", "--wait=true", "--timeout=3m")
		return err
	})

	t.Log("kubectl apply --server-side -k config/default")
	kubectl(t, "apply", "--server-side", "-k", "config/default")
	kubectl(t, "rollout", "status", "-n", systemNamespace, "deployment/servicewatch-controller-manager", "--timeout=3m")

	t.Run("manager Ready under enforce: restricted", func(t *testing.T) {
		enforce := kubectl(t, "get", "namespace", systemNamespace, "-o", `jsonpath={.metadata.labels.pod-security\.kubernetes\.io/enforce}`)
		if enforce != "restricted" {
			t.Fatalf("namespace %s enforces %q, want restricted", systemNamespace, enforce)
		}
		// The enforcement is live: a privileged Pod is turned away.
		_, err := kubectlErr(t, "", "run", "privileged", "-n", systemNamespace, "--image", fakeCloudImage,
			"--dry-run=server", `--overrides={"spec":{"containers":[{"name":"privileged","image":"`+fakeCloudImage+`","securityContext":{"privileged":true}}]}}`)
		if err == nil || !strings.Contains(err.Error(), "violates PodSecurity") {
			t.Fatalf("a privileged Pod in %s: got %v, want a PodSecurity rejection", systemNamespace, err)
		}
		ready := kubectl(t, "get", "pods", "-n", systemNamespace, "-l", "app.kubernetes.io/component=manager",
			"-o", `jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}`)
		if !regexp.MustCompile(`(?m)^servicewatch-controller-manager-\S+ True$`).MatchString(ready) {
			t.Fatalf("manager Pods: %q, want one Ready", ready)
		}
	})

	restrictedNamespace(t, "e2e-data")
	want := sampleCounts(t)
	sampleWatch(t, "e2e-data", "analytics-prod", cloud, nil)

	t.Run("kubectl wait --for=condition=Ready", func(t *testing.T) {
		waitReady(t, "e2e-data", "analytics-prod", 2*time.Minute)
	})

	t.Run("status shows the fake cloud's counts", func(t *testing.T) {
		checkCounts(t, getWatch(t, "e2e-data", "analytics-prod"), want)
		if n := cloud.calls(t)[string(fakecloud.OpListPipes)]; n == 0 {
			t.Fatalf("the fake cloud answered no list_pipes call (calls: %v): the counts did not come from it", cloud.calls(t))
		}
	})

	t.Run("kubectl get sw columns", func(t *testing.T) {
		out := kubectl(t, "get", "sw", "-n", "e2e-data", "-o", "wide")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 {
			t.Fatalf("kubectl get sw -o wide:\n%s\nwant a header and one row", out)
		}
		header := strings.Fields(lines[0])
		wantHeader := []string{"NAME", "READY", "REASON", "PIPES", "FAILED", "ENDPOINTS", "ALERTS", "LAST", "SYNC", "AGE", "SERVICE", "INTERVAL", "STATUS"}
		if strings.Join(header, " ") != strings.Join(wantHeader, " ") {
			t.Fatalf("kubectl get sw -o wide header %q, want %q", lines[0], strings.Join(wantHeader, " "))
		}
		// A column without a value (FAILED when no pipe failed) is blank, so
		// the row is read at the header's column offsets, not by fields.
		row := tableRow(lines[0], lines[1])
		got := []string{row["NAME"], row["READY"], row["REASON"], row["PIPES"], row["ENDPOINTS"], row["ALERTS"], row["SERVICE"]}
		wantRow := []string{"analytics-prod", "True", "Synced", fmt.Sprint(want.pipes), fmt.Sprint(want.endpoints), fmt.Sprint(want.alerts), readSample(t).Spec.ServiceID}
		if strings.Join(got, " ") != strings.Join(wantRow, " ") {
			t.Fatalf("kubectl get sw -o wide row %q read as %q, want %q", lines[1], got, wantRow)
		}
	})

	t.Run("an event on the watch", func(t *testing.T) {
		eventually(t, 30*time.Second, "a Ready event", func() error {
			out := kubectl(t, "get", "events", "-n", "e2e-data", "--field-selector", "involvedObject.kind=ServiceWatch,involvedObject.name=analytics-prod",
				"-o", `jsonpath={range .items[*]}{.type} {.reason}: {.message}{"\n"}{end}`)
			if !regexp.MustCompile(`(?m)^Normal Ready: Synced`).MatchString(out) {
				return fmt.Errorf("events: %q", out)
			}
			return nil
		})
	})

	t.Run("metrics over HTTPS from a Pod", func(t *testing.T) {
		testMetrics(t, "analytics-prod", "e2e-data", want)
	})

	t.Run("Prometheus scrapes as the ServiceMonitor says; the pipe alert fires and resolves", func(t *testing.T) {
		testPrometheus(t, cloud, "analytics-prod", "e2e-data")
	})

	t.Run("egress from the Pod range is dropped", testEgressGuard)

	t.Run("uninstall leaves nothing", func(t *testing.T) {
		kubectl(t, "delete", "-k", "config/default", "--wait=true", "--timeout=3m")
		uninstalled = true
		for _, args := range [][]string{
			{"get", "crd", "servicewatches.cloud.servicewatch.io"},
			{"get", "namespace", systemNamespace},
		} {
			if _, err := kubectlErr(t, "", args...); err == nil || !strings.Contains(err.Error(), "NotFound") {
				t.Errorf("kubectl %s after uninstall: %v, want NotFound", strings.Join(args, " "), err)
			}
		}
		for _, kind := range []string{"clusterroles", "clusterrolebindings"} {
			out := kubectl(t, "get", kind, "-l", "app.kubernetes.io/part-of=servicewatch", "-o", "name")
			if strings.TrimSpace(out) != "" {
				t.Errorf("%s left after uninstall:\n%s", kind, out)
			}
		}
		// The watches went with their CRD.
		if _, err := kubectlErr(t, "", "get", "sw", "-n", "e2e-data"); err == nil {
			t.Errorf("ServiceWatches still served after uninstall")
		}
	})
}

// testMetrics reads the manager's metrics from a Pod, as Prometheus does:
// refused without a token (401) and with a token not bound to the
// metrics-reader ClusterRole (403), served with one bound (200), and the
// state metrics of the watch are there.
func testMetrics(t *testing.T, watch, watchNS string, want counts) {
	const ns = "e2e-scrape"
	restrictedNamespace(t, ns)
	apply(t, fmt.Sprintf(`apiVersion: v1
kind: ServiceAccount
metadata:
  name: stranger
  namespace: %s
`, ns))
	bindMetricsReader(t, ns, "scraper")
	ip := strings.TrimSpace(kubectl(t, "get", "service", "-n", systemNamespace, metricsService, "-o", "jsonpath={.spec.clusterIP}"))
	url := "https://" + ip + ":8443/metrics"
	const token = "/var/run/secrets/kubernetes.io/serviceaccount/token"

	if r := probe(t, ns, "no-token", "stranger", "get", "--url", url); r.Status != 401 {
		t.Errorf("GET /metrics without a token: %+v, want 401", short(r))
	}
	if r := probe(t, ns, "unbound-token", "stranger", "get", "--url", url, "--token-file", token); r.Status != 403 {
		t.Errorf("GET /metrics with a token not bound to %s: %+v, want 403", metricsReader, short(r))
	}
	r := probe(t, ns, "bound-token", "scraper", "get", "--url", url, "--token-file", token)
	if r.Status != 200 {
		t.Fatalf("GET /metrics with a token bound to %s: %+v, want 200", metricsReader, short(r))
	}
	for kind, n := range map[string]int{"pipes": want.pipes, "reverse_private_endpoints": want.endpoints, "alerts": want.alerts} {
		line := fmt.Sprintf(`servicewatch_items{kind=%q,name=%q,namespace=%q} %d`, kind, watch, watchNS, n)
		if !hasLine(r.Body, line) {
			t.Errorf("metrics lack the state metric line %s", line)
		}
	}
	for _, name := range []string{"servicewatch_pipe_info{", "servicewatch_condition{", "servicewatch_cloud_requests_total{"} {
		if !strings.Contains(r.Body, name) {
			t.Errorf("metrics lack %s...}", name)
		}
	}
}

func hasLine(text, line string) bool {
	return slices.Contains(strings.Split(text, "\n"), line)
}

// short keeps a probe's answer readable in a failure message.
func short(r probeResult) probeResult {
	if len(r.Body) > 200 {
		r.Body = r.Body[:200] + "..."
	}
	return r
}

// tableRow reads one row of kubectl's table at the offsets of the header's
// columns, by header name: kubectl starts each value where its header
// starts.
func tableRow(header, row string) map[string]string {
	starts := []int{}
	for i := range header {
		if header[i] != ' ' && (i == 0 || header[i-1] == ' ' && (i < 2 || header[i-2] == ' ')) {
			starts = append(starts, i)
		}
	}
	cells := map[string]string{}
	for n, start := range starts {
		end := len(header)
		if n+1 < len(starts) {
			end = starts[n+1]
		}
		name := strings.TrimSpace(header[start:end])
		if start < len(row) {
			cells[name] = strings.TrimSpace(row[start:min(end, len(row))])
		}
		if n+1 == len(starts) && start < len(row) {
			cells[name] = strings.TrimSpace(row[start:])
		}
	}
	return cells
}
