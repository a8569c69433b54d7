package syncmetrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"

	"github.com/servicewatch/servicewatch/internal/syncmetrics"
)

// A registry takes the metrics once; the read-slot waits have a series per
// level from the start; a deleted watch leaves no item series behind, and
// another's stay.
func TestMetricsRegisterAndForget(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := syncmetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := syncmetrics.New(reg); err == nil {
		t.Error("registering the metrics twice with one registry succeeded")
	}
	if n, err := testutil.GatherAndCount(reg, "servicewatch_sync_slot_wait_seconds"); err != nil || n != 3 {
		t.Errorf("slot wait series before any wait: %d (%v), want one per level (3)", n, err)
	}
	a := types.NamespacedName{Namespace: "ns", Name: "a"}
	b := types.NamespacedName{Namespace: "ns", Name: "b"}
	m.RecordItems(a, "pipes", 3)
	m.RecordItems(a, "alerts", 1)
	m.RecordItems(b, "pipes", 7)
	m.Forget(a)
	if n, err := testutil.GatherAndCount(reg, "servicewatch_items"); err != nil || n != 1 {
		t.Errorf("item series after forgetting a: %d (%v), want b's only (1)", n, err)
	}
}
