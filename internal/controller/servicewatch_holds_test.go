package controller_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
	"github.com/servicewatch/servicewatch/internal/syncmetrics"
)

// A 429's Retry-After holds the key at its host for every watch, also after
// a restart: the restarted manager knows of it only from the status of the
// watch that got it, and a new watch on the same key and host must not call
// before it.
func TestARetryAfterHoldsEveryWatchOnTheKeyAfterARestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.faultyWatch("limited", fakecloud.OpListPipes, fakecloud.Fault{Status: 429, RetryAfter: "600", Body: "Too Many Requests", ContentType: "text/plain"})
	w := f.waitFor("limited", 20*time.Second, "retryNotBefore set", func(w *swv1.ServiceWatch) bool { return w.Status.RetryNotBefore != nil })
	if held := time.Until(w.Status.RetryNotBefore.Time); held < 9*time.Minute {
		t.Fatalf("retryNotBefore is %s away, want about 600s", held)
	}

	// The restart: a reconciler with a client that never saw the 429.
	metrics, err := syncmetrics.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	fast := ratebudget.RateLimit{Requests: 1000, Per: time.Second, Burst: 1000}
	budgets := cloudapi.NewBudgets(fast, fast)
	cloud := cloudapi.New(cloudapi.Options{Timeout: 5 * time.Second, Budgets: budgets})
	r := controller.NewTestReconciler(t.Context(), env.Client, env.Client, cloud, budgets, metrics)
	f.fake.ResetCalls()

	// The newcomer is seen first (it is not created: only this reconciler
	// syncs it).
	newcomer := f.newWatch("newcomer")
	newcomer.Generation, newcomer.UID = 1, "newcomer"
	newcomer.CreationTimestamp = metav1.Now()
	if wait := r.StartSync(f.ctx, newcomer); wait < 9*time.Minute {
		t.Errorf("the new watch on the held key waits %s, want until retryNotBefore (about 600s)", wait)
	}
	time.Sleep(time.Second) // a read started would have called by now
	if calls := f.fake.CallLog(); len(calls) != 0 {
		t.Errorf("%d calls inside the hold after the restart, want none: %v", len(calls), calls)
	}
}
