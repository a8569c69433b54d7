package fakecloud

import "encoding/json"

// CurrentShapeAlertID is an alert of DefaultData in the shape alert API
// servers send since early 2026 (teamId, savedSearchId, thresholdMax,
// channels, executionErrors, ...): a not_between range alert on a saved
// search, silenced, whose webhook keeps failing.
const CurrentShapeAlertID = "65f1a2b3c4d5e6f708192a3e"

// AlertShape selects the shape in which the fake serves alerts; see
// Server.SetAlertShape.
type AlertShape string

// The shapes of the alert API.
const (
	// AlertShapeAsStored serves each alert with the members it has in Data.
	AlertShapeAsStored AlertShape = ""
	// AlertShapeLegacy serves alerts as servers before 2026 did, and as the
	// spec lists them: team, dashboard and savedSearch, and none of the
	// members added since (thresholdMax, channels, executionErrors, note,
	// numConsecutiveWindows, scheduleOffsetMinutes, scheduleStartAt);
	// groupBy and silenced stay.
	AlertShapeLegacy AlertShape = "legacy"
	// AlertShapeCurrent serves alerts as servers since early 2026 do:
	// teamId, dashboardId and savedSearchId, and channels beside channel.
	AlertShapeCurrent AlertShape = "current"
)

// renamedAlertMembers are the members the alert API renamed, old name
// first.
var renamedAlertMembers = [][2]string{{"team", "teamId"}, {"dashboard", "dashboardId"}, {"savedSearch", "savedSearchId"}}

// addedAlertMembers are the members only servers since early 2026 send.
var addedAlertMembers = []string{"thresholdMax", "channels", "executionErrors", "note", "numConsecutiveWindows", "scheduleOffsetMinutes", "scheduleStartAt"}

// SetAlertShape makes the fake serve every alert in shape, whatever the
// names its Data uses.
func (s *Server) SetAlertShape(shape AlertShape) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data.AlertShape = shape
}

// shapeAlert returns a copy of alert in shape.
func shapeAlert(alert map[string]any, shape AlertShape) map[string]any {
	if shape == AlertShapeAsStored {
		return alert
	}
	out := cloneObject(alert)
	for _, names := range renamedAlertMembers {
		from, to := names[1], names[0]
		if shape == AlertShapeCurrent {
			from, to = to, from
		}
		if v, ok := out[from]; ok {
			if _, taken := out[to]; !taken {
				out[to] = v
			}
			delete(out, from)
		}
	}
	switch shape {
	case AlertShapeLegacy:
		for _, name := range addedAlertMembers {
			delete(out, name)
		}
	case AlertShapeCurrent:
		if ch, ok := out["channel"]; ok && ch != nil {
			if _, ok := out["channels"]; !ok {
				out["channels"] = []any{ch}
			}
		}
	}
	return out
}

// currentShapeAlert is the alert CurrentShapeAlertID of DefaultData.
func currentShapeAlert() map[string]any {
	return map[string]any{
		"id":                    CurrentShapeAlertID,
		"name":                  "Ingest latency out of range",
		"message":               "p95 ingest latency left 100..500.5 ms on analytics-prod",
		"note":                  "Silenced during the broker migration; the webhook receiver moves too.",
		"threshold":             json.Number("100"),
		"thresholdMax":          json.Number("500.5"),
		"interval":              "15m",
		"scheduleOffsetMinutes": 5,
		"scheduleStartAt":       "2026-03-01T00:00:00.000Z",
		"numConsecutiveWindows": 3,
		"thresholdType":         "not_between",
		"source":                "saved_search",
		"state":                 "ALERT",
		"channel":               map[string]any{"type": "webhook", "webhookId": "65f1a2b3c4d5e6f708192b03"},
		"channels": []any{
			map[string]any{"type": "webhook", "webhookId": "65f1a2b3c4d5e6f708192b03"},
			map[string]any{"type": "webhook", "webhookId": "65f1a2b3c4d5e6f708192b04"},
		},
		"teamId":        "65f1a2b3c4d5e6f708192c01",
		"savedSearchId": "65f1a2b3c4d5e6f708192e01",
		"groupBy":       "ServiceName",
		"silenced": map[string]any{
			"by":    "65f1a2b3c4d5e6f708192f01",
			"at":    "2026-03-02T10:00:00.000Z",
			"until": "2030-01-01T00:00:00.000Z",
		},
		"executionErrors": []any{
			map[string]any{"timestamp": "2026-03-02T10:15:00.000Z", "type": "WEBHOOK_ERROR", "message": "Request failed with status code 502"},
			map[string]any{"timestamp": "2026-03-02T10:30:00.000Z", "type": "WEBHOOK_ERROR", "message": "Request failed with status code 502"},
		},
		"createdAt": "2026-02-20T08:00:00.000Z",
		"updatedAt": "2026-03-02T10:00:00.000Z",
	}
}

// ServiceOnlyAlertID is an alert only the management API serves, of
// DefaultServiceID: none of the alert API's, so that a watch that follows
// every alert of its service, or those tagged "pipes", shows more than the
// IDs it could have named.
const ServiceOnlyAlertID = "65f1a2b3c4d5e6f708192a3f"

// ServiceAlerts returns the alerts the management API serves for
// DefaultServiceID (the managed service has no alert host), in the newest
// shape: the three alerts of the alert API under the same IDs, named with
// displayName beside or instead of name and tagged, and ServiceOnlyAlertID.
func ServiceAlerts() []map[string]any {
	ingest := defaultAlert()
	ingest["name"], ingest["displayName"], ingest["tags"] = "ingest_lag", "Ingest lag above 12.25 s", []any{"ingest", "pipes"}
	errorRate := secondAlert()
	errorRate["tags"] = []any{"errors"}
	latency := currentShapeAlert()
	delete(latency, "name")
	latency["displayName"], latency["tags"] = "Ingest latency out of range", []any{"ingest", "latency"}
	return []map[string]any{ingest, errorRate, latency, {
		"id":            ServiceOnlyAlertID,
		"name":          nil, // as the newest servers send an alert named by displayName alone
		"displayName":   "Pipe paused",
		"tags":          []any{"pipes"},
		"message":       "A pipe of analytics-prod is paused",
		"threshold":     json.Number("0"),
		"interval":      "5m",
		"thresholdType": "above",
		"source":        "tile",
		"state":         "OK",
		"teamId":        "65f1a2b3c4d5e6f708192c01",
		"createdAt":     "2026-03-05T08:00:00.000Z",
		"updatedAt":     "2026-03-05T08:00:00.000Z",
	}}
}
