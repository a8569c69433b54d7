package main

import (
	"strings"
	"testing"
)

func TestRuleGroups(t *testing.T) {
	tests := []struct {
		name, in, want, wantErr string
	}{{
		name: "the spec of a PrometheusRule",
		in: `apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: rules}
spec:
  groups:
  - name: g
    rules:
    - alert: A
      expr: up == 0
`,
		want: "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n",
	}, {
		name:    "another kind",
		in:      "kind: ConfigMap\nspec: {groups: []}\n",
		wantErr: `kind "ConfigMap"`,
	}, {
		name:    "no groups",
		in:      "kind: PrometheusRule\nspec: {}\n",
		wantErr: "spec.groups",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ruleGroups([]byte(tt.in))
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %v, want one mentioning %s", err, tt.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case string(got) != tt.want:
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
