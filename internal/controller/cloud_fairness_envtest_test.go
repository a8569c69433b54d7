package controller_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/pacing"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// Issue 17: no namespace can take the read slots another namespace's new
// watch needs. In each case a tenant does what it may (names hosts that
// hang, creates many watches, reads services whose calls hang), and a new
// watch in another namespace must be Ready within 2 s; before, it waited
// for a hanging call to end (the client's timeout, 5 s in this suite; the
// sync timeout, 2 min by default, when the calls hang past it) or for the
// other tenant's backlog.
//
// The defaults are what is tested: the suite's manager runs with them.
const (
	allSlots          = controller.DefaultMaxConcurrentSyncs
	slotsPerHost      = controller.DefaultMaxSyncsPerHost
	slotsPerNamespace = controller.DefaultMaxSyncsPerNamespace
	// victimReady is the goal: a new watch is Ready within it.
	victimReady = 2 * time.Second
)

// (a) Watches whose alert API hangs held the shared management host's slots
// for their whole sync, though their management calls had ended at once
// (here with a 401: a made-up key). A sync now holds a host's slot only
// while it calls that host. As many such watches as the host has slots,
// spread over namespaces so that no namespace's bound is what saves the
// victim.
func TestFairnessAHangingAlertHostDoesNotHoldTheSharedHost(t *testing.T) {
	t.Parallel()
	victim := newNamedFixture(t, t.Name()+"-victim")
	var hanging []*fixture
	for i := 0; i*slotsPerNamespace < slotsPerHost; i++ {
		noisy := newNamedFixture(t, fmt.Sprintf("%s-noisy-%d", t.Name(), i))
		noisy.fake.SetFault(fakecloud.OpGetAlert, fakecloud.Fault{Hang: true})
		noisy.fake.SetFault(fakecloud.OpListAlerts, fakecloud.Fault{Hang: true})
		noisy.createSecrets()
		hanging = append(hanging, noisy)
		for j := range min(slotsPerNamespace, slotsPerHost-i*slotsPerNamespace) {
			// An alert of its own: watches that fetch one alert share the call.
			w := noisy.newWatch(fmt.Sprintf("hangs-%d", j), fmt.Sprintf("alert-%d", j))
			w.Spec.ManagementAPI.URL = victim.fake.URL // the shared host; the key is not its own: 401
			w.Spec.ServiceID = distinctService(j)
			noisy.create(w)
		}
	}
	// The watches of one namespace share their alert host and token, so
	// they share one list read of it: one hanging call per namespace, the
	// others wait for it without holding any slot.
	waitForCalls(t, "the alert calls to hang", len(hanging), func() int {
		n := 0
		for _, f := range hanging {
			n += f.fake.Calls(fakecloud.OpGetAlert) + f.fake.Calls(fakecloud.OpListAlerts)
		}
		return n
	})
	victim.expectReadySoon("while watches whose alert API hangs share its management host")
}

// (b) One namespace's watches hang on more hosts than the slots of all
// divided by the slots of one host (each host filled): they took every
// slot. A namespace now holds at most its bound, whatever hosts it names.
func TestFairnessOneNamespaceOnManyHangingHostsLeavesSlots(t *testing.T) {
	t.Parallel()
	hosts := allSlots/slotsPerHost + 2
	noisy := newNamedFixture(t, t.Name()+"-noisy")
	noisy.createSecrets()
	fakes := make([]*fakecloud.Server, hosts)
	for i := range fakes {
		fakes[i] = startHangingCloud(t, noisy)
		for j := range slotsPerHost {
			w := noisy.newWatch(fmt.Sprintf("host-%02d-%02d", i, j))
			w.Spec.ManagementAPI.URL = fakes[i].URL
			w.Spec.ServiceID = distinctService(j)
			noisy.create(w)
		}
	}
	waitForCalls(t, "the namespace's calls to hang", min(allSlots, slotsPerNamespace), func() int {
		n := 0
		for _, f := range fakes {
			n += f.Calls(fakecloud.OpListPipes)
		}
		return n
	})
	victim := newNamedFixture(t, t.Name()+"-victim")
	victim.expectReadySoon(fmt.Sprintf("while another namespace's %d watches hang on %d hosts", hosts*slotsPerHost, hosts))
}

// (c) One namespace creates 150 watches at once on a cloud of 200 ms: the
// slots were first come, first served, so another namespace's new watch on
// the same host waited for the 150 (10 s). The namespaces that wait now
// take turns.
func TestFairnessOneNamespacesBurstDoesNotDelayAnother(t *testing.T) {
	t.Parallel()
	const burst = 150
	victim := newNamedFixture(t, t.Name()+"-victim")
	for _, op := range []fakecloud.Operation{fakecloud.OpListPipes, fakecloud.OpListReversePrivateEndpoints} {
		victim.fake.SetFault(op, fakecloud.Fault{Latency: 200 * time.Millisecond})
	}
	busy := newNamedFixture(t, t.Name()+"-busy")
	shareCloud(victim.fake, busy)
	busy.createSecrets()
	for i := range burst {
		w := busy.newWatch(fmt.Sprintf("burst-%03d", i))
		w.Spec.ManagementAPI.URL = victim.fake.URL
		w.Spec.ServiceID = distinctService(i) // watches of one service would share a call
		busy.create(w)
	}
	waitForCalls(t, "the burst to call the cloud", min(slotsPerHost, slotsPerNamespace), func() int {
		return victim.fake.Calls(fakecloud.OpListPipes)
	})
	victim.expectReadySoon(fmt.Sprintf("while another namespace's %d new watches sync on its host", burst))
	t.Logf("%d of the burst's syncs had called the cloud by then", victim.fake.Calls(fakecloud.OpListPipes)-1)
}

// (d) On the one management host every tenant shares, one namespace's 20
// watches read services whose calls hang until the client gives up: they
// held every slot of the host. A namespace now holds at most its bound of
// it, and the host has room for more than one namespace's bound.
func TestFairnessHangingServicesOnTheSharedHostLeaveItsSlots(t *testing.T) {
	t.Parallel()
	victim := newNamedFixture(t, t.Name()+"-victim")
	noisy := newNamedFixture(t, t.Name()+"-noisy")
	shareCloud(victim.fake, noisy)
	for _, op := range []fakecloud.Operation{fakecloud.OpListPipes, fakecloud.OpListReversePrivateEndpoints} {
		victim.fake.SetFault(op, fakecloud.Fault{Hang: true, KeyID: noisy.keyID})
	}
	noisy.createSecrets()
	for i := range 20 {
		w := noisy.newWatch(fmt.Sprintf("hangs-%02d", i))
		w.Spec.ManagementAPI.URL = victim.fake.URL
		w.Spec.ServiceID = distinctService(i)
		noisy.create(w)
	}
	waitForCalls(t, "the namespace's calls to hang", min(slotsPerHost, slotsPerNamespace), func() int {
		return victim.fake.Calls(fakecloud.OpListPipes)
	})
	victim.expectReadySoon("while another namespace's 20 watches hang on the management host they share")
}

// expectReadySoon creates the Secrets and a new watch of the fixture's
// cloud, and fails unless it is Ready within victimReady.
func (f *fixture) expectReadySoon(while string) {
	f.t.Helper()
	f.createSecrets()
	start := time.Now()
	f.create(f.newWatch("new"))
	f.waitFor("new", victimReady, "Ready within "+victimReady.String()+" "+while, isReady)
	f.t.Logf("the new watch was Ready after %v %s", time.Since(start).Round(time.Millisecond), while)
}

// shareCloud lets tenant's credentials into cloud, so that its watches read
// cloud's services as another tenant of the same API.
func shareCloud(cloud *fakecloud.Server, tenant *fixture) {
	data := cloud.Data()
	data.MoreManagementKeys = append(data.MoreManagementKeys, fakecloud.ManagementKey{KeyID: tenant.keyID, KeySecret: tenant.keySecret})
	data.MoreAlertTokens = append(data.MoreAlertTokens, tenant.token)
	cloud.SetData(data)
}

// startHangingCloud starts a fake cloud whose management calls hang, for
// the fixture's credentials.
func startHangingCloud(t *testing.T, f *fixture) *fakecloud.Server {
	t.Helper()
	data := fakecloud.DefaultData()
	data.ManagementKey = fakecloud.ManagementKey{KeyID: f.keyID, KeySecret: f.keySecret}
	cloud := fakecloud.Start(data)
	t.Cleanup(cloud.Close)
	for _, op := range []fakecloud.Operation{fakecloud.OpListPipes, fakecloud.OpListReversePrivateEndpoints} {
		cloud.SetFault(op, fakecloud.Fault{Hang: true})
	}
	return cloud
}

// distinctService is the i-th of services that no two watches of a test
// share (watches of one service and key share their calls).
func distinctService(i int) string {
	return fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
}

// scaledDownKey makes fake enforce a management key budget of requests per
// 10 s (bursts of 2), and serve the default service's data under services
// more IDs (distinctService(0…services-1)), so that that many watches can
// share the key; it returns the limit and client budgets that keep to it.
func scaledDownKey(fake *fakecloud.Server, requests, services int) (ratebudget.RateLimit, *ratebudget.Store) {
	limit := ratebudget.RateLimit{Requests: requests, Per: 10 * time.Second, Burst: 2}
	fake.SetManagementBudget(fakecloud.Budget{Requests: limit.Requests, Window: limit.Per})
	service := fakecloud.DefaultData().Organizations[fakecloud.DefaultOrganizationID][fakecloud.DefaultServiceID]
	for i := range services {
		fake.SetService(fakecloud.DefaultOrganizationID, distinctService(i), service)
	}
	return limit, cloudapi.NewBudgets(limit, limit)
}

// waitForCalls waits until calls counts at least want, for up to 20 s.
func waitForCalls(t *testing.T, what string, want int, calls func() int) {
	t.Helper()
	waitForCallsWithin(t, what, want, 20*time.Second, calls)
}

// waitForCallsWithin is waitForCalls for up to within.
func waitForCallsWithin(t *testing.T, what string, want int, within time.Duration, calls func() int) {
	t.Helper()
	deadline := time.Now().Add(within)
	for calls() < want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d calls after %v", what, calls(), want, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// (e) Issue 27: one namespace rewrites, without pause, a Secret its 60
// watches reference; another namespace's watch, whose first sync failed,
// retries at the periodic level BackoffBase later. Each rewrite queued the
// 60 at the Secret level, and the levels were strict: the retry waited for
// all of them, rewrite after rewrite, for as long as the churn went on. A
// Secret's change now puts at most the namespace's read slots' worth of its
// watches ahead of another namespace's periodic work: the retry comes
// within 2 s of its time.
func TestFairnessSecretChurnDoesNotStarveAnothersRefresh(t *testing.T) {
	t.Parallel()
	const watches = 60
	busy := newNamedFixture(t, t.Name()+"-busy")
	busy.createSecrets()
	for i := range watches {
		busy.create(busy.newWatch(fmt.Sprintf("churned-%02d", i)))
	}
	victim := newNamedFixture(t, t.Name()+"-victim")
	victim.faultyWatch("refresh", fakecloud.OpListPipes, fakecloud.Fault{Status: http.StatusServiceUnavailable})
	victim.waitFor("refresh", 20*time.Second, "the first sync failed",
		conditionIs(swv1.ConditionPipesSynced, metav1.ConditionFalse, swv1.ReasonServerError))
	failedAt := time.Now()
	victim.fake.ClearFault(fakecloud.OpListPipes)

	stop := make(chan struct{})
	churned := make(chan int)
	go func() {
		rewrites := 0
		defer func() { churned <- rewrites }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				secret := busy.managementSecret()
				secret.StringData = nil
				patch := []byte(fmt.Sprintf(`{"metadata":{"labels":{"rewrite":"%d"}}}`, rewrites))
				if err := env.Client.Patch(busy.ctx, secret, client.RawPatch(types.MergePatchType, patch)); err != nil {
					t.Errorf("rewriting the Secret: %v", err)
					return
				}
				rewrites++
			}
		}
	}()
	within := pacing.BackoffBase + 2*time.Second
	deadline := failedAt.Add(within)
	for !isReady(victim.get("refresh")) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	close(stop)
	rewrites := <-churned
	if w := victim.get("refresh"); !isReady(w) {
		t.Fatalf("the retry was not served within %v of the failed sync while another namespace rewrote its Secret %d times; status:\n%s",
			within, rewrites, indentedJSON(w.Status))
	}
	t.Logf("Ready %v after the failed sync, the retry due at %v, while another namespace rewrote its Secret %d times",
		time.Since(failedAt).Round(time.Millisecond), pacing.BackoffBase, rewrites)
}
