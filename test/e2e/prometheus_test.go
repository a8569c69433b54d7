//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// The alerting rules' `for:` are minutes long (10m for a failed pipe), too
// long for a test. The test runs a copy of config/prometheus/rules.yaml in
// which every `for:` is this and nothing else differs.
const testRuleFor = "20s"

// How often the test's Prometheus scrapes and evaluates. The ServiceMonitor
// sets no interval (the Prometheus Operator's default, 30s, applies); a
// short one keeps the test short and changes nothing of what is scraped.
const testScrapeInterval = "2s"

// serviceMonitor is the part of config/prometheus/monitor.yaml Prometheus's
// scrape configuration is made from. Unknown fields fail the test (strict
// decoding), so a setting added to the ServiceMonitor cannot be silently
// left out of what is tested.
type serviceMonitor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Endpoints []struct {
			Path            string `json:"path"`
			Port            string `json:"port"`
			Scheme          string `json:"scheme"`
			Interval        string `json:"interval,omitempty"`
			HonorLabels     bool   `json:"honorLabels,omitempty"`
			BearerTokenFile string `json:"bearerTokenFile,omitempty"`
			TLSConfig       *struct {
				InsecureSkipVerify bool `json:"insecureSkipVerify"`
			} `json:"tlsConfig,omitempty"`
		} `json:"endpoints"`
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
	} `json:"spec"`
}

// testPrometheus runs a real Prometheus on the node, scraping the manager
// with the settings of config/prometheus/monitor.yaml (the Service its
// selector picks, the named port, HTTPS, the bearer token of a
// ServiceAccount bound to the metrics-reader ClusterRole, the TLS settings,
// the target labels the Prometheus Operator gives a ServiceMonitor's
// targets) and evaluating config/prometheus/rules.yaml. The fake cloud turns
// a pipe of the watch Failed: ServiceWatchPipeFailed goes pending, then
// firing, with the watch's namespace and name; the pipe recovers: the alert
// resolves.
func testPrometheus(t *testing.T, cloud fakeCloud, watch, watchNS string) {
	bin := os.Getenv("PROMETHEUS")
	if bin == "" {
		t.Fatal("PROMETHEUS (the prometheus binary make test-e2e builds) is unset")
	}
	dir := t.TempDir()
	token := scraperToken(t, "e2e-prometheus")
	tokenFile := filepath.Join(dir, "token")
	writeFile(t, tokenFile, token)
	writeFile(t, filepath.Join(dir, "rules.yaml"), testRules(t))
	writeFile(t, filepath.Join(dir, "prometheus.yaml"), scrapeConfig(t, tokenFile))
	api := startPrometheus(t, bin, dir)

	scraped := t.Run("the manager is scraped with the ServiceMonitor's settings", func(t *testing.T) {
		eventually(t, time.Minute, "the scrape target up", func() error {
			var v struct {
				ActiveTargets []struct {
					Health    string `json:"health"`
					LastError string `json:"lastError"`
					ScrapeURL string `json:"scrapeUrl"`
				} `json:"activeTargets"`
			}
			if err := promGet(t, api+"/api/v1/targets?state=active", &v); err != nil {
				return err
			}
			if len(v.ActiveTargets) != 1 {
				return fmt.Errorf("active targets %+v, want one", v.ActiveTargets)
			}
			if tg := v.ActiveTargets[0]; tg.Health != "up" {
				return fmt.Errorf("target %s is %q: %s", tg.ScrapeURL, tg.Health, tg.LastError)
			}
			return nil
		})
	})

	if !scraped {
		t.Fatal("Prometheus cannot scrape the manager, so no alert can fire")
	}

	d := fakecloud.DefaultData()
	svc := d.Organizations[readSample(t).Spec.OrganizationID][readSample(t).Spec.ServiceID]
	i := slices.IndexFunc(svc.Pipes, func(p map[string]any) bool { return p["state"] == "Running" })
	if i < 0 {
		t.Fatal("the sample service has no Running pipe to fail")
	}
	pipeName, _ := svc.Pipes[i]["name"].(string)
	want := map[string]string{"alertname": "ServiceWatchPipeFailed", "namespace": watchNS, "servicewatch": watch, "pipe_name": pipeName}

	fired := t.Run("a Failed pipe: ServiceWatchPipeFailed pending, then firing", func(t *testing.T) {
		failed := fakecloud.DefaultData()
		failed.Organizations[readSample(t).Spec.OrganizationID][readSample(t).Spec.ServiceID].Pipes[i]["state"] = "Failed"
		cloud.setData(t, failed)
		requestSync(t, watchNS, watch)
		waitAlert(t, api, want, "pending", 2*time.Minute)
		waitAlert(t, api, want, "firing", time.Minute)
	})

	if !fired {
		// Resolving is only shown by an alert that was there.
		t.Fatal("the alert never fired, so its resolving cannot be checked")
	}
	t.Run("the pipe Running again: the alert resolves", func(t *testing.T) {
		cloud.setData(t, fakecloud.DefaultData())
		requestSync(t, watchNS, watch)
		waitAlert(t, api, want, "", 2*time.Minute)
	})
}

// scraperToken makes a ServiceAccount bound to the metrics-reader ClusterRole,
// as monitor.yaml's comment asks of Prometheus's, and returns a token of it.
func scraperToken(t *testing.T, ns string) string {
	t.Helper()
	restrictedNamespace(t, ns)
	bindMetricsReader(t, ns, "prometheus")
	return strings.TrimSpace(kubectl(t, "create", "token", "-n", ns, "prometheus", "--duration=1h"))
}

// bindMetricsReader makes the ServiceAccount sa in ns and binds it to the
// metrics-reader ClusterRole until the test ends.
func bindMetricsReader(t *testing.T, ns, sa string) {
	t.Helper()
	binding := "e2e-" + sa + "-metrics-reader"
	apply(t, fmt.Sprintf(`apiVersion: v1
kind: ServiceAccount
metadata:
  name: %[3]s
  namespace: %[1]s
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: %[4]s
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: %[2]s
subjects:
- kind: ServiceAccount
  name: %[3]s
  namespace: %[1]s
`, ns, metricsReader, sa, binding))
	cleanup(t, "deleting the ClusterRoleBinding "+binding, func() error {
		_, err := kubectlErr(t, "", "delete", "clusterrolebinding", binding, "--ignore-not-found")
		return err
	})
}

// testRules is config/prometheus/rules.yaml's groups as a Prometheus rule
// file, with every `for:` set to testRuleFor.
func testRules(t *testing.T) string {
	t.Helper()
	var rule struct {
		Spec struct {
			Groups []map[string]any `json:"groups"`
		} `json:"spec"`
	}
	readRepoYAML(t, "config/prometheus/rules.yaml", &rule, yaml.Unmarshal)
	if len(rule.Spec.Groups) == 0 {
		t.Fatal("config/prometheus/rules.yaml has no rule groups")
	}
	for _, g := range rule.Spec.Groups {
		rules, _ := g["rules"].([]any)
		for _, r := range rules {
			if m, ok := r.(map[string]any); ok && m["for"] != nil {
				m["for"] = testRuleFor
			}
		}
	}
	out, err := yaml.Marshal(map[string]any{"groups": rule.Spec.Groups})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// scrapeConfig turns monitor.yaml into Prometheus's configuration, as the
// Prometheus Operator would: the manager's Service is the one in the
// ServiceMonitor's namespace whose labels its selector matches, the target
// is that Service's port of the endpoint's name (its ClusterIP, which the
// node reaches through kube-proxy), and the target carries the labels the
// operator gives every ServiceMonitor target (namespace, service, endpoint,
// job), which the scraped series' own labels override only with honorLabels.
func scrapeConfig(t *testing.T, tokenFile string) string {
	t.Helper()
	var sm serviceMonitor
	readRepoYAML(t, "config/prometheus/monitor.yaml", &sm, yaml.UnmarshalStrict)
	if sm.Kind != "ServiceMonitor" || len(sm.Spec.Endpoints) != 1 || len(sm.Spec.Selector.MatchLabels) == 0 {
		t.Fatalf("config/prometheus/monitor.yaml: want a ServiceMonitor with one endpoint and a selector, got %+v", sm)
	}
	ep := sm.Spec.Endpoints[0]

	var sel []string
	for k, v := range sm.Spec.Selector.MatchLabels {
		sel = append(sel, k+"="+v)
	}
	slices.Sort(sel)
	// config/default puts everything in systemNamespace (its namespace:
	// replaces the ServiceMonitor's, as it does the Service's).
	var services struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				ClusterIP string `json:"clusterIP"`
				Ports     []struct {
					Name string `json:"name"`
					Port int    `json:"port"`
				} `json:"ports"`
			} `json:"spec"`
		} `json:"items"`
	}
	getJSON(t, &services, "services", "-n", systemNamespace, "-l", strings.Join(sel, ","))
	if len(services.Items) != 1 {
		t.Fatalf("the ServiceMonitor's selector %v picks %d Services in %s, want the manager's metrics Service", sel, len(services.Items), systemNamespace)
	}
	svc := services.Items[0]
	port := 0
	for _, p := range svc.Spec.Ports {
		if p.Name == ep.Port {
			port = p.Port
		}
	}
	if port == 0 {
		t.Fatalf("Service %s has no port named %q (the ServiceMonitor's endpoint port)", svc.Metadata.Name, ep.Port)
	}

	job := map[string]any{
		"job_name":        fmt.Sprintf("serviceMonitor/%s/%s/0", systemNamespace, sm.Metadata.Name),
		"scheme":          ep.Scheme,
		"metrics_path":    ep.Path,
		"honor_labels":    ep.HonorLabels,
		"scrape_interval": testScrapeInterval,
		"static_configs": []any{map[string]any{
			"targets": []string{net.JoinHostPort(svc.Spec.ClusterIP, fmt.Sprint(port))},
			"labels": map[string]string{
				"namespace": systemNamespace,
				"service":   svc.Metadata.Name,
				"endpoint":  ep.Port,
				"job":       svc.Metadata.Name,
			},
		}},
	}
	if ep.BearerTokenFile != "" {
		// The file is the Pod's ServiceAccount token; here, a token of
		// the same kind of ServiceAccount, made by the test.
		job["authorization"] = map[string]any{"type": "Bearer", "credentials_file": tokenFile}
	}
	if ep.TLSConfig != nil {
		job["tls_config"] = map[string]any{"insecure_skip_verify": ep.TLSConfig.InsecureSkipVerify}
	}
	out, err := yaml.Marshal(map[string]any{
		"global":         map[string]any{"scrape_interval": testScrapeInterval, "evaluation_interval": testScrapeInterval},
		"rule_files":     []string{"rules.yaml"},
		"scrape_configs": []any{job},
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// startPrometheus runs Prometheus on the node, listening on loopback, until
// the end of the test, and returns its API's base URL once it is ready.
func startPrometheus(t *testing.T, bin, dir string) string {
	t.Helper()
	var lc net.ListenConfig
	l, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	logPath := filepath.Join(dir, "prometheus.log")
	if d := os.Getenv("E2E_LOG_DIR"); d != "" {
		logPath = filepath.Join(d, "prometheus.log")
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	// t.Context ends just before the test's cleanups, which wait for it.
	cmd := exec.CommandContext(t.Context(), bin,
		"--config.file="+filepath.Join(dir, "prometheus.yaml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=info")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting prometheus: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logFile.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				t.Logf("prometheus log (%s), last lines:\n%s", logPath, tail(string(b), 30))
			}
		}
	})
	api := "http://" + addr
	eventually(t, time.Minute, "prometheus ready", func() error {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, api+"/-/ready", http.NoBody)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/-/ready: %s", resp.Status)
		}
		return nil
	})
	// The rule file loaded: a rule that does not parse is logged and
	// leaves no group.
	var rules struct {
		Groups []struct {
			Name string `json:"name"`
		} `json:"groups"`
	}
	if err := promGet(t, api+"/api/v1/rules", &rules); err != nil || len(rules.Groups) == 0 {
		t.Fatalf("prometheus loaded no rule group from the test copy of rules.yaml (%v)", err)
	}
	return api
}

// promGet reads a Prometheus API answer's data into v.
func promGet(t *testing.T, url string, v any) error {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("GET %s: %s: %w", url, resp.Status, err)
	}
	if env.Status != "success" {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, env.Error)
	}
	return json.Unmarshal(env.Data, v)
}

// waitAlert waits until the alert whose labels include want is in state
// (pending or firing) in Prometheus's /api/v1/alerts; state "" waits until
// no such alert is there (resolved).
func waitAlert(t *testing.T, api string, want map[string]string, state string, timeout time.Duration) {
	t.Helper()
	what := fmt.Sprintf("alert %v %s", want, state)
	if state == "" {
		what = fmt.Sprintf("alert %v resolved", want)
	}
	eventually(t, timeout, what, func() error {
		var v struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		}
		if err := promGet(t, api+"/api/v1/alerts", &v); err != nil {
			return err
		}
		var seen []string
		for _, a := range v.Alerts {
			seen = append(seen, fmt.Sprintf("%s %v", a.State, a.Labels))
			if !matches(a.Labels, want) {
				continue
			}
			if state == "" {
				return fmt.Errorf("still %s", a.State)
			}
			if a.State == state {
				return nil
			}
		}
		if state == "" {
			return nil
		}
		return fmt.Errorf("alerts: %v", seen)
	})
}

func matches(labels, want map[string]string) bool {
	for k, v := range want {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// requestSync asks for a sync now, as a user would, so the test need not
// wait out the watch's interval.
func requestSync(t *testing.T, ns, name string) {
	t.Helper()
	kubectl(t, "annotate", "--overwrite", "-n", ns, "servicewatch/"+name, "servicewatch.io/requested-at="+time.Now().Format(time.RFC3339Nano))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
