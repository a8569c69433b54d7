package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// stateFamilies are the state metrics of one watch (internal/metrics, State).
func stateFamilies() []string {
	return []string{
		"servicewatch_pipe_info",
		"servicewatch_pipe_state_since_timestamp_seconds",
		"servicewatch_reverse_private_endpoint_info",
		"servicewatch_reverse_private_endpoint_status_since_timestamp_seconds",
		"servicewatch_alert_info",
		"servicewatch_alert_state_since_timestamp_seconds",
		"servicewatch_alert_fetch_failed",
		"servicewatch_alert_silenced",
		"servicewatch_alert_silenced_until_timestamp_seconds",
		"servicewatch_alert_execution_errors",
		"servicewatch_alert_last_execution_error_timestamp_seconds",
		"servicewatch_condition",
		"servicewatch_last_sync_timestamp_seconds",
		"servicewatch_interval_seconds",
	}
}

// labels of one series, without the namespace and servicewatch labels that
// every state metric carries.
type labels map[string]string

func (l labels) String() string {
	parts := make([]string, 0, len(l))
	for _, k := range slices.Sorted(maps.Keys(l)) {
		parts = append(parts, fmt.Sprintf("%s=%q", k, l[k]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// expectedStateSeries are the per-item and condition series the sample
// watch must show once Ready, from the fake cloud's data.
func expectedStateSeries(svc fakecloud.Service, data fakecloud.Data, alertIDs []string) map[string][]labels {
	want := map[string][]labels{"servicewatch_alert_fetch_failed": nil}
	for _, p := range svc.Pipes {
		want["servicewatch_pipe_info"] = append(want["servicewatch_pipe_info"], labels{
			"pipe_id": str(p, "id"), "pipe_name": str(p, "name"), "state": str(p, "state"), "source_kind": sourceKinds(p),
		})
		want["servicewatch_pipe_state_since_timestamp_seconds"] = append(want["servicewatch_pipe_state_since_timestamp_seconds"], labels{
			"pipe_id": str(p, "id"), "state": str(p, "state"),
		})
	}
	for _, e := range svc.ReversePrivateEndpoints {
		want["servicewatch_reverse_private_endpoint_info"] = append(want["servicewatch_reverse_private_endpoint_info"], labels{
			"endpoint_id": str(e, "id"), "type": str(e, "type"), "status": str(e, "status"),
		})
		want["servicewatch_reverse_private_endpoint_status_since_timestamp_seconds"] = append(want["servicewatch_reverse_private_endpoint_status_since_timestamp_seconds"], labels{
			"endpoint_id": str(e, "id"), "status": str(e, "status"),
		})
	}
	for _, id := range alertIDs {
		a := data.Alerts[id]
		want["servicewatch_alert_info"] = append(want["servicewatch_alert_info"], labels{
			"alert_id": id, "alert_name": alertLabel(a), "state": str(a, "state"),
		})
		want["servicewatch_alert_state_since_timestamp_seconds"] = append(want["servicewatch_alert_state_since_timestamp_seconds"], labels{
			"alert_id": id, "state": str(a, "state"),
		})
		// Every alert shows how many execution errors it has, 0 included.
		want["servicewatch_alert_execution_errors"] = append(want["servicewatch_alert_execution_errors"], labels{"alert_id": id})
		if silencedNow(a) {
			want["servicewatch_alert_silenced"] = append(want["servicewatch_alert_silenced"], labels{"alert_id": id})
		}
	}
	if _, ok := want["servicewatch_alert_silenced"]; !ok {
		want["servicewatch_alert_silenced"] = nil
	}
	for _, t := range []string{swv1.ConditionPipesSynced, swv1.ConditionReversePrivateEndpointsSynced, swv1.ConditionAlertsSynced, swv1.ConditionReady} {
		want["servicewatch_condition"] = append(want["servicewatch_condition"], labels{
			"type": t, "status": "True", "reason": swv1.ReasonSynced,
		})
	}
	return want
}

// silencedNow tells whether the alert's data holds a silence that has not
// ended.
func silencedNow(alert map[string]any) bool {
	silence, ok := alert["silenced"].(map[string]any)
	if !ok {
		return false
	}
	until, err := time.Parse(time.RFC3339Nano, str(silence, "until"))
	return err != nil || time.Now().Before(until)
}

func str(obj map[string]any, key string) string {
	s, _ := obj[key].(string)
	return s
}

// alertLabel is the alert_name label the operator gives the fake cloud's
// alert a: swv1.AlertStatus.Label of its name and displayName.
func alertLabel(a map[string]any) string {
	status := swv1.AlertStatus{}
	if name, ok := a["name"].(string); ok {
		status.Name = &name
	}
	if display, ok := a["displayName"].(string); ok {
		status.DisplayName = &display
	}
	return status.Label()
}

// sourceKinds names the source members of a pipe as the operator does: the
// kinds it knows (swv1.PipeSourceKinds, the API type's members) in their
// order, then the others in the order sent (the fake cloud sends the members
// of an object sorted by name); null members are absent.
func sourceKinds(pipe map[string]any) string {
	src, _ := pipe["source"].(map[string]any)
	known := swv1.PipeSourceKinds()
	var kinds []string
	for _, k := range known {
		if src[k] != nil {
			kinds = append(kinds, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(src)) {
		if src[k] != nil && !slices.Contains(known, k) {
			kinds = append(kinds, k)
		}
	}
	return strings.Join(kinds, ",")
}

// stateSeries reads the metrics endpoint and returns, by family, the state
// series of one watch.
func stateSeries(ctx context.Context, url string, w *serviceWatch) (map[string][]labels, error) {
	text, err := fetch(ctx, url)
	if err != nil {
		return nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("parsing the metrics at %s: %w", url, err)
	}
	got := map[string][]labels{}
	for _, name := range stateFamilies() {
		f, ok := families[name]
		if !ok {
			continue
		}
		for _, m := range f.GetMetric() {
			if l, mine := seriesOf(m, w); mine {
				got[name] = append(got[name], l)
			}
		}
	}
	return got, nil
}

func seriesOf(m *dto.Metric, w *serviceWatch) (labels, bool) {
	l := labels{}
	for _, pair := range m.GetLabel() {
		l[pair.GetName()] = pair.GetValue()
	}
	if l["namespace"] != w.Namespace || l["servicewatch"] != w.Name {
		return nil, false
	}
	delete(l, "namespace")
	delete(l, "servicewatch")
	return l, true
}

// checkStateMetrics compares the watch's per-item and condition series with
// what the fake cloud serves, and checks its last sync and interval.
func checkStateMetrics(ctx context.Context, url string, w *serviceWatch, want map[string][]labels) error {
	got, err := stateSeries(ctx, url, w)
	if err != nil {
		return err
	}
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if g, x := sortedSeries(got[name]), sortedSeries(want[name]); !slices.Equal(g, x) {
			problems = append(problems, fmt.Sprintf("%s: got\n      %s\n    want\n      %s", name, strings.Join(g, "\n      "), strings.Join(x, "\n      ")))
		}
	}
	if len(got["servicewatch_last_sync_timestamp_seconds"]) != 1 {
		problems = append(problems, "servicewatch_last_sync_timestamp_seconds is missing")
	}
	if len(got["servicewatch_interval_seconds"]) != 1 {
		problems = append(problems, "servicewatch_interval_seconds is missing")
	}
	if len(problems) > 0 {
		return fmt.Errorf("state metrics at %s of %s/%s are not as expected:\n  %s", url, w.Namespace, w.Name, strings.Join(problems, "\n  "))
	}
	return nil
}

func sortedSeries(ls []labels) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.String()
	}
	slices.Sort(out)
	return out
}

// checkDeletedWatchLeavesNoSeries deletes the watch and waits until no
// series names it any more: neither a state metric nor servicewatch_items.
func checkDeletedWatchLeavesNoSeries(ctx context.Context, cp *controlPlane, url string, w *serviceWatch) error {
	if err := cp.client.Delete(ctx, w); err != nil {
		return fmt.Errorf("deleting ServiceWatch %s/%s: %w", w.Namespace, w.Name, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		left, err := seriesNaming(ctx, url, w)
		if err != nil {
			return err
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("30s after ServiceWatch %s/%s was deleted, the metrics at %s still name it:\n  %s",
				w.Namespace, w.Name, url, strings.Join(left, "\n  "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// seriesNaming returns the servicewatch_ lines that name the watch.
func seriesNaming(ctx context.Context, url string, w *serviceWatch) ([]string, error) {
	text, err := fetch(ctx, url)
	if err != nil {
		return nil, err
	}
	var lines []string
	for line := range strings.SplitSeq(text, "\n") {
		if !strings.HasPrefix(line, "servicewatch_") || !strings.Contains(line, fmt.Sprintf("namespace=%q", w.Namespace)) {
			continue
		}
		if strings.Contains(line, fmt.Sprintf("servicewatch=%q", w.Name)) || strings.Contains(line, fmt.Sprintf("name=%q", w.Name)) {
			lines = append(lines, line)
		}
	}
	return lines, nil
}

// showStateMetrics prints the state metrics of the watch, as a Prometheus
// scraping the manager sees them.
func showStateMetrics(ctx context.Context, out io.Writer, url string, w *serviceWatch) error {
	text, err := fetch(ctx, url)
	if err != nil {
		return err
	}
	// Failed writes are dropped, as in progress.sayf: the terminal is gone.
	_, _ = fmt.Fprintf(out, "$ curl -s %s | grep -E '^servicewatch_(%s)'\n", url, strings.Join(shortNames(), "|"))
	for line := range strings.SplitSeq(text, "\n") {
		for _, name := range stateFamilies() {
			if strings.HasPrefix(line, name+"{") && strings.Contains(line, fmt.Sprintf("servicewatch=%q", w.Name)) {
				_, _ = fmt.Fprintln(out, line)
			}
		}
	}
	return nil
}

func shortNames() []string {
	var names []string
	for _, n := range stateFamilies() {
		names = append(names, strings.TrimPrefix(n, "servicewatch_"))
	}
	return names
}
