package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// expectations are what the sample ServiceWatch must show, computed from the
// fake cloud's data file so that a change to the data needs no change here.
type expectations struct {
	pipes         int32
	pipesByState  map[string]int32
	endpoints     int32
	alerts        int32
	secretNames   []string
	watchName     string
	organization  string
	service       string
	sampleAlerts  []string
	missingAlerts []string
	// stateSeries are the per-item and condition series of the watch, by
	// metric family.
	stateSeries map[string][]labels
}

func loadExpectations(dataPath, watchPath string) (fakecloud.Data, expectations, error) {
	data, err := fakecloud.LoadData(dataPath)
	if err != nil {
		return fakecloud.Data{}, expectations{}, err
	}
	w, err := readWatch(watchPath)
	if err != nil {
		return fakecloud.Data{}, expectations{}, err
	}
	e := expectations{
		watchName:    w.Name,
		organization: w.Spec.OrganizationID,
		service:      w.Spec.ServiceID,
		sampleAlerts: w.Spec.AlertIDs,
		pipesByState: map[string]int32{},
		secretNames:  []string{w.Spec.ManagementAPI.SecretRef.Name},
	}
	if w.Spec.AlertAPI != nil {
		e.secretNames = append(e.secretNames, w.Spec.AlertAPI.SecretRef.Name)
	}
	svc, ok := data.Organizations[e.organization][e.service]
	if !ok {
		return data, e, fmt.Errorf("%s has no service %s in organization %s, which %s names", dataPath, e.service, e.organization, watchPath)
	}
	for _, p := range svc.Pipes {
		e.pipes++
		state, _ := p["state"].(string)
		e.pipesByState[state]++
	}
	e.endpoints = int32(len(svc.ReversePrivateEndpoints))
	for _, id := range w.Spec.AlertIDs {
		if _, ok := data.Alerts[id]; ok {
			e.alerts++
		} else {
			e.missingAlerts = append(e.missingAlerts, id)
		}
	}
	if len(e.missingAlerts) > 0 {
		// Such a watch could never be Ready; say so before starting anything.
		return data, e, fmt.Errorf("%s has no alerts %v, which %s names", dataPath, e.missingAlerts, watchPath)
	}
	e.stateSeries = expectedStateSeries(svc, data, w.Spec.AlertIDs)
	return data, e, nil
}

// checkDemo verifies what a user would look at: the counts, each condition,
// a sync requested through the annotation, and the metrics.
func checkDemo(ctx context.Context, p *progress, cp *controlPlane, kubeconfig string, w *serviceWatch, e expectations, metricsURL string) error {
	if err := checkStatus(w, e); err != nil {
		return err
	}
	p.sayf("status matches the fake cloud: %d pipes %v, %d reverse private endpoints, %d alerts",
		e.pipes, formatCounts(e.pipesByState), e.endpoints, e.alerts)

	// A requested sync, waited for as README tells users to: kubectl
	// annotate, then kubectl wait for the echo of that request (never for
	// Ready, which is still the previous sync's).
	requested := time.Now().UTC().Format(time.RFC3339Nano)
	if err := requestSync(ctx, p, cp, kubeconfig, w, requested); err != nil {
		return err
	}
	var cur serviceWatch
	if err := cp.client.Get(ctx, client.ObjectKeyFromObject(w), &cur); err != nil {
		return err
	}
	if cur.Status.LastHandledRequestedAt != requested || !cur.IsReady() {
		return fmt.Errorf("after the requested sync: lastHandledRequestedAt=%q, %s", cur.Status.LastHandledRequestedAt, waitingOn(&cur))
	}
	p.sayf("the sync was handled: status.lastHandledRequestedAt=%s, still Ready", requested)

	metrics, err := fetch(ctx, metricsURL)
	if err != nil {
		return err
	}
	for kind, n := range map[string]int32{"pipes": e.pipes, "reverse_private_endpoints": e.endpoints, "alerts": e.alerts} {
		line := fmt.Sprintf(`servicewatch_items{kind=%q,name=%q,namespace=%q} %d`, kind, w.Name, w.Namespace, n)
		if !hasLine(metrics, line) {
			return fmt.Errorf("metrics at %s lack the line %s", metricsURL, line)
		}
	}
	if !strings.Contains(metrics, "servicewatch_cloud_requests_total{") {
		return fmt.Errorf("metrics at %s lack servicewatch_cloud_requests_total", metricsURL)
	}
	p.sayf("metrics show the item counts and the cloud requests")

	if err := checkStateMetrics(ctx, metricsURL, w, e.stateSeries); err != nil {
		return err
	}
	p.sayf("state metrics show each of the %d pipes with its state, the %d endpoints, the %d alerts and the %d conditions",
		len(e.stateSeries["servicewatch_pipe_info"]), len(e.stateSeries["servicewatch_reverse_private_endpoint_info"]),
		len(e.stateSeries["servicewatch_alert_info"]), len(e.stateSeries["servicewatch_condition"]))
	if err := checkDeletedWatchLeavesNoSeries(ctx, cp, metricsURL, w); err != nil {
		return err
	}
	p.sayf("deleted ServiceWatch %s/%s: no metric names it any more", w.Namespace, w.Name)
	return nil
}

func checkStatus(w *serviceWatch, e expectations) error {
	var problems []string
	s := w.Status.Summary
	if s == nil {
		problems = append(problems, "status.summary is missing")
	} else {
		if s.Pipes != e.pipes {
			problems = append(problems, fmt.Sprintf("summary.pipes = %d, want %d", s.Pipes, e.pipes))
		}
		if !maps.Equal(s.PipesByState, e.pipesByState) {
			problems = append(problems, fmt.Sprintf("summary.pipesByState = %v, want %v", s.PipesByState, e.pipesByState))
		}
		if s.ReversePrivateEndpoints != e.endpoints {
			problems = append(problems, fmt.Sprintf("summary.reversePrivateEndpoints = %d, want %d", s.ReversePrivateEndpoints, e.endpoints))
		}
		if s.Alerts != e.alerts {
			problems = append(problems, fmt.Sprintf("summary.alerts = %d, want %d", s.Alerts, e.alerts))
		}
	}
	if got := int32(len(w.Status.Pipes)); got != e.pipes {
		problems = append(problems, fmt.Sprintf("status.pipes has %d entries, want %d", got, e.pipes))
	}
	if got := int32(len(w.Status.ReversePrivateEndpoints)); got != e.endpoints {
		problems = append(problems, fmt.Sprintf("status.reversePrivateEndpoints has %d entries, want %d", got, e.endpoints))
	}
	var alertIDs []string
	for _, a := range w.Status.Alerts {
		alertIDs = append(alertIDs, a.ID)
		if a.Error != "" {
			problems = append(problems, fmt.Sprintf("alert %s has error %q", a.ID, a.Error))
		}
	}
	if !slices.Equal(alertIDs, e.sampleAlerts) {
		problems = append(problems, fmt.Sprintf("status.alerts ids = %v, want %v (spec order)", alertIDs, e.sampleAlerts))
	}
	for _, t := range []string{swv1.ConditionPipesSynced, swv1.ConditionReversePrivateEndpointsSynced, swv1.ConditionAlertsSynced, swv1.ConditionReady} {
		c := meta.FindStatusCondition(w.Status.Conditions, t)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != swv1.ReasonSynced || c.ObservedGeneration != w.Generation {
			problems = append(problems, fmt.Sprintf("condition %s = %s, want True/Synced for generation %d", t, formatCondition(c), w.Generation))
		}
	}
	for _, t := range []string{swv1.ConditionReconciling, swv1.ConditionStalled, swv1.ConditionStatusTruncated} {
		if c := meta.FindStatusCondition(w.Status.Conditions, t); c != nil {
			problems = append(problems, fmt.Sprintf("condition %s present: %s", t, formatCondition(c)))
		}
	}
	if w.Status.LastSyncTime == nil {
		problems = append(problems, "status.lastSyncTime is missing")
	}
	if len(problems) > 0 {
		return fmt.Errorf("ServiceWatch %s/%s is Ready but not as expected:\n  %s", w.Namespace, w.Name, strings.Join(problems, "\n  "))
	}
	return nil
}

// describeStatus renders the status in short: summary and conditions. The
// full status, with every pipe, is a `kubectl get -o yaml` away.
func describeStatus(w *serviceWatch) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Status of %s/%s (generation %d, observedGeneration %d):\n", w.Namespace, w.Name, w.Generation, w.Status.ObservedGeneration)
	if w.Status.LastSyncTime != nil {
		fmt.Fprintf(&b, "  lastSyncTime:            %s\n", w.Status.LastSyncTime.UTC().Format(time.RFC3339))
	}
	if s := w.Status.Summary; s != nil {
		fmt.Fprintf(&b, "  pipes:                   %d %s\n", s.Pipes, formatCounts(s.PipesByState))
		fmt.Fprintf(&b, "  reversePrivateEndpoints: %d\n", s.ReversePrivateEndpoints)
		fmt.Fprintf(&b, "  alerts:                  %d\n", s.Alerts)
	}
	b.WriteString("  conditions:\n")
	for _, c := range w.Status.Conditions {
		fmt.Fprintf(&b, "    %-30s %-5s %-10s %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	return b.String()
}

func formatCondition(c *metav1.Condition) string {
	if c == nil {
		return "absent"
	}
	return fmt.Sprintf("%s/%s (generation %d): %s", c.Status, c.Reason, c.ObservedGeneration, c.Message)
}

func formatCounts(m map[string]int32) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s: %d", k, m[k]))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func fetch(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	if err != nil {
		return "", err
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), nil
}

func hasLine(text, line string) bool {
	return slices.Contains(strings.Split(text, "\n"), line)
}

// checkManagedAlerts verifies the watch whose alerts come from the
// management API: every alert the fake serves for its service, selected by
// its selector, read from the list, none failing.
func checkManagedAlerts(w *serviceWatch, data fakecloud.Data) error {
	var want, got []string
	for _, a := range data.Organizations[w.Spec.OrganizationID][w.Spec.ServiceID].Alerts {
		want = append(want, str(a, "id"))
	}
	slices.Sort(want) // a selector's matches are ordered by id
	var problems []string
	for _, a := range w.Status.Alerts {
		got = append(got, a.ID)
		if a.Error != "" || a.SelectedBy != swv1.SelectedBySelector {
			problems = append(problems, fmt.Sprintf("alert %s: selectedBy %q, error %q", a.ID, a.SelectedBy, a.Error))
		}
	}
	if !slices.Equal(got, want) {
		problems = append(problems, fmt.Sprintf("status.alerts ids = %v, want the service's %v", got, want))
	}
	if w.Status.AlertsReadBy != swv1.AlertsReadByList {
		problems = append(problems, fmt.Sprintf("status.alertsReadBy = %q, want %q", w.Status.AlertsReadBy, swv1.AlertsReadByList))
	}
	if len(problems) > 0 {
		return fmt.Errorf("ServiceWatch %s/%s is Ready but not as expected:\n  %s", w.Namespace, w.Name, strings.Join(problems, "\n  "))
	}
	return nil
}

// describeManagedAlerts says in one line what the watch's alerts are.
func describeManagedAlerts(w *serviceWatch) string {
	names := make([]string, 0, len(w.Status.Alerts))
	for _, a := range w.Status.Alerts {
		name := a.Label()
		if name == "" {
			name = a.ID
		}
		names = append(names, fmt.Sprintf("%q", name))
	}
	return fmt.Sprintf("%d alerts from the management API (alertsFrom: %s, alertsReadBy: %s): %s",
		len(w.Status.Alerts), w.Spec.AlertsFrom, w.Status.AlertsReadBy, strings.Join(names, ", "))
}

// requestSync asks for a sync with the token requested and returns once the
// manager has handled it. With kubectl on PATH it runs the very commands
// README shows; without, it does the same through the API.
func requestSync(ctx context.Context, p *progress, cp *controlPlane, kubeconfig string, w *serviceWatch, requested string) error {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		return requestSyncThroughTheAPI(ctx, p, cp, w, requested)
	}
	run := func(args ...string) error {
		p.sayf("$ kubectl %s", strings.Join(args, " "))
		cmd := exec.CommandContext(ctx, kubectl, args...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("kubectl %s: %w: %s", args[0], err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	if err := run("annotate", "sw", "-n", w.Namespace, w.Name, "--overwrite", requestedAtAnnotation+"="+requested); err != nil {
		return err
	}
	return run("wait", "sw/"+w.Name, "-n", w.Namespace, "--for=jsonpath={.status.lastHandledRequestedAt}="+requested, "--timeout=60s")
}

// requestSyncThroughTheAPI is requestSync without kubectl: the annotation
// patched, then status polled for its echo.
func requestSyncThroughTheAPI(ctx context.Context, p *progress, cp *controlPlane, w *serviceWatch, requested string) error {
	patch := client.MergeFrom(w.DeepCopy())
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[requestedAtAnnotation] = requested
	if err := cp.client.Patch(ctx, w, patch); err != nil {
		return fmt.Errorf("annotating %s: %w", requestedAtAnnotation, err)
	}
	p.sayf("requested a sync: %s=%s", requestedAtAnnotation, requested)
	deadline := time.Now().Add(time.Minute)
	for {
		var cur serviceWatch
		if err := cp.client.Get(ctx, client.ObjectKeyFromObject(w), &cur); err != nil {
			return err
		}
		if cur.Status.LastHandledRequestedAt == requested {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("requested sync not handled within a minute: lastHandledRequestedAt=%q, %s",
				cur.Status.LastHandledRequestedAt, waitingOn(&cur))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
