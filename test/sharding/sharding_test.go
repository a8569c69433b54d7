package sharding

import (
	"maps"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// readyTimeout bounds the first sync of a batch of watches.
const readyTimeout = 30 * time.Second

func TestEachWatchIsSyncedByTheOneShardThatSelectsIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "two-shards")
	shards := map[string]*shardManager{
		"one": w.startManager("shard-one", shardLabel+"=one", "servicewatch-one"),
		"two": w.startManager("shard-two", shardLabel+"=two", "servicewatch-two"),
	}
	// The unlabeled watches come first: a shard that wrongly took them
	// would meet them before its own.
	unlabeled := w.createWatches("unlabeled", "", 2)
	shardOf := map[string]string{}
	for _, shard := range []string{"one", "two"} {
		for _, name := range w.createWatches("of-"+shard, shard, 10) {
			shardOf[name] = shard
		}
	}
	w.waitUntil("Ready", readyTimeout, isReady, slices.Sorted(maps.Keys(shardOf))...)

	// Each shard holds a lease of its own, so both lead at once.
	for shard, m := range shards {
		if !m.isLeader() {
			t.Errorf("shard %s does not lead, though its watches are Ready", shard)
		}
	}
	one, two := holder(w.lease("servicewatch-one").Spec), holder(w.lease("servicewatch-two").Spec)
	if one == "" || two == "" || one == two {
		t.Errorf("lease holders: servicewatch-one %q, servicewatch-two %q; want two different managers", one, two)
	}

	calls := w.callsByWatch(time.Time{})
	for name, shard := range shardOf {
		// One first sync, by the shard's manager alone.
		assertSyncedOnceBy(t, shards[shard], name, calls[name])
	}
	for _, name := range unlabeled {
		if got := calls[name]; len(got) > 0 {
			t.Errorf("unlabeled watch %s was synced: %s", name, callers(got))
		}
		if status := w.get(name).Status; status.ObservedGeneration != -1 || len(status.Conditions) > 0 {
			t.Errorf("unlabeled watch %s: observedGeneration %d, %d conditions; want the CRD's default status (-1, none)",
				name, status.ObservedGeneration, len(status.Conditions))
		}
	}
	for name, got := range calls {
		if _, ok := shardOf[name]; !ok && !slices.Contains(unlabeled, name) {
			t.Errorf("calls for %s, which no watch reads: %s", name, callers(got))
		}
	}
}

// takeoverSlack is how long past the lease duration a standby may take to
// lead: it notices the expiry at its next retry, and the machine is shared.
const takeoverSlack = 3 * time.Second

// observeAfterTakeover is how long the new leader must have led before the
// test trusts that it would have called the cloud for the old watches if it
// were going to: its first reconcile of each happens at once.
const observeAfterTakeover = 2 * time.Second

func TestStandbyTakesOverACrashedLeaderWithoutCallingTheCloudEarly(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "takeover")
	const lease = "servicewatch-one"
	selector := shardLabel + "=one"
	leader := w.startManager("leader", selector, lease)
	leader.waitElected(15 * time.Second)
	standby := w.startManager("standby", selector, lease)

	fresh := w.createWatches("fresh", "one", 5)
	w.waitUntil("Ready", readyTimeout, isReady, fresh...)
	retryNotBefore := w.createThrottledWatch("throttled", "one")
	if standby.isLeader() {
		t.Fatal("the standby leads while the leader is alive")
	}
	assertAllCallsBy(t, leader, w.callsByWatch(time.Time{}))
	lastSync := w.lastSyncTimes(fresh)
	before := w.lease(lease).Spec

	crashed := time.Now()
	leader.crash()
	if held := holder(w.lease(lease).Spec); held != holder(before) {
		t.Fatalf("after the crash the lease is held by %q, want still by the crashed leader %q: the crash released it", held, holder(before))
	}
	w.createWatch("created-after-crash", "one")

	standby.waitElected(leaseDuration + 30*time.Second)
	took := time.Since(crashed)
	electedAt := time.Now()
	t.Logf("the standby led %v after the leader crashed (lease duration %v)", took.Round(time.Millisecond), leaseDuration)
	if took > leaseDuration+takeoverSlack {
		t.Errorf("the standby took over %v after the crash; want within the lease duration %v (+%v)", took, leaseDuration, takeoverSlack)
	}
	after := w.lease(lease).Spec
	if holder(after) == "" || holder(after) == holder(before) || transitions(after) != transitions(before)+1 {
		t.Errorf("lease after the takeover: holder %q, %d transitions; want a holder other than %q and one transition more than %d",
			holder(after), transitions(after), holder(before), transitions(before))
	}

	// The new leader proves it leads by syncing a watch created after the
	// crash...
	w.waitUntil("Ready", readyTimeout, isReady, "created-after-crash")
	assertSyncedOnceBy(t, standby, "created-after-crash", w.callsByWatch(crashed)["created-after-crash"])

	// ...honors the wait the cloud asked of the old leader...
	w.waitUntil("Ready after status.retryNotBefore", time.Until(retryNotBefore)+readyTimeout, isReady, "throttled")
	throttled := w.callsByWatch(crashed)["throttled"]
	assertSyncedOnceBy(t, standby, "throttled", throttled)
	for _, c := range throttled {
		if c.Time.Before(retryNotBefore) {
			t.Errorf("watch throttled was called at %s, before its status.retryNotBefore %s", c.Time.Format(time.StampMilli), retryNotBefore.Format(time.StampMilli))
		}
	}

	// ...and leaves alone the watches the old leader synced less than an
	// interval ago: their next periodic slot is minutes away.
	time.Sleep(time.Until(electedAt.Add(observeAfterTakeover)))
	calls := w.callsByWatch(crashed)
	for _, name := range fresh {
		if got := calls[name]; len(got) > 0 {
			t.Errorf("watch %s, synced by the old leader at %s, was synced again after the takeover: %s", name, lastSync[name].Format(time.TimeOnly), callers(got))
		}
	}
	for name, now := range w.lastSyncTimes(fresh) {
		if !now.Equal(lastSync[name]) {
			t.Errorf("watch %s: lastSyncTime moved from %s to %s after the takeover", name, lastSync[name].Format(time.TimeOnly), now.Format(time.TimeOnly))
		}
	}
}

// createThrottledWatch creates a watch whose first sync the cloud throttles:
// its pipes answer 429 with a Retry-After of 10s. It waits until status
// carries the wait, and returns status.retryNotBefore.
func (w *world) createThrottledWatch(name, shard string) time.Time {
	w.t.Helper()
	w.fake.SetFault(fakecloud.OpListPipes, fakecloud.Fault{Status: 429, RetryAfter: "10", Times: 1})
	w.createWatch(name, shard)
	w.waitUntil("status.retryNotBefore set", readyTimeout, func(sw *swv1.ServiceWatch) bool { return sw.Status.RetryNotBefore != nil }, name)
	return w.get(name).Status.RetryNotBefore.Time
}

// lastSyncTimes is the status.lastSyncTime of each named watch.
func (w *world) lastSyncTimes(names []string) map[string]time.Time {
	w.t.Helper()
	out := make(map[string]time.Time, len(names))
	for _, name := range names {
		if last := w.get(name).Status.LastSyncTime; last != nil {
			out[name] = last.Time
		}
	}
	return out
}

// assertAllCallsBy checks that m made every call.
func assertAllCallsBy(t *testing.T, m *shardManager, calls map[string][]fakecloud.Call) {
	t.Helper()
	for name, byWatch := range calls {
		for _, c := range byWatch {
			if !m.madeCall(c) {
				t.Errorf("watch %s was synced by %s; only %s may sync", name, callers([]fakecloud.Call{c}), m.name)
			}
		}
	}
}

// assertSyncedOnceBy checks that calls are one sync of the named watch by m:
// its pipes and endpoints listed once each.
func assertSyncedOnceBy(t *testing.T, m *shardManager, name string, calls []fakecloud.Call) {
	t.Helper()
	if len(calls) != 2 || countOf(calls, fakecloud.OpListPipes) != 1 || countOf(calls, fakecloud.OpListReversePrivateEndpoints) != 1 {
		t.Errorf("watch %s: calls %s; want its pipes and its endpoints listed once each", name, callers(calls))
	}
	for _, c := range calls {
		if !m.madeCall(c) {
			t.Errorf("watch %s was synced by %s, want by %s", name, callers([]fakecloud.Call{c}), m.name)
		}
	}
}

func countOf(calls []fakecloud.Call, op fakecloud.Operation) int {
	n := 0
	for _, c := range calls {
		if c.Operation == op {
			n++
		}
	}
	return n
}

func holder(spec coordinationv1.LeaseSpec) string { return ptr.Deref(spec.HolderIdentity, "") }

func transitions(spec coordinationv1.LeaseSpec) int32 { return ptr.Deref(spec.LeaseTransitions, 0) }
