package v1beta1

import "testing"

// The needs-attention rule, once per kind: failing pipe states, failing
// endpoint statuses, and alerts that fire, fail to evaluate or cannot be
// read; whatever the case the cloud spells them in.
func TestNeedsAttention(t *testing.T) {
	s := func(v string) *string { return &v }
	tests := []struct {
		name string
		item interface{ NeedsAttention() bool }
		want bool
	}{
		{"pipe Failed", &Pipe{State: s("Failed")}, true},
		{"pipe InternalError", &Pipe{State: s("InternalError")}, true},
		{"pipe Degraded", &Pipe{State: s("Degraded")}, true},
		{"pipe FAILED", &Pipe{State: s("FAILED")}, true},
		{"pipe Running", &Pipe{State: s("Running")}, false},
		{"pipe Stopped", &Pipe{State: s("Stopped")}, false},
		{"pipe without state", &Pipe{}, false},
		{"endpoint Failed", &ReversePrivateEndpoint{Status: s("Failed")}, true},
		{"endpoint Rejected", &ReversePrivateEndpoint{Status: s("Rejected")}, true},
		{"endpoint Expired", &ReversePrivateEndpoint{Status: s("Expired")}, true},
		{"endpoint Ready", &ReversePrivateEndpoint{Status: s("Ready")}, false},
		{"endpoint PendingAcceptance", &ReversePrivateEndpoint{Status: s("PendingAcceptance")}, false},
		{"alert firing", &AlertStatus{State: s("ALERT")}, true},
		{"alert OK", &AlertStatus{State: s("OK")}, false},
		{"alert INSUFFICIENT_DATA", &AlertStatus{State: s("INSUFFICIENT_DATA")}, false},
		{"alert failing to evaluate", &AlertStatus{State: s("OK"), ExecutionErrors: []AlertExecutionError{{}}}, true},
		{"alert unreadable", &AlertStatus{Error: "404 Not Found"}, true},
	}
	for _, tt := range tests {
		if got := tt.item.NeedsAttention(); got != tt.want {
			t.Errorf("%s: NeedsAttention = %v, want %v", tt.name, got, tt.want)
		}
	}
}
