//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// sample is the ServiceWatch of config/samples, which the fake cloud's
// default data serves: the tests watch what a user trying the sample would.
type sample struct {
	Spec struct {
		OrganizationID string   `json:"organizationId"`
		ServiceID      string   `json:"serviceId"`
		AlertIDs       []string `json:"alertIds"`
	} `json:"spec"`
}

func readSample(t *testing.T) sample {
	t.Helper()
	var s sample
	readRepoYAML(t, "config/samples/cloud_v1beta1_servicewatch.yaml", &s, yaml.Unmarshal)
	return s
}

// readRepoYAML decodes the repository's file rel into out with unmarshal
// (yaml.UnmarshalStrict where a field out does not know is an error).
func readRepoYAML(t *testing.T, rel string, out any, unmarshal func([]byte, any, ...yaml.JSONOpt) error) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e2eEnv.repo, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	if err := unmarshal(b, out); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
}

// counts is what a watch of the sample service should show: the fake
// cloud's default data, counted here independently of the operator.
type counts struct{ pipes, endpoints, alerts int }

func sampleCounts(t *testing.T) counts {
	t.Helper()
	s := readSample(t)
	d := fakecloud.DefaultData()
	svc, ok := d.Organizations[s.Spec.OrganizationID][s.Spec.ServiceID]
	if !ok {
		t.Fatalf("the fake cloud's default data has no sample service %s", s.Spec.ServiceID)
	}
	c := counts{pipes: len(svc.Pipes), endpoints: len(svc.ReversePrivateEndpoints)}
	for _, id := range s.Spec.AlertIDs {
		if _, ok := d.Alerts[id]; ok {
			c.alerts++
		}
	}
	if c.pipes == 0 || c.endpoints == 0 || c.alerts == 0 {
		t.Fatalf("the sample service has nothing to count: %+v", c)
	}
	return c
}

// fakeCloud is the fake cloud running as a Pod behind a Service.
type fakeCloud struct {
	// url is what ServiceWatches name: the Service's ClusterIP (the cluster
	// has no DNS).
	url string
	// admin is the admin API at the Pod's IP, reached from the node.
	admin string
}

// deployFakeCloud runs the fake cloud (default data, admin API on) in its
// own restricted namespace.
func deployFakeCloud(t *testing.T, ns string) fakeCloud {
	t.Helper()
	restrictedNamespace(t, ns)
	apply(t, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: fakecloud
  namespace: %[1]s
spec:
  replicas: 1
  selector:
    matchLabels: {app: fakecloud}
  template:
    metadata:
      labels: {app: fakecloud}
    spec:
      automountServiceAccountToken: false
      securityContext:
        runAsNonRoot: true
        seccompProfile: {type: RuntimeDefault}
      containers:
      - name: fakecloud
        image: %[2]s
        imagePullPolicy: Never
        args: [--listen=0.0.0.0:8090, --admin]
        ports:
        - {name: http, containerPort: 8090}
        readinessProbe:
          tcpSocket: {port: http}
          periodSeconds: 1
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities: {drop: [ALL]}
---
apiVersion: v1
kind: Service
metadata:
  name: fakecloud
  namespace: %[1]s
spec:
  selector: {app: fakecloud}
  ports:
  - {name: http, port: 8090, targetPort: http}
`, ns, fakeCloudImage))
	kubectl(t, "rollout", "status", "-n", ns, "deployment/fakecloud", "--timeout=2m")
	ip := strings.TrimSpace(kubectl(t, "get", "service", "-n", ns, "fakecloud", "-o", "jsonpath={.spec.clusterIP}"))
	podIP := strings.TrimSpace(kubectl(t, "get", "pods", "-n", ns, "-l", "app=fakecloud", "-o", "jsonpath={.items[0].status.podIP}"))
	return fakeCloud{url: "http://" + ip + ":8090", admin: "http://" + podIP + ":8090" + fakecloud.AdminPrefix}
}

// calls returns how many calls of each operation the fake cloud answered.
func (f fakeCloud) calls(t *testing.T) map[string]int {
	t.Helper()
	var v struct {
		Counts map[string]int `json:"counts"`
	}
	f.adminDo(t, http.MethodGet, "calls", nil, &v)
	return v.Counts
}

// setData replaces the fake cloud's data.
func (f fakeCloud) setData(t *testing.T, d fakecloud.Data) {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	f.adminDo(t, http.MethodPut, "data", b, nil)
}

// adminDo sends a request of the fake cloud's admin API, failing the test
// unless it succeeds, and decodes the answer into out when out is not nil.
func (f fakeCloud) adminDo(t *testing.T, method, path string, body []byte, out any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, f.admin+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("fake cloud admin API: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("fake cloud admin API: %s %s: %s", method, path, resp.Status)
	}
	if out == nil {
		return
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("fake cloud admin API: %s %s: %v", method, path, err)
	}
}

// sampleWatch applies the sample's two Secrets (with the fake cloud's
// credentials) and a ServiceWatch of the sample service pointed at the fake
// cloud.
func sampleWatch(t *testing.T, ns, name string, cloud fakeCloud, labels map[string]string) {
	t.Helper()
	s := readSample(t)
	d := fakecloud.DefaultData()
	var lines []string
	for k, v := range labels {
		lines = append(lines, fmt.Sprintf("    %s: %q", k, v))
	}
	labelBlock := ""
	if len(lines) > 0 {
		labelBlock = "  labels:\n" + strings.Join(lines, "\n") + "\n"
	}
	apply(t, fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: warehouse-api-key
  namespace: %[1]s
stringData:
  keyId: %[3]s
  keySecret: %[4]s
---
apiVersion: v1
kind: Secret
metadata:
  name: alerts-token
  namespace: %[1]s
stringData:
  token: %[5]s
---
apiVersion: cloud.servicewatch.io/v1beta1
kind: ServiceWatch
metadata:
  name: %[2]s
  namespace: %[1]s
%[9]sspec:
  organizationId: %[6]s
  serviceId: %[7]s
  alertIds: [%[8]s]
  interval: 1m
  managementApi:
    url: %[10]s
    secretRef: {name: warehouse-api-key}
  alertApi:
    url: %[10]s
    secretRef: {name: alerts-token}
`, ns, name, d.ManagementKey.KeyID, d.ManagementKey.KeySecret, d.AlertToken,
		s.Spec.OrganizationID, s.Spec.ServiceID, strings.Join(s.Spec.AlertIDs, ", "), labelBlock, cloud.url))
}

// watchStatus is the part of a ServiceWatch's status the tests read.
type watchStatus struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Status struct {
		LastSyncTime string `json:"lastSyncTime"`
		Summary      *struct {
			Pipes                   int `json:"pipes"`
			ReversePrivateEndpoints int `json:"reversePrivateEndpoints"`
			Alerts                  int `json:"alerts"`
		} `json:"summary"`
		Conditions []struct {
			Type               string `json:"type"`
			Status             string `json:"status"`
			Reason             string `json:"reason"`
			Message            string `json:"message"`
			LastTransitionTime string `json:"lastTransitionTime"`
		} `json:"conditions"`
	} `json:"status"`
}

func (w watchStatus) ready() (status, since string) {
	for _, c := range w.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status, c.LastTransitionTime
		}
	}
	return "", ""
}

func getWatch(t *testing.T, ns, name string) watchStatus {
	t.Helper()
	var w watchStatus
	getJSON(t, &w, "servicewatch", "-n", ns, name)
	return w
}

// checkCounts fails unless the watch's summary shows the fake cloud's
// counts.
func checkCounts(t *testing.T, w watchStatus, want counts) {
	t.Helper()
	s := w.Status.Summary
	if s == nil {
		t.Fatalf("%s has no status.summary", w.Metadata.Name)
	}
	got := counts{pipes: s.Pipes, endpoints: s.ReversePrivateEndpoints, alerts: s.Alerts}
	if got != want {
		t.Fatalf("%s counts %+v, want the fake cloud's %+v", w.Metadata.Name, got, want)
	}
}

// waitReady runs `kubectl wait --for=condition=Ready` as a user would.
func waitReady(t *testing.T, ns, name string, timeout time.Duration) {
	t.Helper()
	kubectl(t, "wait", "-n", ns, "servicewatch/"+name, "--for=condition=Ready", fmt.Sprintf("--timeout=%s", timeout))
}

// probeResult is the line hack/e2e/probe prints.
type probeResult struct {
	Status int    `json:"status"`
	Body   string `json:"body"`
	Error  string `json:"error"`
}

// probe runs hack/e2e/probe in a Pod of namespace ns as ServiceAccount sa
// and returns what it printed.
func probe(t *testing.T, ns, name, sa string, args ...string) probeResult {
	t.Helper()
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	apply(t, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %[2]s
  namespace: %[1]s
spec:
  serviceAccountName: %[3]s
  restartPolicy: Never
  securityContext:
    runAsNonRoot: true
    seccompProfile: {type: RuntimeDefault}
  containers:
  - name: probe
    image: %[4]s
    imagePullPolicy: Never
    command: [/probe]
    args: [%[5]s]
    securityContext:
      allowPrivilegeEscalation: false
      readOnlyRootFilesystem: true
      capabilities: {drop: [ALL]}
`, ns, name, sa, fakeCloudImage, strings.Join(quoted, ", ")))
	defer kubectl(t, "delete", "pod", "-n", ns, name, "--wait=false")
	eventually(t, 90*time.Second, "probe pod "+name+" finished", func() error {
		phase := strings.TrimSpace(kubectl(t, "get", "pod", "-n", ns, name, "-o", "jsonpath={.status.phase}"))
		if phase == "Succeeded" || phase == "Failed" {
			return nil
		}
		return fmt.Errorf("phase %q", phase)
	})
	out := kubectl(t, "logs", "-n", ns, name)
	var r probeResult
	if err := json.Unmarshal([]byte(lastLine(out)), &r); err != nil {
		t.Fatalf("probe %s printed %q: %v", name, out, err)
	}
	return r
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// pollLapses asks lapse every 500 ms, until the stop it returns is called,
// whether what must hold all through a change (a rollout, a fail-over) has
// lapsed: lapse says how, or "" when it holds. stop returns every lapse seen,
// each with its time.
func pollLapses(lapse func() string) (stop func() []string) {
	done := make(chan struct{})
	var lapses []string
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(500 * time.Millisecond):
			}
			if l := lapse(); l != "" {
				lapses = append(lapses, time.Now().Format(time.TimeOnly)+" "+l)
			}
		}
	})
	return func() []string {
		close(done)
		wg.Wait()
		return lapses
	}
}
