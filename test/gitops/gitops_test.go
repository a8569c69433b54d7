// Package gitops tests how GitOps tools see a ServiceWatch: Flux through the
// kstatus library its health checks use, and Argo CD through the Lua health
// check and action of config/argocd, which docs/gitops.md embeds. Both read
// the very same objects, one per state a watch can be in.
package gitops

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

// repoFile reads a file of the repository, found from this file's location
// so the test runs from any directory.
func repoFile(t *testing.T, parts ...string) string {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(self), "..", "..")
	b, err := os.ReadFile(filepath.Join(append([]string{root}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// condition is a status condition as the operator writes it.
func condition(typ, conditionStatus, reason, message string, generation int64) map[string]any {
	return map[string]any{
		"type": typ, "status": conditionStatus, "reason": reason, "message": message,
		"observedGeneration": generation, "lastTransitionTime": "2026-11-22T15:04:05Z",
	}
}

// watch builds a ServiceWatch at generation gen with the given status (none
// when nil), as the API server would return it.
func watch(gen int64, suspend bool, st map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": swv1.GroupVersion.String(),
		"kind":       "ServiceWatch",
		"metadata": map[string]any{
			"name": "analytics-prod", "namespace": "data", "generation": gen,
			"creationTimestamp": "2026-11-22T15:00:00Z",
		},
		"spec": map[string]any{
			"organizationId": "7f0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d",
			"serviceId":      "4e2c6a1b-9d8f-4c3b-a2e1-0f9e8d7c6b5a",
			"interval":       "5m",
			"suspend":        suspend,
			"managementApi":  map[string]any{"secretRef": map[string]any{"name": "warehouse-api-key"}},
		},
	}}
	if st != nil {
		u.Object["status"] = st
	}
	return u
}

func synced(gen int64) []any {
	return []any{
		condition(swv1.ConditionPipesSynced, "True", swv1.ReasonSynced, "Listed 4 pipes", gen),
		condition(swv1.ConditionReversePrivateEndpointsSynced, "True", swv1.ReasonSynced, "Listed 1 reverse private endpoints", gen),
		condition(swv1.ConditionAlertsSynced, "True", swv1.ReasonSynced, "Fetched 0 alerts", gen),
	}
}

func statusOf(observedGeneration int64, conditions ...any) map[string]any {
	return map[string]any{
		"observedGeneration": observedGeneration,
		"lastSyncTime":       "2026-11-22T15:04:05Z",
		"summary":            map[string]any{"pipes": int64(4), "reversePrivateEndpoints": int64(1), "alerts": int64(0)},
		"conditions":         conditions,
	}
}

const readyMessage = "Synced 4 pipes, 1 reverse private endpoints and 0 alerts"

// state is a ServiceWatch in one of the states of the README's
// troubleshooting table, with what Flux (kstatus) and Argo CD (the Lua check)
// make of it.
type state struct {
	name        string
	obj         func() *unstructured.Unstructured
	kstatus     status.Status
	argo        string
	argoMessage string // a part of the message Argo CD shows
}

func states() []state {
	return []state{{
		// The CRD defaults status.observedGeneration to -1 until the operator
		// writes status, so a brand-new watch is not Current before its first
		// sync (api/v1beta1 tests that the API server serves it so).
		name: "new, not yet seen by the operator",
		obj: func() *unstructured.Unstructured {
			return watch(1, false, map[string]any{"observedGeneration": int64(-1)})
		},
		kstatus: status.InProgressStatus, argo: "Progressing", argoMessage: "latest generation",
	}, {
		name: "new generation not yet observed",
		obj: func() *unstructured.Unstructured {
			return watch(2, false, statusOf(1, append(synced(1),
				condition(swv1.ConditionReady, "True", swv1.ReasonSynced, readyMessage, 1))...))
		},
		kstatus: status.InProgressStatus, argo: "Progressing", argoMessage: "latest generation",
	}, {
		name: "syncing a new generation",
		obj: func() *unstructured.Unstructured {
			return watch(2, false, statusOf(2, append(synced(1),
				condition(swv1.ConditionReady, "True", swv1.ReasonSynced, readyMessage, 1),
				condition(swv1.ConditionReconciling, "True", swv1.ReasonProgressing, "syncing generation 2", 2))...))
		},
		kstatus: status.InProgressStatus, argo: "Progressing", argoMessage: "Progressing: syncing generation 2",
	}, {
		name: "syncing on request",
		obj: func() *unstructured.Unstructured {
			return watch(1, false, statusOf(1, append(synced(1),
				condition(swv1.ConditionReady, "True", swv1.ReasonSynced, readyMessage, 1),
				condition(swv1.ConditionReconciling, "True", swv1.ReasonProgressing, "syncing as requested at 2026-11-22T15:10:00Z", 1))...))
		},
		kstatus: status.InProgressStatus, argo: "Progressing", argoMessage: "as requested",
	}, {
		name: "ready",
		obj: func() *unstructured.Unstructured {
			return watch(3, false, statusOf(3, append(synced(3),
				condition(swv1.ConditionReady, "True", swv1.ReasonSynced, readyMessage, 3))...))
		},
		kstatus: status.CurrentStatus, argo: "Healthy", argoMessage: readyMessage,
	}, {
		// A transient failure: the operator retries by itself. Flux keeps waiting
		// (until its timeout); Argo CD shows the failure.
		name: "failing: management API answers 503",
		obj: func() *unstructured.Unstructured {
			return watch(1, false, statusOf(1,
				condition(swv1.ConditionPipesSynced, "False", swv1.ReasonServerError, "list pipes: 503 Service Unavailable", 1),
				condition(swv1.ConditionReversePrivateEndpointsSynced, "True", swv1.ReasonSynced, "Listed 1 reverse private endpoints", 1),
				condition(swv1.ConditionAlertsSynced, "True", swv1.ReasonSynced, "Fetched 0 alerts", 1),
				condition(swv1.ConditionReady, "False", swv1.ReasonServerError, "PipesSynced: list pipes: 503 Service Unavailable", 1)))
		},
		kstatus: status.InProgressStatus, argo: "Degraded", argoMessage: "ServerError: PipesSynced: list pipes: 503",
	}, {
		name: "stalled: Secret missing",
		obj: func() *unstructured.Unstructured {
			msg := `Secret "warehouse-api-key" not found in namespace data`
			return watch(1, false, statusOf(1,
				condition(swv1.ConditionPipesSynced, "False", swv1.ReasonSecretNotFound, msg, 1),
				condition(swv1.ConditionReversePrivateEndpointsSynced, "False", swv1.ReasonSecretNotFound, msg, 1),
				condition(swv1.ConditionAlertsSynced, "True", swv1.ReasonSynced, "Fetched 0 alerts", 1),
				condition(swv1.ConditionStalled, "True", swv1.ReasonSecretNotFound, msg, 1),
				condition(swv1.ConditionReady, "False", swv1.ReasonSecretNotFound, "PipesSynced: "+msg, 1)))
		},
		kstatus: status.FailedStatus, argo: "Degraded", argoMessage: `SecretNotFound: Secret "warehouse-api-key" not found`,
	}, {
		name: "stalled: key rejected (401)",
		obj: func() *unstructured.Unstructured {
			msg := "list pipes: 401 Unauthorized"
			return watch(1, false, statusOf(1,
				condition(swv1.ConditionPipesSynced, "False", swv1.ReasonUnauthorized, msg, 1),
				condition(swv1.ConditionStalled, "True", swv1.ReasonUnauthorized, msg, 1),
				condition(swv1.ConditionReady, "False", swv1.ReasonUnauthorized, "PipesSynced: "+msg, 1)))
		},
		kstatus: status.FailedStatus, argo: "Degraded", argoMessage: "Unauthorized",
	}, {
		// Suspended is a choice, not a failure; kstatus has no word for it and
		// waits, so Flux health checks should leave suspended watches out.
		name: "suspended",
		obj: func() *unstructured.Unstructured {
			return watch(2, true, statusOf(2, append(synced(1),
				condition(swv1.ConditionReady, "False", swv1.ReasonSuspended, "spec.suspend is true: no calls to the cloud; the status keeps its last data", 2))...))
		},
		kstatus: status.InProgressStatus, argo: "Suspended", argoMessage: "Suspended: spec.suspend is true",
	}}
}

// TestKstatus is what Flux's health checks (and kstatus-based tools such as
// kubectl-style waiters) conclude for each state.
func TestKstatus(t *testing.T) {
	for _, tt := range states() {
		t.Run(tt.name, func(t *testing.T) {
			res, err := status.Compute(tt.obj())
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tt.kstatus {
				t.Errorf("kstatus: %s (%s), want %s", res.Status, res.Message, tt.kstatus)
			}
		})
	}
}

// TestArgoCDHealthCheck runs config/argocd/health.lua, as Argo CD does, on
// the same objects.
func TestArgoCDHealthCheck(t *testing.T) {
	script := repoFile(t, "config", "argocd", "health.lua")
	for _, tt := range states() {
		t.Run(tt.name, func(t *testing.T) {
			hs := runLua(t, script, tt.obj())
			if hs["status"] != tt.argo {
				t.Errorf("Argo CD health: %v (%v), want %s", hs["status"], hs["message"], tt.argo)
			}
			if msg, _ := hs["message"].(string); !strings.Contains(msg, tt.argoMessage) {
				t.Errorf("Argo CD health message %q, want it to contain %q", msg, tt.argoMessage)
			}
		})
	}
}

// TestArgoCDSyncNowAction runs the action's discovery and the action itself.
func TestArgoCDSyncNowAction(t *testing.T) {
	discovery := repoFile(t, "config", "argocd", "action-discovery.lua")
	action := repoFile(t, "config", "argocd", "action-sync-now.lua")

	for _, suspend := range []bool{false, true} {
		actions := runLua(t, discovery, watch(1, suspend, nil))
		syncNow, ok := actions["sync-now"].(map[string]any)
		if !ok {
			t.Fatalf("discovery (suspend %v) offers %v, want a sync-now action", suspend, actions)
		}
		if disabled, _ := syncNow["disabled"].(bool); disabled != suspend {
			t.Errorf("discovery with suspend %v: sync-now disabled = %v, want %v", suspend, disabled, suspend)
		}
	}

	tests := []struct {
		name        string
		annotations map[string]any
	}{
		{"no annotations yet", nil},
		{"earlier request and other annotations", map[string]any{
			swv1.RequestedAtAnnotation: "2020-01-01T00:00:00Z", "team": "data",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := watch(1, false, nil)
			if tt.annotations != nil {
				obj.SetAnnotations(map[string]string{})
				_ = unstructured.SetNestedMap(obj.Object, tt.annotations, "metadata", "annotations")
			}
			before := time.Now().UTC().Truncate(time.Second)
			out := runLua(t, action, obj)
			after := time.Now().UTC()
			got := (&unstructured.Unstructured{Object: out}).GetAnnotations()
			at, err := time.Parse(time.RFC3339, got[swv1.RequestedAtAnnotation])
			if err != nil {
				t.Fatalf("annotation %s = %q: %v", swv1.RequestedAtAnnotation, got[swv1.RequestedAtAnnotation], err)
			}
			if at.Before(before) || at.After(after) {
				t.Errorf("annotation %s = %s, want the current time (%s to %s)", swv1.RequestedAtAnnotation, at, before, after)
			}
			for k, v := range tt.annotations {
				if k != swv1.RequestedAtAnnotation && got[k] != v {
					t.Errorf("annotation %s = %q after the action, want %q kept", k, got[k], v)
				}
			}
			if spec, _, _ := unstructured.NestedMap(out, "spec"); spec["serviceId"] != "4e2c6a1b-9d8f-4c3b-a2e1-0f9e8d7c6b5a" {
				t.Errorf("the action changed spec: %v", spec)
			}
		})
	}
}

// runLua runs a script with obj as the global obj, in a state with the
// libraries Argo CD gives its scripts (os reduced to time and date), and
// returns the table it returns as Go values.
func runLua(t *testing.T, script string, obj *unstructured.Unstructured) map[string]any {
	t.Helper()
	ls := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer ls.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath}, {lua.OsLibName, lua.OpenOs}} {
		ls.Push(ls.NewFunction(lib.open))
		ls.Push(lua.LString(lib.name))
		ls.Call(1, 0)
	}
	safeOs := ls.NewTable()
	osLib, ok := ls.GetGlobal(lua.OsLibName).(*lua.LTable)
	if !ok {
		t.Fatalf("the os library is %v, want a table", ls.GetGlobal(lua.OsLibName))
	}
	for _, name := range []string{"time", "date", "clock"} {
		safeOs.RawSetString(name, osLib.RawGetString(name))
	}
	ls.SetGlobal(lua.OsLibName, safeOs)

	// Argo CD hands the script the object decoded from JSON.
	b, err := json.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		t.Fatal(err)
	}
	ls.SetGlobal("obj", toLua(ls, generic))
	if err := ls.DoString(script); err != nil {
		t.Fatalf("Lua error: %v", err)
	}
	ret, ok := ls.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("the script returned %v, want a table", ls.Get(-1))
	}
	out, _ := fromLua(ret).(map[string]any)
	if out == nil {
		t.Fatalf("the script returned an empty table")
	}
	return out
}

func toLua(ls *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case string:
		return lua.LString(v)
	case []any:
		t := ls.NewTable()
		for _, e := range v {
			t.Append(toLua(ls, e))
		}
		return t
	case map[string]any:
		t := ls.NewTable()
		for k, e := range v {
			t.RawSetString(k, toLua(ls, e))
		}
		return t
	default:
		panic(fmt.Sprintf("unexpected JSON value %T", v))
	}
}

func fromLua(v lua.LValue) any {
	switch v := v.(type) {
	case lua.LBool:
		return bool(v)
	case lua.LNumber:
		return float64(v)
	case lua.LString:
		return string(v)
	case *lua.LTable:
		if v.MaxN() > 0 {
			var list []any
			v.ForEach(func(_, e lua.LValue) { list = append(list, fromLua(e)) })
			return list
		}
		m := map[string]any{}
		v.ForEach(func(k, e lua.LValue) { m[k.String()] = fromLua(e) })
		return m
	default:
		return nil
	}
}

// yamlBlocks returns the ```yaml code blocks of a Markdown document, each
// decoded into its objects.
func yamlBlocks(t *testing.T, doc string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(doc, -1) {
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(m[1])), 4096)
		for {
			var obj map[string]any
			if err := dec.Decode(&obj); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				t.Fatalf("a yaml block of docs/gitops.md does not parse: %v\n%s", err, m[1])
			}
			if obj != nil {
				objs = append(objs, obj)
			}
		}
	}
	return objs
}

// TestGitOpsDocEmbedsTheTestedScripts makes docs/gitops.md and config/argocd
// one source: the argocd-cm ConfigMap shown in the doc must carry the tested
// Lua files byte for byte, and the Flux example must health-check
// ServiceWatches.
func TestGitOpsDocEmbedsTheTestedScripts(t *testing.T) {
	doc := repoFile(t, "docs", "gitops.md")
	objs := yamlBlocks(t, doc)
	const key = "cloud.servicewatch.io_ServiceWatch"
	var cm, flux map[string]any
	for _, o := range objs {
		md, _ := o["metadata"].(map[string]any)
		switch {
		case o["kind"] == "ConfigMap" && md["name"] == "argocd-cm":
			cm = o
		case o["kind"] == "Kustomization" && strings.HasPrefix(fmt.Sprint(o["apiVersion"]), "kustomize.toolkit.fluxcd.io/"):
			if spec, _ := o["spec"].(map[string]any); spec["healthChecks"] != nil {
				flux = o
			}
		}
	}
	if cm == nil {
		t.Fatal("docs/gitops.md shows no argocd-cm ConfigMap")
	}
	data, _ := cm["data"].(map[string]any)
	if got, want := data["resource.customizations.health."+key], repoFile(t, "config", "argocd", "health.lua"); got != want {
		t.Errorf("the health check in docs/gitops.md differs from config/argocd/health.lua:\n%v", got)
	}

	var actions struct {
		Discovery   string `json:"discovery.lua"`
		Definitions []struct {
			Name   string `json:"name"`
			Action string `json:"action.lua"`
		} `json:"definitions"`
	}
	if err := yaml.UnmarshalStrict([]byte(fmt.Sprint(data["resource.customizations.actions."+key])), &actions); err != nil {
		t.Fatalf("the actions in docs/gitops.md: %v", err)
	}
	if actions.Discovery != repoFile(t, "config", "argocd", "action-discovery.lua") {
		t.Errorf("discovery.lua in docs/gitops.md differs from config/argocd/action-discovery.lua:\n%s", actions.Discovery)
	}
	if len(actions.Definitions) != 1 || actions.Definitions[0].Name != "sync-now" ||
		actions.Definitions[0].Action != repoFile(t, "config", "argocd", "action-sync-now.lua") {
		t.Errorf("the sync-now action in docs/gitops.md differs from config/argocd/action-sync-now.lua: %+v", actions.Definitions)
	}

	var ignore struct {
		JSONPointers []string `json:"jsonPointers"`
	}
	if err := yaml.UnmarshalStrict([]byte(fmt.Sprint(data["resource.customizations.ignoreResourceUpdates."+key])), &ignore); err != nil {
		t.Fatalf("the ignoreResourceUpdates rule in docs/gitops.md: %v", err)
	}
	if len(ignore.JSONPointers) != 1 || ignore.JSONPointers[0] != "/status/lastSyncTime" {
		t.Errorf("ignoreResourceUpdates jsonPointers = %v, want [/status/lastSyncTime]", ignore.JSONPointers)
	}

	if flux == nil {
		t.Fatal("docs/gitops.md shows no Flux Kustomization with healthChecks")
	}
	checks, _ := flux["spec"].(map[string]any)["healthChecks"].([]any)
	found := false
	for _, c := range checks {
		c, _ := c.(map[string]any)
		found = found || (c["kind"] == "ServiceWatch" && c["apiVersion"] == swv1.GroupVersion.String())
	}
	if !found {
		t.Errorf("the Flux Kustomization's healthChecks %v include no %s ServiceWatch", checks, swv1.GroupVersion)
	}
}
