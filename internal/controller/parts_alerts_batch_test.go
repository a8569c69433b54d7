package controller

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/pacing"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// batchCloud's alert budget admits at most maxBatch calls at once, as a
// client whose --alert-rate-limit is below a watch's number of alerts: a
// larger ask is never admitted.
type batchCloud struct {
	stubCloud
	maxBatch int

	mu sync.Mutex
	// largest is the largest alert ask; fetched counts the fetches by ID.
	largest int
	fetched map[string]int
}

func (c *batchCloud) Admit(api, _ string, _ ratebudget.CredentialID, n int) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if api != cloudapi.APIAlert {
		return 0
	}
	c.largest = max(c.largest, n)
	if n > c.maxBatch {
		return time.Minute // one window, for ever
	}
	return 0
}

func (c *batchCloud) MaxBatch(api string) int {
	if api == cloudapi.APIAlert {
		return c.maxBatch
	}
	return 0
}

func (c *batchCloud) GetAlertFrom(_ context.Context, _ cloudapi.AlertSource, id string) (cloudapi.AlertResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fetched[id]++
	return cloudapi.AlertResult{Alert: swv1.AlertStatus{ID: id, Name: ptr.To("alert " + id)}}, nil
}

// A watch with more alerts than the token's budget admits at once fetches
// them in batches, in turn: it is admitted (never starved), every alert
// comes round, and its wait claims nothing that would hold back the other
// watches' alerts on the token.
func TestAlertsLargerThanTheBudgetAreFetchedInBatches(t *testing.T) {
	syncMetrics, err := metrics.NewSync(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	cloud := &batchCloud{maxBatch: 3, fetched: map[string]int{}}
	clock := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	r := &ServiceWatchReconciler{Cloud: cloud, Budgets: cloud, Metrics: syncMetrics, clock: pacing.NewClock(func() time.Time { return clock }, nil)}
	r.pacer = testPacer(r.clock.Now)
	ids := []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7"}
	big := testWatch(ids...) // a new watch: work the user asked for
	access := alertAccess{apiAccess: apiAccess{url: "https://alerts.example.com", digest: cloudapi.DigestOf(cloudapi.NewBearerToken("token"))}}
	syncWatch := func(w *swv1.ServiceWatch, level pacing.Level) admission {
		t.Helper()
		in := &syncScope{watch: w, management: managementAccess{apiAccess: apiAccess{failure: newFailure(swv1.ReasonConfigurationError, "not read here")}}, alerts: access, alertConcurrency: 2}
		admitted := r.admitAt(in, level)
		if admitted.wait > 0 || admitted.alertsDeferred {
			return admitted
		}
		in.alertBatch = admitted.alertBatch
		applyResults(w, syncParts(), []partResult{pipesOK(), endpointsOK(0), readAlerts(context.Background(), cloud, in)}, DefaultStatusSizeLimit)
		w.Status.ObservedGeneration = w.Generation
		return admitted
	}

	if a := syncWatch(big, pacing.User); a.wait > 0 {
		t.Fatalf("the watch with 7 alerts on a budget of 3 at once waits %s: it would wait for ever", a.wait)
	}
	if got := condition(big, swv1.ConditionAlertsSynced); got != "False/RateLimited" {
		t.Errorf("after the first batch AlertsSynced is %s, want False/RateLimited until every alert was fetched once", got)
	}
	if n := len(big.Status.Alerts); n != len(ids) {
		t.Errorf("status has %d alerts, want an entry for each of the %d", n, len(ids))
	}

	// Another watch's alerts on the token are not held back by it.
	small := testWatch("b1")
	small.Status.ObservedGeneration = small.Generation
	small.Name = "small"
	if a := syncWatch(small, pacing.Periodic); a.wait > 0 || a.alertsDeferred {
		t.Errorf("another watch's periodic alerts are deferred (%+v) behind the big watch", a)
	}

	for i := range 2 {
		clock = clock.Add(time.Minute)
		if a := syncWatch(big, pacing.Periodic); a.wait > 0 || a.alertsDeferred {
			t.Fatalf("batch %d: deferred (%+v)", i+2, a)
		}
	}
	for _, id := range ids {
		if cloud.fetched[id] == 0 {
			t.Errorf("alert %s was never fetched in 3 syncs of batches of 3", id)
		}
	}
	if got := condition(big, swv1.ConditionAlertsSynced); got != "True/Synced" {
		t.Errorf("once every alert was fetched, AlertsSynced is %s", got)
	}
	if c := big.Condition(swv1.ConditionAlertsSynced); !strings.HasPrefix(c.Message, "Fetched 3 of 7 alerts") {
		t.Errorf("AlertsSynced says %q, want it to tell that a batch was fetched", c.Message)
	}
	for _, a := range big.Status.Alerts {
		if a.Name == nil || a.Error != "" {
			t.Errorf("alert %s: %+v, want its fetch", a.ID, a)
		}
	}
	if cloud.largest > cloud.maxBatch {
		t.Errorf("the budget was asked for %d alert calls at once, more than the %d it admits", cloud.largest, cloud.maxBatch)
	}
}
