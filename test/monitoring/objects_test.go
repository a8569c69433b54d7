package monitoring

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// TestPrometheusOperatorObjectsDecodeStrictly stands in for a server-side
// dry-run, which would need the Prometheus Operator's CRDs: the
// ServiceMonitors and PrometheusRules of config/prometheus and of the chart
// decode into the operator's Go types with no unknown field.
func TestPrometheusOperatorObjectsDecodeStrictly(t *testing.T) {
	sources := map[string][]byte{"config/prometheus": run(t, "kubectl", "kustomize", filepath.Join(root(), "config", "prometheus"))}
	for _, values := range []string{"monitoring", "insecure"} {
		sources["chart with ci/"+values+"-values.yaml"] = run(t, helmPath(t), "template", "servicewatch", filepath.Join(root(), "charts", "servicewatch"),
			"-n", "servicewatch-system", "-f", filepath.Join(root(), "charts", "servicewatch", "ci", values+"-values.yaml"))
	}
	for source, out := range sources {
		kinds := map[string]int{}
		for _, doc := range documents(t, out) {
			var meta struct{ Kind, APIVersion string }
			_ = json.Unmarshal(doc, &meta)
			var into any
			switch meta.Kind {
			case monitoringv1.ServiceMonitorsKind:
				into = &monitoringv1.ServiceMonitor{}
			case monitoringv1.PrometheusRuleKind:
				into = &monitoringv1.PrometheusRule{}
			default:
				continue
			}
			kinds[meta.Kind]++
			dec := json.NewDecoder(bytes.NewReader(doc))
			dec.DisallowUnknownFields()
			if err := dec.Decode(into); err != nil {
				t.Errorf("%s: %s: %v", source, meta.Kind, err)
			}
		}
		if kinds[monitoringv1.ServiceMonitorsKind] != 1 {
			t.Errorf("%s renders %d ServiceMonitors, want 1", source, kinds[monitoringv1.ServiceMonitorsKind])
		}
	}
}

// documents returns each YAML document of b as JSON.
func documents(t *testing.T, b []byte) [][]byte {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var docs [][]byte
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return docs
			}
			t.Fatal(err)
		}
		if len(raw) > 0 && string(raw) != "null" {
			docs = append(docs, raw)
		}
	}
}

func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// helmPath is $HELM (the Makefile sets it) or the newest bin/helm-v*.
func helmPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("HELM"); p != "" {
		return p
	}
	found, _ := filepath.Glob(filepath.Join(root(), "bin", "helm-v*"))
	if len(found) == 0 {
		t.Fatal("no helm: run `make helm` (or `make test`), which builds it into bin/, or set HELM")
	}
	sort.Strings(found)
	return found[len(found)-1]
}
