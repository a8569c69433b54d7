package controller

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/pacing"
)

// The scenario the claims exist for: a key's budget is spent, a new watch is
// told to come back in 5 s; when the budget has room again, a periodic
// refresh of another watch asks first and is held back, and the new watch
// gets the room.
func TestAskServesANewWatchBeforeARefresh(t *testing.T) {
	clock := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	metrics, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	cloud := &budgetCloud{refuse: true}
	r := &ServiceWatchReconciler{Cloud: cloud, Metrics: metrics, now: func() time.Time { return clock }}
	r.pacer = testPacer(r.now)
	creds := cloudapi.NewBasicCredentials("key", "secret")
	newWatch := types.NamespacedName{Namespace: "a", Name: "new"}
	old := types.NamespacedName{Namespace: "a", Name: "old"}

	if wait := r.ask(newWatch, pacing.User, cloudapi.APIManagement, "https://api.example.com", creds, 2); wait != 5*time.Second {
		t.Fatalf("the new watch waits %s, want the budget's 5s", wait)
	}
	cloud.refuse = false
	clock = clock.Add(5 * time.Second)
	if wait := r.ask(old, pacing.Periodic, cloudapi.APIManagement, "https://api.example.com", creds, 2); wait != pacing.ClaimRecheck {
		t.Fatalf("the refresh waits %s, want %s behind the new watch's claim", wait, pacing.ClaimRecheck)
	}
	if cloud.admits != 1 {
		t.Fatalf("the held refresh asked the budget (%d admissions): it would take the new watch's room", cloud.admits)
	}
	if wait := r.ask(newWatch, pacing.User, cloudapi.APIManagement, "https://api.example.com", creds, 2); wait != 0 {
		t.Fatalf("the new watch waits %s once the budget has room", wait)
	}
	r.pacer.Admitted(newWatch) // as admit does once every budget said yes
	if wait := r.ask(old, pacing.Periodic, cloudapi.APIManagement, "https://api.example.com", creds, 2); wait != 0 {
		t.Fatalf("the refresh still waits %s after the new watch was served", wait)
	}
}

// testPacer is a pacer whose clock is now, which no wall-clock step moves,
// and whose periodic syncs have no jitter.
func testPacer(now func() time.Time) *pacing.Pacer[types.NamespacedName, readKey] {
	return pacing.New[types.NamespacedName, readKey](pacing.NewClock(now, nil), func(time.Duration) time.Duration { return 0 })
}
