// Package chart tests the Helm chart of charts/servicewatch: every object it
// renders, with each value set of charts/servicewatch/ci, is accepted by a
// real API server; its defaults install what config/default does; and the
// files it copies from config/ are current.
package chart

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
	"github.com/servicewatch/servicewatch/test/internal/objects"
)

const (
	release   = "servicewatch"
	namespace = "servicewatch-system"
	chartDir  = "charts/servicewatch"
)

// valueSets are the chart's defaults and every file of its ci/ folder.
func valueSets(t *testing.T) map[string][]string {
	t.Helper()
	sets := map[string][]string{"defaults": nil}
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), chartDir, "ci", "*-values.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no value sets in %s/ci: %v", chartDir, err)
	}
	for _, f := range files {
		sets[strings.TrimSuffix(filepath.Base(f), "-values.yaml")] = []string{"-f", f}
	}
	return sets
}

func TestChartObjectsPassServerSideDryRun(t *testing.T) {
	e := testenv.StartForTest(t)
	ctx := context.Background()
	for name, args := range valueSets(t) {
		t.Run(name, func(t *testing.T) {
			objs := render(t, args...)
			for _, ns := range namespacesOf(objs) {
				createNamespace(ctx, t, e.Client, ns)
			}
			checked := 0
			for _, u := range objs {
				if u.GroupVersionKind().Group == "monitoring.coreos.com" {
					// No Prometheus Operator CRDs here; test/monitoring
					// decodes these strictly into the operator's types.
					continue
				}
				err := e.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()),
					client.DryRunAll, client.FieldOwner("chart-test"), client.ForceOwnership)
				if err != nil {
					t.Errorf("%s: %v", objects.ID(u), err)
				}
				checked++
			}
			if checked < 10 {
				t.Errorf("only %d objects rendered", checked)
			}
		})
	}
}

// TestChartDefaultsEqualConfigDefault keeps the chart and config/default
// from drifting apart: same objects, same RBAC rules and bindings, same
// manager container and pod security.
func TestChartDefaultsEqualConfigDefault(t *testing.T) {
	chart := objects.ByID(render(t))
	kustomize := objects.ByID(kustomizeBuild(t, "default"))
	delete(kustomize, "Namespace/"+namespace) // Helm installs into an existing namespace.

	if got, want := slices.Sorted(maps.Keys(chart)), slices.Sorted(maps.Keys(kustomize)); !slices.Equal(got, want) {
		t.Fatalf("the chart renders\n  %s\nconfig/default\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	for key, k := range kustomize {
		c := chart[key]
		var fields [][]string
		switch k.GetKind() {
		case "ClusterRole", "Role":
			fields = [][]string{{"rules"}}
		case "ClusterRoleBinding", "RoleBinding":
			fields = [][]string{{"roleRef"}, {"subjects"}}
		case "Service":
			fields = [][]string{{"spec", "ports"}}
		case "CustomResourceDefinition":
			fields = [][]string{{"spec"}}
			if c.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
				t.Errorf("the chart's CRD lacks helm.sh/resource-policy: keep; an uninstall would delete every ServiceWatch")
			}
		case "Deployment":
			fields = [][]string{
				{"spec", "replicas"},
				{"spec", "template", "spec", "securityContext"},
				{"spec", "template", "spec", "terminationGracePeriodSeconds"},
				{"spec", "template", "spec", "serviceAccountName"},
			}
			for _, f := range []string{"args", "command", "securityContext", "resources", "ports", "env", "livenessProbe", "readinessProbe"} {
				if !reflect.DeepEqual(containerField(c, f), containerField(k, f)) {
					t.Errorf("%s: container %s differ:\n  chart:     %v\n  kustomize: %v", key, f, containerField(c, f), containerField(k, f))
				}
			}
		}
		for _, f := range fields {
			cv, _, _ := unstructured.NestedFieldNoCopy(c.Object, f...)
			kv, _, _ := unstructured.NestedFieldNoCopy(k.Object, f...)
			if !reflect.DeepEqual(cv, kv) {
				t.Errorf("%s: .%s differs:\n  chart:     %v\n  kustomize: %v", key, strings.Join(f, "."), cv, kv)
			}
		}
	}
}

// TestChartShipsConfigsRulesAndDashboard checks the optional objects carry
// config/'s alerting rules and dashboard.
func TestChartShipsConfigsRulesAndDashboard(t *testing.T) {
	objs := objects.ByID(render(t, "--set", "prometheusRule.enabled=true,dashboard.enabled=true"))
	rule := objs["PrometheusRule/"+namespace+"/servicewatch-rules"]
	if rule == nil {
		t.Fatal("no PrometheusRule rendered")
	}
	want := kustomizeBuild(t, "prometheus")
	for _, u := range want {
		if u.GetKind() == "PrometheusRule" && !reflect.DeepEqual(u.Object["spec"], rule.Object["spec"]) {
			t.Errorf("the chart's PrometheusRule spec differs from config/prometheus/rules.yaml")
		}
	}
	cm := objs["ConfigMap/"+namespace+"/servicewatch-grafana-dashboard"]
	if cm == nil {
		t.Fatal("no dashboard ConfigMap rendered")
	}
	json, _, _ := unstructured.NestedString(cm.Object, "data", "servicewatch.json")
	if json != string(read(t, "config/grafana/servicewatch.json")) {
		t.Error("the chart's dashboard differs from config/grafana/servicewatch.json")
	}
	if cm.GetLabels()["grafana_dashboard"] != "1" {
		t.Errorf("dashboard ConfigMap labels %v, want grafana_dashboard=1", cm.GetLabels())
	}
}

func TestChartNamespacedAndShardValues(t *testing.T) {
	ns := objects.ByID(render(t, "--set", "watchNamespaces={team-a,team-b}"))
	for _, id := range []string{"ClusterRole/servicewatch-manager-role", "ClusterRoleBinding/servicewatch-manager-rolebinding"} {
		if ns[id] != nil {
			t.Errorf("with watchNamespaces the chart still renders %s, a cluster-wide grant on Secrets", id)
		}
	}
	for _, team := range []string{"team-a", "team-b"} {
		for _, id := range []string{"Role/" + team + "/servicewatch-manager-role", "RoleBinding/" + team + "/servicewatch-manager-rolebinding"} {
			if ns[id] == nil {
				t.Errorf("with watchNamespaces the chart renders no %s", id)
			}
		}
	}
	// Accounts need cluster-wide reads of namespaces: a namespaced release
	// serves none.
	for _, want := range []string{"--watch-namespaces=team-a,team-b", "--account-namespace="} {
		if args := containerArgs(ns["Deployment/"+namespace+"/servicewatch-controller-manager"]); !slices.Contains(args, want) {
			t.Errorf("manager args %v lack %s", args, want)
		}
	}

	shard := objects.ByID(render(t, "--set", "shard.name=a,shard.labelSelector=sharding.servicewatch.io/shard=a"))
	args := containerArgs(shard["Deployment/"+namespace+"/servicewatch-controller-manager"])
	for _, want := range []string{"--watch-label-selector=sharding.servicewatch.io/shard=a", "--leader-election-id=a.servicewatch.cloud.servicewatch.io"} {
		if !slices.Contains(args, want) {
			t.Errorf("shard manager args %v lack %s", args, want)
		}
	}
	if slices.Contains(args, "--storage-migration=false") {
		t.Errorf("a release that installs the CRDs does not migrate them: args %v", args)
	}
	// The release that installs the CRDs migrates their storage; another
	// shard's leader leaves it to that one.
	other := objects.ByID(render(t, "--set", "shard.name=b,shard.labelSelector=sharding.servicewatch.io/shard=b,crds.install=false"))
	if args := containerArgs(other["Deployment/"+namespace+"/servicewatch-controller-manager"]); !slices.Contains(args, "--storage-migration=false") {
		t.Errorf("a release with crds.install=false migrates the CRDs it does not install: args %v", args)
	}
	if _, err := helm(t.Context(), "template", release, filepath.Join(testenv.RepoRoot(), chartDir), "--set", "shard.labelSelector=sharding.servicewatch.io/shard=a"); err == nil || !strings.Contains(err.Error(), "shard.name is required") {
		t.Errorf("a shard without a name: error %v, want one saying shard.name is required", err)
	}
}

// TestChartEgressValues: the chart turns the dial guard on by default (and
// lets it be turned off), and passes allowedApiUrls to the manager.
func TestChartEgressValues(t *testing.T) {
	const deployment = "Deployment/" + namespace + "/servicewatch-controller-manager"
	def := containerArgs(objects.ByID(render(t))[deployment])
	if !slices.Contains(def, "--deny-local-addresses") {
		t.Errorf("default manager args %v lack --deny-local-addresses", def)
	}
	if slices.ContainsFunc(def, func(a string) bool { return strings.HasPrefix(a, "--allowed-api-urls") }) {
		t.Errorf("default manager args %v restrict the URLs; the default allows any", def)
	}
	set := containerArgs(objects.ByID(render(t, "--set", "denyLocalAddresses=false", "--set", "allowedApiUrls={https://api.example.com,*.alerts.example.com}"))[deployment])
	if slices.Contains(set, "--deny-local-addresses") {
		t.Errorf("with denyLocalAddresses=false the manager args %v still have --deny-local-addresses", set)
	}
	if !slices.Contains(set, "--allowed-api-urls=https://api.example.com,*.alerts.example.com") {
		t.Errorf("manager args %v lack --allowed-api-urls=https://api.example.com,*.alerts.example.com", set)
	}
}

// TestChartChangeSinkValues: no sink by default; changeSink's values
// become the manager's --change-sink-* flags.
func TestChartChangeSinkValues(t *testing.T) {
	const deployment = "Deployment/" + namespace + "/servicewatch-controller-manager"
	def := containerArgs(objects.ByID(render(t))[deployment])
	if slices.ContainsFunc(def, func(a string) bool { return strings.HasPrefix(a, "--change-sink") }) {
		t.Errorf("default manager args %v send changes somewhere; the default sends none", def)
	}
	set := containerArgs(objects.ByID(render(t, "--set", "changeSink.url=http://receiver.events.svc:8080/",
		"--set", "changeSink.queue=500", "--set", "changeSink.allowedAddresses={127.0.0.1,10.1.0.0/16}"))[deployment])
	for _, want := range []string{"--change-sink-url=http://receiver.events.svc:8080/", "--change-sink-queue=500",
		"--change-sink-timeout=10s", "--change-sink-allowed-addresses=127.0.0.1,10.1.0.0/16"} {
		if !slices.Contains(set, want) {
			t.Errorf("manager args %v lack %s", set, want)
		}
	}
}

// TestChartFilesAreCurrent: the chart's copies of config/ files, listed in
// the Makefile's CHART_FILES, equal their sources.
func TestChartFilesAreCurrent(t *testing.T) {
	pairs := regexp.MustCompile(`(config/\S+)=(\S+)`).FindAllStringSubmatch(string(read(t, "Makefile")), -1)
	if len(pairs) < 5 {
		t.Fatalf("CHART_FILES of the Makefile lists %d files", len(pairs))
	}
	listed := map[string]bool{}
	for _, p := range pairs {
		dst := filepath.Join(chartDir, "files", p[2])
		listed[dst] = true
		if !bytes.Equal(read(t, p[1]), read(t, dst)) {
			t.Errorf("%s differs from %s: run make chart-sync", dst, p[1])
		}
	}
	err := filepath.WalkDir(filepath.Join(testenv.RepoRoot(), chartDir, "files"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(testenv.RepoRoot(), path)
		if !listed[rel] {
			t.Errorf("%s is not in the Makefile's CHART_FILES, so nothing keeps it current", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func containerField(u *unstructured.Unstructured, field string) any {
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if len(containers) == 0 {
		return nil
	}
	container, ok := containers[0].(map[string]any)
	if !ok {
		return nil
	}
	return container[field]
}

// containerArgs returns the args of the first container of u's pod
// template; nil when there are none or they are not strings.
func containerArgs(u *unstructured.Unstructured) []string {
	raw, _ := containerField(u, "args").([]any)
	args := make([]string, 0, len(raw))
	for _, a := range raw {
		if s, ok := a.(string); ok {
			args = append(args, s)
		}
	}
	return args
}

// render runs `helm template` on the chart as release servicewatch in
// namespace servicewatch-system.
func render(t *testing.T, args ...string) []*unstructured.Unstructured {
	t.Helper()
	out, err := helm(t.Context(), append([]string{"template", release, filepath.Join(testenv.RepoRoot(), chartDir), "--namespace", namespace}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, out)
}

func helm(ctx context.Context, args ...string) ([]byte, error) {
	path := os.Getenv("HELM")
	if path == "" {
		found, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(), "bin", "helm-v*"))
		if len(found) == 0 {
			return nil, errors.New("no helm: run `make helm` (or `make test`), which builds it into bin/, or set HELM")
		}
		sort.Strings(found)
		path = found[len(found)-1]
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, errors.New("helm " + strings.Join(args, " ") + ": " + err.Error() + "\n" + stderr.String())
	}
	return out, nil
}

func kustomizeBuild(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(t.Context(), "kubectl", "kustomize", filepath.Join(testenv.RepoRoot(), "config", dir))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl kustomize config/%s: %v\n%s", dir, err, stderr.String())
	}
	return decode(t, out)
}

func decode(t *testing.T, b []byte) []*unstructured.Unstructured {
	t.Helper()
	objs, err := objects.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func namespacesOf(objs []*unstructured.Unstructured) []string {
	seen := map[string]bool{}
	for _, u := range objs {
		if ns := u.GetNamespace(); ns != "" {
			seen[ns] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// createNamespace creates a namespace for real: objects in a dry-run
// namespace are rejected.
func createNamespace(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"pod-security.kubernetes.io/enforce": "restricted"}},
	}}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(ns), client.FieldOwner("chart-test"), client.ForceOwnership); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

func read(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
