package kubectlplugin

import (
	"testing"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

// The NAME column of get alerts is the alert's name, or its displayName
// when the cloud sends no name (null) or an empty one.
func TestAlertRowsNameAnAlertByItsNameElseItsDisplayName(t *testing.T) {
	w := newWatch("data", "shop")
	w.Status.Alerts = []swv1.AlertStatus{
		{ID: "a1", DisplayName: ptr.To("Checkout error rate (inline)")},
		{ID: "a2", Name: ptr.To("ingest_lag"), DisplayName: ptr.To("Ingest lag")},
		{ID: "a3", Name: ptr.To(""), DisplayName: ptr.To("Pipe paused")},
		{ID: "a4", Name: ptr.To("Error rate")},
	}
	want := []string{"Checkout error rate (inline)", "ingest_lag", "Pipe paused", "Error rate"}
	rows := alertRows(w)
	for i, r := range rows {
		if r.name != want[i] {
			t.Errorf("alert %s: NAME %q, want %q", r.id, r.name, want[i])
		}
	}
}
