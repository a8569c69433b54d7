package fakecloud_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// alertMembers fetches an alert and returns its members.
func alertMembers(t *testing.T, s *fakecloud.Server, id string) map[string]any {
	t.Helper()
	r := get(t, s, "/api/v2/alerts/"+id, bearerAuth)
	var body struct {
		Data map[string]any `json:"data"`
	}
	if r.status != 200 || json.Unmarshal(r.body, &body) != nil {
		t.Fatalf("GET alert %s: %d %s", id, r.status, r.body)
	}
	return body.Data
}

func keysOf(m map[string]any) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// The fake serves alerts as stored, or switched to either shape of the
// alert API whatever names its data uses.
func TestAlertShapes(t *testing.T) {
	s := start(t)
	stored := alertMembers(t, s, fakecloud.DefaultAlertID)
	if stored["team"] == nil || stored["teamId"] != nil {
		t.Fatalf("the default alert is not in the spec's shape: %v", keysOf(stored))
	}
	current := alertMembers(t, s, fakecloud.CurrentShapeAlertID)
	if current["teamId"] == nil || current["thresholdMax"] == nil || current["executionErrors"] == nil {
		t.Fatalf("the current-shape alert lacks members: %v", keysOf(current))
	}

	s.SetAlertShape(fakecloud.AlertShapeCurrent)
	got := alertMembers(t, s, fakecloud.DefaultAlertID)
	if got["teamId"] != stored["team"] || got["dashboardId"] != stored["dashboard"] || got["team"] != nil || got["dashboard"] != nil {
		t.Errorf("current shape of the default alert: %v", got)
	}
	if !reflect.DeepEqual(got["channels"], []any{stored["channel"]}) {
		t.Errorf("current shape: channels = %v, want [channel]", got["channels"])
	}
	if again := alertMembers(t, s, fakecloud.CurrentShapeAlertID); !reflect.DeepEqual(again, current) {
		t.Errorf("a current-shape alert changed when served in the current shape:\n got %v\nwant %v", again, current)
	}

	s.SetAlertShape(fakecloud.AlertShapeLegacy)
	got = alertMembers(t, s, fakecloud.CurrentShapeAlertID)
	want := []string{"channel", "createdAt", "groupBy", "id", "interval", "message", "name", "savedSearch", "silenced",
		"source", "state", "team", "threshold", "thresholdType", "updatedAt"}
	if !slices.Equal(keysOf(got), want) {
		t.Errorf("legacy shape members = %v, want %v", keysOf(got), want)
	}
	if got["team"] != current["teamId"] || got["savedSearch"] != current["savedSearchId"] {
		t.Errorf("legacy shape: team %v, savedSearch %v", got["team"], got["savedSearch"])
	}
	if !reflect.DeepEqual(alertMembers(t, s, fakecloud.DefaultAlertID), stored) {
		t.Error("a spec-shaped alert changed when served in the legacy shape")
	}
}

// The canned faults answer with the bodies the services send today.
func TestErrorFaults(t *testing.T) {
	tests := []struct {
		name        string
		fault       fakecloud.Fault
		status      int
		contentType string
		body        string
	}{
		{"stopped", fakecloud.ServiceNotRunningFault("stopped"), 424, "application/json", `"error":"FAILED_DEPENDENCY: Service is not running. Current state: stopped"`},
		{"awaking", fakecloud.ServiceAwakingFault(), 424, "application/json", `"serviceState":"awaking"`},
		{"idle", fakecloud.ServiceIdleFault(), 424, "application/json", `"code":"SERVICE_IDLE"`},
		{"no such route", fakecloud.RouteNotFoundFault("/v1/x"), 404, "text/html; charset=utf-8", `<pre>Cannot GET /v1/x</pre>`},
		{"invalid ObjectId", fakecloud.InvalidObjectIDFault(), 400, "application/json", `Params validation failed: id: Invalid ObjectId`},
		{"alert not found as text", fakecloud.AlertNotFoundTextFault(), 404, "text/plain; charset=utf-8", `Not Found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t)
			s.SetFault(fakecloud.OpGetAlert, tt.fault)
			r := get(t, s, alertPath, bearerAuth)
			if r.status != tt.status || r.header.Get("Content-Type") != tt.contentType || !containsBytes(r.body, tt.body) {
				t.Errorf("got %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
			}
		})
	}
}

func containsBytes(b []byte, s string) bool { return strings.Contains(string(b), s) }
