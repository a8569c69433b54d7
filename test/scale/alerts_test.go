package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// The data a scenario changes mid-run reaches the fake through its admin
// API as JSON: it must parse there as it was built.
func TestScenarioDataRoundTripsThroughTheAdminAPI(t *testing.T) {
	d := cloudData(makeTenants("alert-token", 1))
	d.Alerts = map[string]map[string]any{alertID(0): scaleAlert(0)}
	d.Alerts[alertID(0)]["state"] = "paused"
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := fakecloud.ParseData(b)
	if err != nil {
		t.Fatalf("the fake refuses the scenario's data: %v", err)
	}
	if got.Alerts[alertID(0)]["state"] != "paused" || got.AlertToken != d.AlertToken {
		t.Errorf("the fake would serve %v with token %q", got.Alerts[alertID(0)], got.AlertToken)
	}
}

func TestChangeDelaysInIntervals(t *testing.T) {
	s := time.Second
	tests := []struct {
		name string
		c    changeDelays
		want string
	}{
		{"every watch at its next interval", changeDelays{delays: []time.Duration{20 * s, 21 * s, 22 * s}},
			"after 0.70 intervals (median), 0.73 at most; 0 watches later than one interval and 5 s, 0 never"},
		{"some a whole interval late", changeDelays{delays: []time.Duration{5 * s, 40 * s, 50 * s}, missed: 1},
			"after 1.33 intervals (median), 1.67 at most; 2 watches later than one interval and 5 s, 1 never"},
		{"none", changeDelays{missed: 100}, "by no watch (100 missed it)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.describe(30 * s); got != tt.want {
				t.Errorf("describe = %q, want %q", got, tt.want)
			}
		})
	}
}
