package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/accountcontroller"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// withAccounts serves ClusterCloudAccounts in the test's own manager, with
// its budgets. Their status is left to the suite's manager: the test's
// would count none of the other tests' watches.
func withAccounts(budgets *ratebudget.Store) func(ctrl.Manager, *controller.ServiceWatchReconciler) {
	return func(mgr ctrl.Manager, r *controller.ServiceWatchReconciler) {
		r.Accounts = &accountcontroller.Accounts{Client: mgr.GetClient(), Namespace: operatorNamespace, Budgets: budgets}
	}
}

// busyAccountWatches creates n watches in f's namespace through account, at
// 30 s (2 calls each), each of a service of its own (from first on): together they need
// more than the key's budget.
func busyAccountWatches(f *fixture, manager, account string, first, n int) {
	for i := range n {
		w := f.newWatch(fmt.Sprintf("w%02d", i))
		w.Labels = map[string]string{ownManagerLabel: manager}
		w.Spec.ManagementAPI = swv1.ManagementAPISpec{AccountRef: &swv1.AccountRef{Name: account}}
		w.Spec.AlertAPI = nil
		w.Spec.ServiceID = distinctService(first + i)
		w.Spec.Interval = metav1.Duration{Duration: 30 * time.Second}
		f.create(w)
	}
}

// An account that reserves half its key's budget for callers outside the
// cluster: however much its watches need, the manager sends at most half
// the key's calls in any window of the cloud's, and the account's status
// says the reserve in force. Before, the account could not reserve
// anything, and the watches took the whole budget.
func TestAccountReserveKeepsTheManagerUnderHalf(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	limit, budgets := scaledDownKey(f.fake, 4, 8)
	startOwnManager(t, "reserve", budgets, withAccounts(budgets))
	f.createAccountSecrets()
	account := f.newAccount(swv1.AccountCondition{Namespaces: []string{f.ns}})
	account.Spec.ReservedPercent = ptr.To[int32](50)
	f.create(account)
	t.Cleanup(func() { _ = env.Client.Delete(t.Context(), f.newAccount()) })
	// 8 watches of 2 calls each per 30 s: 32 calls/min, more than the
	// key's whole budget (the key's scaled-down 4 per 10 s).
	busyAccountWatches(f, "reserve", f.accountName(), 0, 8)
	start := time.Now()
	// Real time: what is tested is the rate the manager, on the real clock,
	// keeps in any of the cloud's 10 s windows; 25 s holds two whole ones.
	// The strict rule of the pacer is tested with an injected clock
	// (internal/pacing).
	time.Sleep(25 * time.Second)

	var times []time.Time
	for _, c := range f.fake.CallLog() {
		if c.Time.After(start) && c.Operation != fakecloud.OpListAlerts && c.KeyFingerprint != "" && c.Status != 429 {
			times = append(times, c.Time)
		}
	}
	most := 0
	for i := range times { // the most calls in any 10 s, the cloud's window
		n := 0
		for _, u := range times[i:] {
			if u.Sub(times[i]) < limit.Per {
				n++
			}
		}
		most = max(most, n)
	}
	if most > limit.Requests/2 || most == 0 {
		t.Errorf("the manager sent up to %d calls in 10 s of a key whose account reserves half of its %d: want 1 to %d", most, limit.Requests, limit.Requests/2)
	}
	t.Logf("%d calls in 25 s, at most %d in any 10 s", len(times), most)
	for _, c := range f.fake.CallLog() {
		if c.Status == 429 {
			t.Errorf("the cloud answered 429 at %v", c.Time)
		}
	}
}

// Two namespaces draw on one account's key, weighted 3 to 1, both needing
// more than the key gives: the heavier gets three times the other's share,
// in the budget metrics and in IntervalMet. Before, the account had no weights and
// the two shares were equal.
func TestAccountWeightsShareTheKey(t *testing.T) {
	t.Parallel()
	heavy := newNamedFixture(t, t.Name()+"-heavy")
	light := newNamedFixture(t, t.Name()+"-light")
	light.fake = heavy.fake
	_, budgets := scaledDownKey(heavy.fake, 4, 12)
	reg := startOwnManager(t, "weights", budgets, withAccounts(budgets))
	heavy.createAccountSecrets()
	account := heavy.newAccount(swv1.AccountCondition{Namespaces: []string{heavy.ns, light.ns}})
	account.Spec.NamespaceWeights = []swv1.NamespaceWeight{{Namespace: heavy.ns, Weight: 3}}
	heavy.create(account)
	t.Cleanup(func() { _ = env.Client.Delete(t.Context(), heavy.newAccount()) })
	// Each namespace: 6 watches of 2 calls per 30 s, 24 calls/min, more
	// than its share of the key's 4 per 11 s (21.8 calls/min): 16.4 and
	// 5.5.
	busyAccountWatches(heavy, "weights", heavy.accountName(), 0, 6)
	busyAccountWatches(light, "weights", heavy.accountName(), 6, 6)
	budget := ratebudget.Fingerprint(cloudapi.APIManagement, heavy.fake.URL, cloudapi.NewBasicCredentials(heavy.keyID, heavy.keySecret))

	share := func(f *fixture) float64 {
		return gauge(t, reg, "servicewatch_budget_namespace_share", map[string]string{"budget": budget, "namespace": f.ns})
	}
	waitForGauge(t, reg, "servicewatch_budget_namespace_share", map[string]string{"budget": budget, "namespace": light.ns}, func(float64) bool { return true })
	// The shares settle as both namespaces' demands become known (the light
	// one's first syncs may come first): wait for the 3 to 1 the weights
	// ask, which waitForGauge fails on when it does not come.
	waitForGauge(t, reg, "servicewatch_budget_namespace_share", map[string]string{"budget": budget, "namespace": heavy.ns}, func(v float64) bool {
		l := share(light)
		return l > 0 && v >= 2.9*l && v <= 3.1*l
	})
	if h, l := share(heavy), share(light); h < 2.9*l || h > 3.1*l {
		t.Errorf("shares heavy %.3f, light %.3f calls/s: want 3 to 1", h, l)
	}
	for _, tc := range []struct {
		f    *fixture
		want string
	}{{heavy, "share of the key is 16.4 calls/min"}, {light, "share of the key is 5.5 calls/min"}} {
		var msg string
		for deadline := time.Now().Add(60 * time.Second); msg == "" && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			for i := range 6 {
				if c := tc.f.get(fmt.Sprintf("w%02d", i)).Condition(swv1.ConditionIntervalMet); c != nil && strings.Contains(c.Message, tc.want) {
					msg = c.Message
				}
			}
		}
		if msg == "" {
			t.Errorf("no watch of %s says IntervalMet with %q within 60 s", tc.f.ns, tc.want)
		}
		t.Logf("%s: %s", tc.f.ns, msg)
	}
}

// The account's status says the reserve in force on its key and each
// namespace's weight and share while all are busy; a namespace whose
// watches the account refuses has no share.
func TestAccountStatusShowsReserveAndShares(t *testing.T) {
	t.Parallel()
	heavy := newNamedFixture(t, t.Name()+"-heavy")
	light := newNamedFixture(t, t.Name()+"-light")
	refused := newNamedFixture(t, t.Name()+"-refused")
	heavy.createAccountSecrets()
	account := heavy.newAccount(swv1.AccountCondition{Namespaces: []string{heavy.ns, light.ns}})
	account.Spec.NamespaceWeights = []swv1.NamespaceWeight{{Namespace: heavy.ns, Weight: 3}, {Namespace: refused.ns, Weight: 5}}
	account.Spec.ReservedPercent = ptr.To[int32](50)
	heavy.create(account)
	t.Cleanup(func() { _ = env.Client.Delete(t.Context(), heavy.newAccount()) })
	for _, f := range []*fixture{heavy, light, refused} {
		w := f.newWatch("w0")
		w.Spec.ManagementAPI = swv1.ManagementAPISpec{AccountRef: &swv1.AccountRef{Name: heavy.accountName()}}
		w.Spec.AlertAPI = nil
		f.create(w)
	}
	heavy.waitFor("w0", 20*time.Second, "Ready", isReady)
	a := heavy.waitForAccount("showing each namespace's weight and share and the reserve", func(a *swv1.ClusterCloudAccount) bool {
		return len(a.Status.Namespaces) == 3 && a.Status.Budget != nil && a.Status.Budget.ReservedPercent == 50
	})
	want := map[string]swv1.AccountNamespaceUse{
		heavy.ns:   {Name: heavy.ns, Watches: 1, Allowed: 1, Weight: 3, SharePercent: 75},
		light.ns:   {Name: light.ns, Watches: 1, Allowed: 1, Weight: 1, SharePercent: 25},
		refused.ns: {Name: refused.ns, Watches: 1, Allowed: 0, Weight: 5},
	}
	for _, use := range a.Status.Namespaces {
		if use != want[use.Name] {
			t.Errorf("namespace %s: %+v, want %+v", use.Name, use, want[use.Name])
		}
	}
}

// Issue 37, scaled down: two namespaces on one account's key (4 calls per
// 10 s). The requester's six watches sit at 24 h and request a sync every
// 100 ms; the victim's watch syncs every 30 s. Every call the requester
// makes counts against its share, so the victim keeps its interval within
// the bound docs/security.md states: a call's spacing on the key (2.5 s)
// plus, once, the time the other namespace takes to spend its part (about
// 10 s), while the requester still gets the rest of the key. Alone on the
// machine the victim's period is 30.3 s and the requester's syncs say
// they wait for its share (BudgetExceeded); the old code gave 35.7 s. On a
// machine loaded by the other packages' tests the period was 33.0 s with
// no such wait in two CI runs of three, so the strict rule (a victim within
// a call's spacing, the requester told why it waits) is held by the
// pacer's simulation with an injected clock
// (pacing.TestRequestedSyncsLeaveAnotherNamespaceItsInterval), which the
// old code failed with one victim sync in 6 minutes. Not parallel: it
// measures a period.
func TestRequestedSyncsLeaveAnotherNamespaceItsInterval(t *testing.T) {
	requester := newNamedFixture(t, t.Name()+"-requester")
	victim := newNamedFixture(t, t.Name()+"-victim")
	victim.fake = requester.fake
	_, budgets := scaledDownKey(requester.fake, 4, 7)
	startOwnManager(t, "requests", budgets, withAccounts(budgets))
	requester.createAccountSecrets()
	requester.create(requester.newAccount(swv1.AccountCondition{Namespaces: []string{requester.ns, victim.ns}}))
	t.Cleanup(func() { _ = env.Client.Delete(t.Context(), requester.newAccount()) })
	watch := func(f *fixture, name string, service int, every time.Duration) {
		w := f.newWatch(name)
		w.Labels = map[string]string{ownManagerLabel: "requests"}
		w.Spec.ManagementAPI = swv1.ManagementAPISpec{AccountRef: &swv1.AccountRef{Name: requester.accountName()}}
		w.Spec.AlertAPI = nil
		w.Spec.ServiceID = distinctService(service)
		w.Spec.Interval = metav1.Duration{Duration: every}
		f.create(w)
	}
	const requesting = 6
	var names []string
	for i := range requesting {
		names = append(names, fmt.Sprintf("w%d", i))
		watch(requester, names[i], i, 24*time.Hour)
	}
	watch(victim, "w0", requesting, 30*time.Second)
	for _, name := range names {
		// Six first syncs of two calls on a key of 4 calls per 10 s take
		// 15 s alone; a loaded machine needs more.
		requester.waitFor(name, 60*time.Second, "Ready", isReady)
	}
	requestInALoop(t, requester, names...)
	victim.waitFor("w0", 20*time.Second, "Ready", isReady)

	pipesCalls := func(service int, since time.Time) []time.Time {
		var times []time.Time
		for _, c := range requester.fake.CallLog() {
			if c.Operation == fakecloud.OpListPipes && c.ServiceID == distinctService(service) && c.Status == 200 && !c.Time.Before(since) {
				times = append(times, c.Time)
			}
		}
		return times
	}
	first := pipesCalls(requesting, time.Time{})[0]
	var waited string
	for deadline := first.Add(40 * time.Second); len(pipesCalls(requesting, first)) < 2 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, name := range names {
			if c := requester.get(name).Condition(swv1.ConditionReconciling); c != nil && c.Reason == swv1.ReasonBudgetExceeded {
				waited = c.Message
			}
		}
	}
	syncs := pipesCalls(requesting, first)
	if len(syncs) < 2 {
		t.Fatalf("the victim's watch (interval 30 s) went %v without a sync after its first", time.Since(first).Round(time.Second))
	}
	if gap := syncs[1].Sub(syncs[0]); gap > 30*time.Second+2500*time.Millisecond+10*time.Second {
		t.Errorf("the victim's watch synced again %v after its first sync: want its interval, 30 s, within a call's spacing (2.5 s) and one part's spending (10 s)", gap.Round(100*time.Millisecond))
	}
	if waited != "" && !strings.Contains(waited, "more than its share") {
		t.Errorf("a requested sync of the requester waits (Reconciling, BudgetExceeded) without saying it is for its namespace's share: %q", waited)
	}
	requested := 0
	for i := range requesting {
		requested += len(pipesCalls(i, first))
	}
	t.Logf("victim's period %v; the requester's syncs meanwhile: %d; Reconciling said %q", syncs[1].Sub(syncs[0]), requested, waited)
	if requested < 3 {
		t.Errorf("the requester made %d requested syncs in the victim's 30 s: it should get the rest of the key (about 4)", requested)
	}
}

// requestInALoop requests a sync of each of f's watches names (kubectl
// servicewatch sync) every 100 ms, a new value each time, until the test
// ends: a sync is always asked for, whether or not the last one was
// handled yet, so that what the requester asks does not depend on how fast
// a loaded machine handles it.
func requestInALoop(t *testing.T, f *fixture, names ...string) {
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	t.Cleanup(func() { stop(); <-done })
	go func() {
		defer close(done)
		for n := 0; ctx.Err() == nil; n++ {
			for _, name := range names {
				w := &swv1.ServiceWatch{}
				if env.Client.Get(ctx, types.NamespacedName{Namespace: f.ns, Name: name}, w) != nil {
					continue
				}
				patch := client.MergeFrom(w.DeepCopy())
				w.Annotations = map[string]string{swv1.RequestedAtAnnotation: fmt.Sprintf("r%d", n)}
				_ = env.Client.Patch(ctx, w, patch)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
}
