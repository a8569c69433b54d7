package controller_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// stateMetricLines are the lines of the state metrics families that name
// the fixture's namespace, as Prometheus would scrape them.
func (f *fixture) stateMetricLines(families ...string) []string {
	f.t.Helper()
	text, err := testutil.CollectAndFormat(stateMetrics, expfmt.TypeTextPlain, families...)
	if err != nil {
		f.t.Fatal(err)
	}
	var lines []string
	for line := range strings.SplitSeq(string(text), "\n") {
		if strings.Contains(line, fmt.Sprintf("namespace=%q", f.ns)) {
			lines = append(lines, line)
		}
	}
	return lines
}

func hasMetricLine(lines []string, line string) bool { return slices.Contains(lines, line) }

// stateMetricLinesHaving waits (up to 10 s) until the state metrics show
// every line of want, and returns the families' lines as last scraped. The
// manager sets a watch's state metrics just after its status write returns,
// so a test that has just read the new status may scrape a moment early.
func (f *fixture) stateMetricLinesHaving(want []string, families ...string) []string {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		lines := f.stateMetricLines(families...)
		if !slices.ContainsFunc(want, func(l string) bool { return !hasMetricLine(lines, l) }) || time.Now().After(deadline) {
			return lines
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Alerts of both shapes of the alert API: what a user sees in status and in
// the state metrics. An alert of the current shape keeps its team and saved
// search (sent as teamId and savedSearchId), both bounds of its range, its
// channels, its silence and its execution errors; switching the alert API
// between shapes changes nothing of what the spec's fields show.
func TestAlertsOfBothShapes(t *testing.T) {
	// Not parallel with the other tests: the timing-sensitive ones (shared
	// reads, schedules) must not share the two cores with its fixtures.
	f := newFixture(t)
	w := f.readyWatch("alerts", fakecloud.DefaultAlertID, fakecloud.CurrentShapeAlertID)

	legacy, current := w.Status.Alerts[0], w.Status.Alerts[1]
	if ptr.Deref(legacy.Team, "") != "65f1a2b3c4d5e6f708192c01" || ptr.Deref(legacy.Dashboard, "") != "65f1a2b3c4d5e6f708192d01" {
		t.Errorf("the spec-shaped alert lost its team or dashboard: %+v", legacy)
	}
	want := swv1.AlertStatus{
		ID:            fakecloud.CurrentShapeAlertID,
		SelectedBy:    swv1.SelectedByID,
		Name:          ptr.To("Ingest latency out of range"),
		Message:       ptr.To("p95 ingest latency left 100..500.5 ms on analytics-prod"),
		Note:          ptr.To("Silenced during the broker migration; the webhook receiver moves too."),
		Threshold:     ptr.To(swv1.Decimal("100")),
		ThresholdMax:  ptr.To(swv1.Decimal("500.5")),
		Interval:      ptr.To("15m"),
		ThresholdType: ptr.To("not_between"),
		Source:        ptr.To("saved_search"),
		State:         ptr.To("ALERT"),
		Channel:       &swv1.AlertChannel{Type: ptr.To("webhook"), WebhookID: ptr.To("65f1a2b3c4d5e6f708192b03")},
		Channels: []swv1.AlertChannel{
			{Type: ptr.To("webhook"), WebhookID: ptr.To("65f1a2b3c4d5e6f708192b03")},
			{Type: ptr.To("webhook"), WebhookID: ptr.To("65f1a2b3c4d5e6f708192b04")},
		},
		Team:                  ptr.To("65f1a2b3c4d5e6f708192c01"),
		SavedSearch:           ptr.To("65f1a2b3c4d5e6f708192e01"),
		GroupBy:               ptr.To("ServiceName"),
		NumConsecutiveWindows: ptr.To[int64](3),
		ScheduleOffsetMinutes: ptr.To[int64](5),
		ScheduleStartAt:       ptr.To("2026-03-01T00:00:00.000Z"),
		Silenced: &swv1.AlertSilence{By: ptr.To("65f1a2b3c4d5e6f708192f01"), At: ptr.To("2026-03-02T10:00:00.000Z"),
			Until: ptr.To("2030-01-01T00:00:00.000Z")},
		ExecutionErrors: []swv1.AlertExecutionError{
			{Timestamp: ptr.To("2026-03-02T10:15:00.000Z"), Type: ptr.To("WEBHOOK_ERROR"), Message: ptr.To("Request failed with status code 502")},
			{Timestamp: ptr.To("2026-03-02T10:30:00.000Z"), Type: ptr.To("WEBHOOK_ERROR"), Message: ptr.To("Request failed with status code 502")},
		},
		CreatedAt: ptr.To("2026-02-20T08:00:00.000Z"),
		UpdatedAt: ptr.To("2026-03-02T10:00:00.000Z"),
	}
	// Since the first sync: a switch of shapes below is no change of state,
	// and keeps it.
	if current.Since == nil {
		t.Errorf("the current-shape alert has no since")
	}
	want.Since = current.Since
	if !reflect.DeepEqual(current, want) {
		t.Errorf("the current-shape alert in status:\n got %s\nwant %s", indentedJSON(current), indentedJSON(want))
	}
	// As kubectl shows it: the range's bounds are JSON numbers, exact.
	raw := asObject(t, asList(t, f.rawStatus("alerts")["alerts"])[1])
	if raw["threshold"] != int64(100) || raw["thresholdMax"] != 500.5 {
		t.Errorf("threshold %v (%T), thresholdMax %v (%T): want the numbers 100 and 500.5", raw["threshold"], raw["threshold"], raw["thresholdMax"], raw["thresholdMax"])
	}

	// Alerting sees the silence and the failing webhook.
	wantLines := []string{
		fmt.Sprintf(`servicewatch_alert_silenced{alert_id=%q,namespace=%q,servicewatch="alerts"} 1`, fakecloud.CurrentShapeAlertID, f.ns),
		fmt.Sprintf(`servicewatch_alert_silenced_until_timestamp_seconds{alert_id=%q,namespace=%q,servicewatch="alerts"} %s`,
			fakecloud.CurrentShapeAlertID, f.ns, formatFloat(float64(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).Unix()))),
		fmt.Sprintf(`servicewatch_alert_execution_errors{alert_id=%q,namespace=%q,servicewatch="alerts"} 2`, fakecloud.CurrentShapeAlertID, f.ns),
		fmt.Sprintf(`servicewatch_alert_last_execution_error_timestamp_seconds{alert_id=%q,namespace=%q,servicewatch="alerts"} %s`,
			fakecloud.CurrentShapeAlertID, f.ns, formatFloat(float64(time.Date(2026, 3, 2, 10, 30, 0, 0, time.UTC).Unix()))),
		fmt.Sprintf(`servicewatch_alert_execution_errors{alert_id=%q,namespace=%q,servicewatch="alerts"} 0`, fakecloud.DefaultAlertID, f.ns),
	}
	lines := f.stateMetricLinesHaving(wantLines, "servicewatch_alert_silenced", "servicewatch_alert_execution_errors",
		"servicewatch_alert_last_execution_error_timestamp_seconds", "servicewatch_alert_silenced_until_timestamp_seconds")
	for _, line := range wantLines {
		if !hasMetricLine(lines, line) {
			t.Errorf("state metrics lack\n  %s\nhave\n  %s", line, strings.Join(lines, "\n  "))
		}
	}
	if n := len(lines); n != 5 {
		t.Errorf("%d series of the new families, want 5 (the spec-shaped alert is neither silenced nor failing):\n  %s", n, strings.Join(lines, "\n  "))
	}

	// The alert API switched to the current shape: the spec-shaped alert
	// shows the same team and dashboard, and its channel as channels too.
	f.fake.SetAlertShape(fakecloud.AlertShapeCurrent)
	w = f.requestSyncAndWait("alerts")
	got := w.Status.Alerts[0]
	wantLegacy := legacy
	wantLegacy.Channels = []swv1.AlertChannel{*legacy.Channel}
	if !reflect.DeepEqual(got, wantLegacy) {
		t.Errorf("the spec-shaped alert served in the current shape:\n got %s\nwant %s", indentedJSON(got), indentedJSON(wantLegacy))
	}
	if !reflect.DeepEqual(w.Status.Alerts[1], want) {
		t.Errorf("the current-shape alert changed: %s", indentedJSON(w.Status.Alerts[1]))
	}

	// And to the older shape: the renamed fields keep their values; the
	// members older servers do not send are gone, as they are from the
	// answer.
	f.fake.SetAlertShape(fakecloud.AlertShapeLegacy)
	w = f.requestSyncAndWait("alerts")
	old := w.Status.Alerts[1]
	if ptr.Deref(old.Team, "") != *want.Team || ptr.Deref(old.SavedSearch, "") != *want.SavedSearch || old.Silenced == nil || old.GroupBy == nil {
		t.Errorf("the alert served in the older shape lost a field it sends: %s", indentedJSON(old))
	}
	if old.ThresholdMax != nil || old.ExecutionErrors != nil || old.Channels != nil || old.Note != nil {
		t.Errorf("the alert served in the older shape kept fields that were not sent: %s", indentedJSON(old))
	}
	line := fmt.Sprintf(`servicewatch_alert_execution_errors{alert_id=%q,namespace=%q,servicewatch="alerts"} 0`, fakecloud.CurrentShapeAlertID, f.ns)
	if lines = f.stateMetricLinesHaving([]string{line}, "servicewatch_alert_execution_errors"); !hasMetricLine(lines, line) {
		t.Errorf("state metrics lack %s: %v", line, lines)
	}
}

// formatFloat renders v as the text exposition format does.
func formatFloat(v float64) string { return strings.ToLower(fmt.Sprintf("%g", v)) }

// One value of a type the operator cannot read loses that field only: the
// alert's other fields are in status, the watch is Ready, and AlertsSynced
// says which fields of which alert were left out.
func TestAnOddAlertFieldLosesOnlyThatField(t *testing.T) {
	// Not parallel with the other tests: the timing-sensitive ones (shared
	// reads, schedules) must not share the two cores with its fixtures.
	f := newFixture(t)
	alert := f.fake.Data().Alerts[fakecloud.DefaultAlertID]
	alert["threshold"] = "high"
	alert["numConsecutiveWindows"] = 2.5
	alert["thresholdMax"] = "500.5" // a numeric string is a number
	f.fake.SetAlert(fakecloud.DefaultAlertID, alert)
	w := f.readyWatch("odd", fakecloud.DefaultAlertID)

	got := w.Status.Alerts[0]
	if got.Threshold != nil || got.NumConsecutiveWindows != nil || got.Error != "" {
		t.Errorf("the odd values reached status: %s", indentedJSON(got))
	}
	if ptr.Deref(got.Name, "") != "Ingest lag above 12.25 s" || got.Channel == nil || ptr.Deref(got.ThresholdMax, "") != "500.5" {
		t.Errorf("the alert lost fields beside the odd ones: %s", indentedJSON(got))
	}
	c := meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionAlertsSynced)
	want := "Fetched 1 alerts; 1 left out values of a type the operator cannot read: " + fakecloud.DefaultAlertID + " (threshold, numConsecutiveWindows)"
	if c.Message != want {
		t.Errorf("AlertsSynced message %q, want %q", c.Message, want)
	}
}

// An alert ID that a normalizing gateway could read as a climb out of the
// alert path ("../..", "..;") is never sent: its entry says why, the watch
// is Stalled on ConfigurationError naming the ID, and the other alert of
// the same watch is fetched as usual.
func TestAlertIDThatCouldLeaveItsPathIsRefused(t *testing.T) {
	f := newFixture(t)
	f.createSecrets()
	f.create(f.newWatch("climb", fakecloud.DefaultAlertID, "../..", "..;"))
	w := f.waitFor("climb", 20*time.Second, "AlertsSynced False", func(w *swv1.ServiceWatch) bool {
		return len(w.Status.Alerts) == 3 && meta.IsStatusConditionFalse(w.Status.Conditions, swv1.ConditionAlertsSynced)
	})
	if a := w.Status.Alerts[0]; a.Error != "" || a.Name == nil {
		t.Errorf("the valid alert was not fetched: %s", indentedJSON(a))
	}
	for _, a := range w.Status.Alerts[1:] {
		if !strings.HasPrefix(a.Error, swv1.ReasonConfigurationError+": ") || !strings.Contains(a.Error, "cannot stay one path segment") {
			t.Errorf("alert %q: error %q, want a ConfigurationError saying the ID cannot stay one path segment", a.ID, a.Error)
		}
	}
	c := meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionAlertsSynced)
	if c.Reason != swv1.ReasonConfigurationError || !strings.Contains(c.Message, "../..") {
		t.Errorf("AlertsSynced %s: %q, want ConfigurationError naming ../..", c.Reason, c.Message)
	}
}
