// Command promrules prints the rule groups of a PrometheusRule (the object's
// spec) as a Prometheus rule file, the form promtool reads:
//
//	go run ./hack/promrules < config/prometheus/rules.yaml > rules.yaml
package main

import (
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"
)

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "promrules:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	b, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	groups, err := ruleGroups(b)
	if err != nil {
		return err
	}
	_, err = out.Write(groups)
	return err
}

// ruleGroups returns the spec of a PrometheusRule as YAML.
func ruleGroups(prometheusRule []byte) ([]byte, error) {
	var obj struct {
		Kind string         `json:"kind"`
		Spec map[string]any `json:"spec"`
	}
	if err := yaml.Unmarshal(prometheusRule, &obj); err != nil {
		return nil, fmt.Errorf("reading the PrometheusRule: %w", err)
	}
	if obj.Kind != "PrometheusRule" || obj.Spec["groups"] == nil {
		return nil, fmt.Errorf("not a PrometheusRule with spec.groups (kind %q)", obj.Kind)
	}
	return yaml.Marshal(obj.Spec)
}
