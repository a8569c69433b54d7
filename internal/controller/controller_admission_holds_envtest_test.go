package controller_test

import (
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/accountcontroller"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// A 429's Retry-After holds the key at its host for every watch, also after
// a restart: the restarted manager knows of it only from the status of the
// watch that got it, and a new watch on the same key and host must not call
// before it.
func TestARetryAfterHoldsEveryWatchOnTheKeyAfterARestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.faultyWatch("limited", fakecloud.OpListPipes, fakecloud.Fault{Status: 429, RetryAfter: "600", Body: "Too Many Requests", ContentType: "text/plain"})
	f.waitHeldFor10Minutes("limited")
	// The status names the budget held, as the metrics label it.
	key := ratebudget.Fingerprint(cloudapi.APIManagement, f.fake.URL, cloudapi.NewBasicCredentials(f.keyID, f.keySecret))
	if held := f.get("limited").Status.HeldBudgets; !slices.Equal(held, []string{key}) {
		t.Errorf("status.heldBudgets %q, want the management key's budget %q", held, key)
	}

	// The restart: a reconciler with a client that never saw the 429.
	r, _ := restartedReconciler(t)
	f.fake.ResetCalls()

	// The newcomer is seen first (it is not created: only this reconciler
	// syncs it).
	newcomer := f.unseenWatch("newcomer")
	if wait := r.StartSync(f.ctx, newcomer); wait < 9*time.Minute {
		t.Errorf("the new watch on the held key waits %s, want until retryNotBefore (about 600s)", wait)
	}
	// A read started would have called by now: reads run in the
	// background, on the real clock, and call within milliseconds.
	time.Sleep(time.Second)
	if calls := f.fake.CallLog(); len(calls) != 0 {
		t.Errorf("%d calls inside the hold after the restart, want none: %v", len(calls), calls)
	}
}

// waitHeldFor10Minutes waits until the watch name shows the wait of a
// Retry-After of 600 s in its retryNotBefore.
func (f *fixture) waitHeldFor10Minutes(name string) {
	f.t.Helper()
	w := f.waitFor(name, 20*time.Second, "retryNotBefore set", func(w *swv1.ServiceWatch) bool { return w.Status.RetryNotBefore != nil })
	if held := time.Until(w.Status.RetryNotBefore.Time); held < 9*time.Minute {
		f.t.Fatalf("retryNotBefore is %s away, want about 600s", held)
	}
}

// restartedReconciler is a manager's reconciler after a restart: a cloud
// client that saw none of the suite's calls, with budgets (returned too)
// that hold nothing back of their own.
func restartedReconciler(t *testing.T) (*controller.ServiceWatchReconciler, *ratebudget.Store) {
	t.Helper()
	syncMetrics, err := metrics.NewSync(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	fast := ratebudget.RateLimit{Requests: 1000, Per: time.Second, Burst: 1000}
	budgets := cloudapi.NewBudgets(fast, fast)
	cloud := cloudapi.New(cloudapi.Options{Timeout: 5 * time.Second, Budgets: budgets})
	return controller.NewTestReconciler(t.Context(), env.Client, env.Client, cloud, budgets, syncMetrics), budgets
}

// unseenWatch is a new watch named name that is not created: only the
// reconciler a test hands it to syncs it.
func (f *fixture) unseenWatch(name string) *swv1.ServiceWatch {
	w := f.newWatch(name)
	w.Generation, w.UID = 1, types.UID(name)
	w.CreationTimestamp = metav1.Now()
	return w
}

// A hold is restored only on the budget it was set on, and only from a
// status of the watch's current generation: a tenant whose own host asked
// its key to wait a day, and who then points the watch at an account it
// shares with another namespace, does not make that namespace wait after
// the manager restarts. Before, the hold was restored on the budget of the
// watch's current spec, whatever generation its status was of: the other
// namespace's new watch on the account's key waited a day.
func TestAHoldIsRestoredOnlyOnTheBudgetItWasSetOn(t *testing.T) {
	t.Parallel()
	tenant := newNamedFixture(t, t.Name()+"-tenant")
	victim := newNamedFixture(t, t.Name()+"-victim")
	const manager = "moved-hold"
	t.Run("the first manager", func(t *testing.T) {
		fast := ratebudget.RateLimit{Requests: 1000, Per: time.Second, Burst: 1000}
		startOwnManager(t, manager, cloudapi.NewBudgets(fast, fast)) // stopped when this subtest ends
		f := *tenant
		f.t = t
		f.fake.SetFault(fakecloud.OpListPipes, fakecloud.Fault{Status: 429, RetryAfter: "86400", Body: "Too Many Requests", ContentType: "text/plain"})
		f.createSecrets()
		w := f.newWatch("limited")
		w.Labels = map[string]string{ownManagerLabel: manager}
		f.create(w)
		w = f.waitFor("limited", 20*time.Second, "retryNotBefore set", func(w *swv1.ServiceWatch) bool { return w.Status.RetryNotBefore != nil })
		if held := time.Until(w.Status.RetryNotBefore.Time); held < 23*time.Hour {
			t.Fatalf("retryNotBefore is %s away, want about a day", held)
		}
	})

	// The tenant points the watch at the account; no manager syncs it
	// before the restart, so its status still tells of its own host.
	victim.createAccountSecrets()
	victim.createAccount(swv1.AccountCondition{Namespaces: []string{tenant.ns, victim.ns}})
	limited := tenant.get("limited")
	limited.Spec.ManagementAPI = swv1.ManagementAPISpec{AccountRef: &swv1.AccountRef{Name: victim.accountName()}}
	if err := env.Client.Update(tenant.ctx, limited); err != nil {
		t.Fatal(err)
	}

	r, budgets := restartedReconciler(t)
	r.UseAccounts(&accountcontroller.Accounts{Client: env.Client, Namespace: operatorNamespace, Budgets: budgets})
	newcomer := victim.unseenWatch("newcomer")
	newcomer.Spec.ManagementAPI = swv1.ManagementAPISpec{AccountRef: &swv1.AccountRef{Name: victim.accountName()}}
	if wait := r.StartSync(victim.ctx, newcomer); wait > 0 {
		t.Errorf("the other namespace's new watch on the account's key waits %s after the restart, want no wait: the hold was the tenant's own host's", wait.Round(time.Minute))
	}
	waitForCalls(t, "the new watch's call with the account's key", 1, func() int { return victim.fake.Calls(fakecloud.OpListPipes) })
}
