package controller

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/controller/reads"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/pacing"
)

// The scenario the claims exist for: a key's budget is spent, a new watch is
// told to come back in 5 s; when the budget has room again, a periodic
// refresh of another watch asks first and is held back, and the new watch
// gets the room.
func TestAskServesANewWatchBeforeARefresh(t *testing.T) {
	clock := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	syncMetrics, err := metrics.NewSync(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	cloud := &budgetCloud{refuse: true}
	r := &ServiceWatchReconciler{Cloud: cloud, Budgets: cloud, Metrics: syncMetrics, clock: pacing.NewClock(func() time.Time { return clock }, nil)}
	r.pacer = testPacer(r.clock.Now)
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

// Watches of one service due together are reconciled side by side. The
// second one admitted before the first one's reads have begun must not ask
// the budget for the same calls: refused, it would wait its place in the
// budget's line and come back after the first one's answer was stale, and
// its reads would go out twice every round from then on. It looks again in
// a moment and joins the first one's reads, for no call of its own.
func TestAWatchWaitsAMomentForTheReadsAnotherWasJustAdmittedFor(t *testing.T) {
	clock := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	syncMetrics, err := metrics.NewSync(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	cloud := &budgetCloud{}
	r := &ServiceWatchReconciler{Cloud: cloud, Budgets: cloud, Metrics: syncMetrics, clock: pacing.NewClock(now, nil), shared: newSharedReads(sharedFreshness, now)}
	r.pacer = testPacer(r.clock.Now)
	inputOf := func(name string) *syncScope {
		w := testWatch()
		w.Name = name
		return &syncScope{watch: w, management: newManagementAccess("https://api.example.com", cloudapi.NewBasicCredentials("k", "s")),
			shared: r.shared, budgets: r.Budgets}
	}
	first, second := inputOf("first"), inputOf("second")

	if a := r.admitAt(first, pacing.Periodic); a.wait > 0 || len(a.unreserved) > 0 {
		t.Fatalf("the first watch: %+v, want admitted for its own reads", a)
	}
	cloud.refuse = true // the first one took what the budget had
	if a := r.admitAt(second, pacing.Periodic); a.wait != expectRetry {
		t.Fatalf("the second watch, before the first one's reads began: wait %s, want %s", a.wait, expectRetry)
	}
	if cloud.admits != 1 {
		t.Errorf("the second watch asked the budget (%d admissions)", cloud.admits)
	}

	// The first one's reads begin; the second joins them.
	var calls atomic.Int32
	release := make([]func(), 0, 2)
	for _, key := range first.managementReads() {
		done, _ := blockedRead(t, r.shared, key, countingFetch(&calls, "answer", nil))
		release = append(release, done)
	}
	clock = clock.Add(expectRetry)
	a := r.admitAt(second, pacing.Periodic)
	if a.wait > 0 || len(a.unreserved) != len(second.managementReads()) {
		t.Errorf("the second watch once the reads began: %+v, want admitted with every read left to them", a)
	}
	if cloud.admits != 1 {
		t.Errorf("%d admissions, want only the first watch's", cloud.admits)
	}
	for _, done := range release {
		done()
	}

	// An admitted read that never begins holds the others back a second at
	// most: then they ask for themselves.
	third := inputOf("third")
	third.watch.Spec.ServiceID = "another-service"
	cloud.refuse = false
	if a := r.admitAt(third, pacing.Periodic); a.wait > 0 {
		t.Fatalf("the third watch: %+v, want admitted", a)
	}
	fourth := inputOf("fourth")
	fourth.watch.Spec.ServiceID = "another-service"
	if a := r.admitAt(fourth, pacing.Periodic); a.wait != expectRetry {
		t.Fatalf("the fourth watch: wait %s, want %s", a.wait, expectRetry)
	}
	clock = clock.Add(reads.ExpectFor)
	if a := r.admitAt(fourth, pacing.Periodic); a.wait > 0 || len(a.unreserved) > 0 {
		t.Errorf("the fourth watch after %s: %+v, want admitted for its own reads", reads.ExpectFor, a)
	}
}

// A sync that waits for a rate budget waits for that budget, not for its
// namespace's share of decode work (whose log line says so).
func TestABudgetWaitIsNotAShareWait(t *testing.T) {
	syncMetrics, err := metrics.NewSync(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	cloud := &budgetCloud{refuse: true}
	r := &ServiceWatchReconciler{Cloud: cloud, Budgets: cloud, Metrics: syncMetrics, clock: pacing.NewClock(func() time.Time { return clock }, nil)}
	r.pacer = testPacer(r.clock.Now)
	in := &syncScope{watch: testWatch(), management: newManagementAccess("https://api.example.com", cloudapi.NewBasicCredentials("k", "s"))}
	if a := r.admitAt(in, pacing.User); a.wait <= 0 || a.overShare {
		t.Errorf("admission with the budget refusing: wait %s, for the decode share %t; want a wait for the budget", a.wait, a.overShare)
	}
}

// Alerts from the management API are asked for with the management calls,
// at once, on the key's real budget: asked apart, the second ask of one
// budget by one watch found the room the first had just taken, and the
// watch waited for ever while each retry spent two calls of the key
// (issue 29).
func TestManagementAlertsAreAskedWithTheManagementCalls(t *testing.T) {
	syncMetrics, err := metrics.NewSync(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	w := testWatch("a1", "a2")
	w.Spec.AlertsFrom, w.Spec.AlertAPI = swv1.AlertsFromManagementAPI, nil
	key := apiAccess{url: "https://api.example.com", digest: cloudapi.DigestOf(cloudapi.NewBasicCredentials("key", "secret"))}
	for _, byList := range []bool{true, false} {
		budgets := cloudapi.NewBudgets(cloudapi.DefaultManagementRate(), cloudapi.DefaultAlertRate()) // a fresh key
		r := &ServiceWatchReconciler{Budgets: budgets, Metrics: syncMetrics, clock: pacing.SystemClock()}
		r.pacer = testPacer(r.clock.Now)
		in := &syncScope{watch: w, management: managementAccess{apiAccess: key}, alerts: alertAccess{apiAccess: key}, alertsByList: byList}
		if a := r.admitAt(in, pacing.User); a.wait > 0 || a.alertsDeferred {
			t.Errorf("by list %v: a new watch whose alerts come from the management API waits %s on a fresh key (%+v)", byList, a.wait, a)
		}
	}
}
