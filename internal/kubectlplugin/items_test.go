package kubectlplugin

import (
	"strings"
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

// get says, for a watch whose status lists fewer pipes than its summary
// counts, how many were left out and where the others are; a watch that
// lists them all gets no note.
func TestLeftOutNotes(t *testing.T) {
	cut := serviceWatch{Status: swv1.ServiceWatchStatus{Pipes: make([]swv1.Pipe, 3064), Summary: &swv1.Summary{Pipes: 10_000}}}
	cut.Namespace, cut.Name = "data", "big"
	whole := serviceWatch{Status: swv1.ServiceWatchStatus{Pipes: make([]swv1.Pipe, 2), Summary: &swv1.Summary{Pipes: 2}}}
	whole.Namespace, whole.Name = "data", "small"
	pipes, _ := findKind("pipes")
	notes := leftOutNotes([]serviceWatch{whole, cut, {}}, pipes)
	if len(notes) != 1 {
		t.Fatalf("notes %q, want one for data/big", notes)
	}
	for _, want := range []string{"data/big lists 3064 of its 10000 pipes", "need attention are kept first", "servicewatch_pipe_info"} {
		if !strings.Contains(notes[0], want) {
			t.Errorf("note %q does not say %q", notes[0], want)
		}
	}
}
