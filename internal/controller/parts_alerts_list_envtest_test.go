package controller_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// suiteAlertListRetry is how long the suite's manager reads a host without
// an alert list route one alert at a time before it tries the list again.
const suiteAlertListRetry = 2 * time.Second

// absentAlertID is an alert no host of the fake serves.
const absentAlertID = "65f1a2b3c4d5e6f7081929ff"

// followed is what a user reads of status.alerts: each entry's id, why it
// is followed, and its error, or its name and displayName as status shows
// them (each only when present).
func followed(w *swv1.ServiceWatch) []string {
	var out []string
	for _, a := range w.Status.Alerts {
		what := []string{a.ID, a.SelectedBy}
		switch {
		case a.Error != "":
			what = append(what, a.Error)
		default:
			if a.Name != nil {
				what = append(what, "name="+*a.Name)
			}
			if a.DisplayName != nil {
				what = append(what, "displayName="+*a.DisplayName)
			}
		}
		out = append(out, strings.Join(what, " "))
	}
	return out
}

func expectFollowed(t *testing.T, w *swv1.ServiceWatch, want ...string) {
	t.Helper()
	if got := followed(w); !slices.Equal(got, want) {
		t.Errorf("status.alerts of %s:\n got %q\nwant %q", w.Name, got, want)
	}
}

// Alerts of a managed service come from the management API with the
// management key: no alertApi, no alert Secret, no call to an alert host;
// the key reads each service's list once, and the watches pick their IDs
// and their selectors' matches from it.
func TestAlertsFromTheManagementAPI(t *testing.T) {
	f := newFixture(t)
	f.create(f.managementSecret()) // and no alert Secret
	named := f.newWatch("named", fakecloud.DefaultAlertID, fakecloud.ServiceOnlyAlertID)
	named.Spec.AlertsFrom = swv1.AlertsFromManagementAPI
	named.Spec.AlertSelector = &swv1.AlertSelector{Tags: []string{"errors"}}
	named.Spec.AlertAPI = nil
	f.create(named)
	every := f.newWatch("every")
	every.Spec.AlertsFrom = swv1.AlertsFromManagementAPI
	every.Spec.AlertSelector = &swv1.AlertSelector{All: true}
	f.create(every)

	w := f.waitFor("named", 20*time.Second, "Ready", isReady)
	expectFollowed(t, w,
		fakecloud.DefaultAlertID+" ID name=ingest_lag displayName=Ingest lag above 12.25 s",
		fakecloud.ServiceOnlyAlertID+" ID displayName=Pipe paused", // its name is null
		fakecloud.SecondAlertID+" Selector name=Error rate")
	if w.Status.AlertsReadBy != swv1.AlertsReadByList || w.Status.Summary.Alerts != 3 {
		t.Errorf("alertsReadBy %q, summary.alerts %d: want List and 3", w.Status.AlertsReadBy, w.Status.Summary.Alerts)
	}
	w = f.waitFor("every", 20*time.Second, "Ready", isReady)
	expectFollowed(t, w,
		fakecloud.DefaultAlertID+" Selector name=ingest_lag displayName=Ingest lag above 12.25 s",
		fakecloud.SecondAlertID+" Selector name=Error rate",
		fakecloud.CurrentShapeAlertID+" Selector displayName=Ingest latency out of range",
		fakecloud.ServiceOnlyAlertID+" Selector displayName=Pipe paused")
	// The one label of an alert for a person: its name, else its
	// displayName.
	metrics := metricsText(t)
	for id, label := range map[string]string{fakecloud.DefaultAlertID: "ingest_lag", fakecloud.ServiceOnlyAlertID: "Pipe paused", fakecloud.CurrentShapeAlertID: "Ingest latency out of range"} {
		if want := fmt.Sprintf(`alert_id=%q,alert_name=%q,namespace=%q,servicewatch="every"`, id, label, f.ns); !strings.Contains(metrics, want) {
			t.Errorf("servicewatch_alert_info has no series with %s:\n%s", want, grepLines(metrics, "servicewatch_alert_info{"))
		}
	}

	key := fakecloud.ManagementKey{KeyID: f.keyID, KeySecret: f.keySecret}.Fingerprint()
	lists := 0
	for _, c := range f.fake.CallLog() {
		switch c.Operation {
		case fakecloud.OpListServiceAlerts:
			lists++
			if c.KeyFingerprint != key || c.ServiceID != fakecloud.DefaultServiceID {
				t.Errorf("the service's alerts were listed with key %q for service %q, want the management key %q", c.KeyFingerprint, c.ServiceID, key)
			}
		case fakecloud.OpGetAlert, fakecloud.OpListAlerts, fakecloud.OpGetServiceAlert:
			t.Errorf("a call %s %s: the alerts come from the service's list", c.Operation, c.Path)
		}
	}
	// A list keeps what the watches that registered before its read use
	// (issue 37): "every", created just after "named", may find the first
	// read begun without its selector and read once more; never more.
	if lists < 1 || lists > 2 {
		t.Errorf("%d list calls of the service's alerts for two watches of it, want 1, or 2 when the second came after the first read began", lists)
	}
}

// Watches on one alert host and token share one read of its list: six
// watches of two or three alert IDs each cost one call, not one per ID; an
// ID the list lacks is that entry's NotFound, exactly as a 404 of its own
// GET is, and the other entries stay.
func TestAlertListIsSharedByTheWatchesOfAToken(t *testing.T) {
	f := newFixture(t)
	f.createSecrets()
	names := []string{"w0", "w1", "w2", "w3", "w4", "w5"}
	for _, name := range names {
		f.create(f.newWatch(name, fakecloud.DefaultAlertID, fakecloud.SecondAlertID, fakecloud.CurrentShapeAlertID))
	}
	f.create(f.newWatch("gone", fakecloud.DefaultAlertID, absentAlertID))
	for _, name := range names {
		w := f.waitFor(name, 20*time.Second, "Ready", isReady)
		if w.Status.AlertsReadBy != swv1.AlertsReadByList || len(w.Status.Alerts) != 3 {
			t.Errorf("%s: alertsReadBy %q and %d alerts, want List and 3", name, w.Status.AlertsReadBy, len(w.Status.Alerts))
		}
	}
	w := f.waitFor("gone", 20*time.Second, "AlertsSynced False", conditionIs(swv1.ConditionAlertsSynced, metav1.ConditionFalse, swv1.ReasonNotFound))
	expectFollowed(t, w, fakecloud.DefaultAlertID+" ID name=Ingest lag above 12.25 s",
		absentAlertID+` ID NotFound: the host's list of 3 alerts has no alert "`+absentAlertID+`"; check the ID in spec.alertIds`)
	if c := meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionAlertsSynced); !strings.Contains(c.Message, "1 of 2 alerts failed: "+absentAlertID) {
		t.Errorf("AlertsSynced says %q, want it to name the absent ID", c.Message)
	}
	if n, gets := f.fake.Calls(fakecloud.OpListAlerts), f.fake.Calls(fakecloud.OpGetAlert); n != 1 || gets != 0 {
		t.Errorf("%d list calls and %d single GETs for 7 watches of 20 alert IDs on one token, want 1 list call", n, gets)
	}
}

// A host without a list route (404, Express's Cannot GET) is read one ID
// at a time, and status says so; a selector there fails with a reason
// that says what to do. Once the host gains its list route the manager
// notices and reads the list again.
func TestAlertHostWithoutAListRouteAndItsUpgrade(t *testing.T) {
	f := newFixture(t)
	f.fake.SetAlertListRoute(fakecloud.AlertListNone)
	f.createSecrets()
	f.create(f.newWatch("old", fakecloud.DefaultAlertID, fakecloud.SecondAlertID))
	sel := f.newWatch("selector")
	sel.Spec.AlertAPI = &swv1.AlertAPISpec{URL: f.fake.URL, SecretRef: swv1.SecretReference{Name: "alerts-token"}}
	sel.Spec.AlertSelector = &swv1.AlertSelector{Name: "Ingest*"}
	f.create(sel)

	w := f.waitFor("old", 20*time.Second, "Ready", isReady)
	if w.Status.AlertsReadBy != swv1.AlertsReadOneByOne || len(w.Status.Alerts) != 2 {
		t.Errorf("alertsReadBy %q, %d alerts: want OneByOne and 2", w.Status.AlertsReadBy, len(w.Status.Alerts))
	}
	if gets := f.fake.Calls(fakecloud.OpGetAlert); gets < 2 {
		t.Errorf("%d single GETs on a host without a list route, want one per ID", gets)
	}
	w = f.waitFor("selector", 20*time.Second, "ListNotServed", conditionIs(swv1.ConditionAlertsSynced, metav1.ConditionFalse, swv1.ReasonListNotServed))
	if c := meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionAlertsSynced); !strings.Contains(c.Message, "spec.alertSelector needs a host that lists alerts") {
		t.Errorf("AlertsSynced says %q, want it to say the selector needs a listing host", c.Message)
	}
	if !conditionIs(swv1.ConditionStalled, metav1.ConditionTrue, swv1.ReasonListNotServed)(w) {
		t.Errorf("a selector on a host without a list is not Stalled: %v", w.Status.Conditions)
	}

	f.fake.SetAlertListRoute(fakecloud.AlertListPaged)
	// The manager's memory of the host's answer ages: real time, as the
	// suite's manager (shared by every test) keeps it on the real clock,
	// for suiteAlertListRetry (10 minutes in production).
	time.Sleep(suiteAlertListRetry)
	lists := f.fake.Calls(fakecloud.OpListAlerts)
	w = f.requestSyncAndWait("old")
	if w.Status.AlertsReadBy != swv1.AlertsReadByList || f.fake.Calls(fakecloud.OpListAlerts) == lists {
		t.Errorf("after the host gained its list route: alertsReadBy %q, %d list calls before and after", w.Status.AlertsReadBy, lists)
	}
	f.requestSyncAndWait("selector")
	w = f.waitFor("selector", 20*time.Second, "Ready", isReady)
	expectFollowed(t, w, fakecloud.DefaultAlertID+" Selector name=Ingest lag above 12.25 s",
		fakecloud.CurrentShapeAlertID+" Selector name=Ingest latency out of range")
}

// A list page that fails fails the alert part as a single GET does: the
// last data stays, and the condition names the call and the cloud's words.
// A host that ignores offset repeats its first page: paging stops there and
// the condition says so, with the alerts read shown.
func TestAlertListPagesThatFailOrRepeat(t *testing.T) {
	f := newFixture(t)
	f.readyWatch("paged", fakecloud.DefaultAlertID)

	f.fake.SetFault(fakecloud.OpListAlerts, fakecloud.Fault{Status: 503, Body: `{"message":"alert store unavailable"}`})
	w := f.requestSyncAndWait("paged")
	c := meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionAlertsSynced)
	if c.Reason != swv1.ReasonServerError || !strings.Contains(c.Message, "list alerts") || !strings.Contains(c.Message, "alert store unavailable") {
		t.Errorf("AlertsSynced %s %q: want ServerError naming the list call and the cloud's words", c.Reason, c.Message)
	}
	expectFollowed(t, w, fakecloud.DefaultAlertID+" ID name=Ingest lag above 12.25 s") // the last data stays
	f.fake.ClearFaults()

	many := f.fake.Data()
	for i := range 1200 {
		many.Alerts[fmt.Sprintf("66%022d", i)] = map[string]any{"name": fmt.Sprintf("filler %d", i), "state": "OK"}
	}
	f.fake.SetData(many)
	f.fake.SetAlertListRoute(fakecloud.AlertListIgnoresOffset)
	w = f.requestSyncAndWait("paged")
	c = meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionAlertsSynced)
	if c.Reason != swv1.ReasonInvalidResponse || !strings.Contains(c.Message, "paging the host's alert list stopped before its end") || !strings.Contains(c.Message, "repeat") {
		t.Errorf("AlertsSynced %s %q: want InvalidResponse saying paging stopped at a repeated page", c.Reason, c.Message)
	}
}

// Watches of different services on one alert token share one read of the
// host's list per interval and sync together just after it: a change made
// to an alert between two of their rounds is in every watch's status at
// its first sync after the change, that is at its next interval, not one
// interval later for the watches whose phase fell after the read. (Before,
// each service's watches kept a phase of their own, spread over the
// interval, and those that synced after the change reused the read made
// before it.)
func TestEveryWatchOfAnAlertListSeesAChangeAtItsNextSync(t *testing.T) {
	t.Parallel()
	const (
		n        = 6
		interval = 30 * time.Second
		changed  = "paused"
	)
	f := newFixture(t)
	data := f.fake.Data()
	for i := range n {
		data.Organizations[fakecloud.DefaultOrganizationID][serviceOf(i)] = fakecloud.Service{}
	}
	f.fake.SetData(data)
	f.createSecrets()
	for i := range n {
		// Created 2 s apart, so that the services' first syncs spread: real
		// time, as the phases tested are the suite manager's, on the real
		// clock.
		w := f.newWatch(fmt.Sprintf("w%d", i), fakecloud.DefaultAlertID)
		w.Spec.ServiceID, w.Spec.Interval = serviceOf(i), metav1.Duration{Duration: interval}
		f.create(w)
		time.Sleep(2 * time.Second)
	}
	created := time.Now()
	for i := range n {
		f.waitFor(fmt.Sprintf("w%d", i), 20*time.Second, "Ready", isReady)
	}

	// The first list read of a periodic round, then a change well after it.
	var read time.Time
	for deadline := created.Add(interval + 10*time.Second); read.IsZero(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no periodic list read within an interval and 10 s of the last watch's creation")
		}
		if lists := f.callTimes(fakecloud.OpListAlerts); len(lists) > 0 && slices.MaxFunc(lists, time.Time.Compare).After(created.Add(10*time.Second)) {
			read = slices.MaxFunc(lists, time.Time.Compare)
		}
	}
	// The change comes 5 s after the round's read, on the manager's real
	// clock: what is tested is which later syncs see it.
	time.Sleep(time.Until(read.Add(5 * time.Second)))
	data = f.fake.Data()
	data.Alerts[fakecloud.DefaultAlertID]["state"] = changed
	f.fake.SetData(data)
	change := time.Now()

	var last time.Time
	for i := range n {
		name := fmt.Sprintf("w%d", i)
		began := f.firstSyncAfter(serviceOf(i), change, interval+10*time.Second)
		if began.After(last) {
			last = began
		}
		w := f.waitFor(name, 10*time.Second, "the sync that began "+began.Format(time.StampMilli), func(w *swv1.ServiceWatch) bool {
			return w.Status.LastSyncTime != nil && !w.Status.LastSyncTime.Time.Before(began.Truncate(time.Second))
		})
		if state := ptr.Deref(w.Status.Alerts[0].State, ""); state != changed {
			t.Errorf("%s: its first sync after the change (%.1f s after it, the list read %.1f s before it) shows the alert %q, want %q",
				name, began.Sub(change).Seconds(), change.Sub(read).Seconds(), state, changed)
		}
		t.Logf("%s: its first sync after the change began %.1f s after it (%.2f intervals)", name, began.Sub(change).Seconds(), began.Sub(change).Seconds()/interval.Seconds())
	}
	lists := 0
	for _, at := range f.callTimes(fakecloud.OpListAlerts) {
		if !at.Before(read) && !at.After(last) {
			lists++
		}
	}
	if lists != 2 {
		t.Errorf("%d list reads from the round before the change to the last sync after it, want 2 (one per interval)", lists)
	}
}

// serviceOf is the ID of the i-th of a test's services.
func serviceOf(i int) string { return fmt.Sprintf("5e7a1c00-0000-4000-8000-%012d", i) }

// firstSyncAfter is when the first sync of the service's watch after at
// began: its first pipes call, waited for up to within.
func (f *fixture) firstSyncAfter(service string, at time.Time, within time.Duration) time.Time {
	f.t.Helper()
	for deadline := at.Add(within); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, c := range f.fake.CallLog() {
			if c.Operation == fakecloud.OpListPipes && c.ServiceID == service && c.Time.After(at) {
				return c.Time
			}
		}
	}
	f.t.Fatalf("no sync of service %s within %v of %s", service, within, at.Format(time.StampMilli))
	return time.Time{}
}

// A tenant's watch naming a service the management API does not have gets
// that API's own 404 ("organization or service not found") from the
// service's alert list: the tenant's NotFound, not a host without a list
// route. A victim in another namespace, with a key and a service of its
// own on the same host, keeps reading its alerts by list, and its selector
// keeps working. Before, "no list route" was remembered per API and URL
// and any 404 counted: the victim's next sync was ListNotServed without a
// list call. The test's manager remembers a host's answer for an hour, so
// that the victim's sync comes well within it.
func TestOneTenantsNotFoundLeavesTheListOnForTheHostsOtherTenants(t *testing.T) {
	t.Parallel()
	victim := newNamedFixture(t, t.Name()+"-victim")
	tenant := newNamedFixture(t, t.Name()+"-tenant")
	data := victim.fake.Data()
	data.MoreManagementKeys = append(data.MoreManagementKeys, fakecloud.ManagementKey{KeyID: tenant.keyID, KeySecret: tenant.keySecret})
	victim.fake.SetData(data)
	tenant.fake = victim.fake // one host, a key each
	fast := ratebudget.RateLimit{Requests: 1000, Per: time.Second, Burst: 1000}
	startOwnManager(t, "routes", cloudapi.NewBudgets(fast, fast), func(_ ctrl.Manager, r *controller.ServiceWatchReconciler) {
		r.Options.AlertListRetry = time.Hour
	})
	selecting := func(f *fixture, name, service string) {
		w := f.newWatch(name)
		w.Labels = map[string]string{ownManagerLabel: "routes"}
		w.Spec.ServiceID, w.Spec.AlertsFrom = service, swv1.AlertsFromManagementAPI
		w.Spec.AlertSelector = &swv1.AlertSelector{All: true}
		f.create(f.managementSecret())
		f.create(w)
	}
	selecting(victim, "victim", fakecloud.DefaultServiceID)
	victim.waitFor("victim", 20*time.Second, "Ready, its alerts read by list", func(w *swv1.ServiceWatch) bool {
		return isReady(w) && w.Status.AlertsReadBy == swv1.AlertsReadByList
	})

	selecting(tenant, "absent", distinctService(404))
	absent := tenant.waitFor("absent", 20*time.Second, "AlertsSynced False", func(w *swv1.ServiceWatch) bool {
		return meta.IsStatusConditionFalse(w.Status.Conditions, swv1.ConditionAlertsSynced)
	})
	victimLists := func() (n int) {
		for _, c := range victim.fake.CallLog() {
			if c.Operation == fakecloud.OpListServiceAlerts && c.ServiceID == fakecloud.DefaultServiceID {
				n++
			}
		}
		return n
	}
	before := victimLists()
	w := victim.requestSyncAndWait("victim")
	if c := meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionAlertsSynced); w.Status.AlertsReadBy != swv1.AlertsReadByList || c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("the victim after the tenant's 404: alertsReadBy %q, AlertsSynced %+v; want List and True", w.Status.AlertsReadBy, c)
	}
	if after := victimLists(); after == before {
		t.Error("the victim's sync made no list call of its service's alerts")
	}
	if c := meta.FindStatusCondition(absent.Status.Conditions, swv1.ConditionAlertsSynced); c.Reason != swv1.ReasonNotFound {
		t.Errorf("the tenant's watch of a service that does not exist: AlertsSynced %s %q, want NotFound", c.Reason, c.Message)
	}
}

// grepLines are the lines of text that contain s.
func grepLines(text, s string) string {
	var out []string
	for line := range strings.Lines(text) {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}

// pagedAlerts are n alerts of the management API's list of a service, ids
// in order, each a filler in state OK.
func pagedAlerts(n int) []map[string]any {
	alerts := make([]map[string]any, n)
	for i := range alerts {
		alerts[i] = map[string]any{"id": fmt.Sprintf("77%022d", i), "name": fmt.Sprintf("filler %d", i), "state": "OK"}
	}
	return alerts
}

// Issue 39: a service with 1,200 alerts on the management API, two pages
// of the list, on a key at the real budget (10 calls per 10 s, bursts of
// 2) shared with a small watch: the big watch shows every alert, the last
// of page two among them, within one interval of its creation, and the
// small watch keeps its interval meanwhile. Before, the first page went
// with the sync's calls and the second asked the budget at call time, was
// refused ("waiting 2s for room"), deferred the whole part, and the next
// sync began at offset 0 again: the watch never showed an alert.
func TestAManagementAlertListOfManyPagesCompletesWithinAnInterval(t *testing.T) {
	t.Parallel()
	const every = 30 * time.Second // the least interval a watch may ask for
	f := newFixture(t)
	_, budgets := scaledDownKey(f.fake, 10, 2) // the real key's budget, two services
	startOwnManager(t, "mgmtpaging", budgets)
	f.fake.SetServiceAlerts(fakecloud.DefaultOrganizationID, distinctService(0), pagedAlerts(1200))
	f.fake.SetServiceAlerts(fakecloud.DefaultOrganizationID, distinctService(1), pagedAlerts(12))
	last := fmt.Sprintf("77%022d", 1199)
	watch := func(name string, service int, alertIDs ...string) {
		w := f.newWatch(name)
		w.Labels = map[string]string{ownManagerLabel: "mgmtpaging"}
		w.Spec.ServiceID = distinctService(service)
		w.Spec.AlertIDs = alertIDs
		w.Spec.AlertsFrom = swv1.AlertsFromManagementAPI
		w.Spec.AlertSelector = &swv1.AlertSelector{All: true}
		w.Spec.Interval = metav1.Duration{Duration: every}
		f.create(w)
	}
	f.create(f.managementSecret())
	created := time.Now()
	watch("small", 1)
	watch("big", 0, last)

	big := f.waitFor("big", every, "Ready with its 1,200 alerts within one interval", func(w *swv1.ServiceWatch) bool {
		return isReady(w) && w.Status.Summary.Alerts == 1200
	})
	t.Logf("the 1,200-alert watch was Ready %v after its creation", time.Since(created).Round(100*time.Millisecond))
	if i := slices.IndexFunc(big.Status.Alerts, func(a swv1.AlertStatus) bool { return a.ID == last }); i < 0 || ptr.Deref(big.Status.Alerts[i].Name, "") != "filler 1199" {
		t.Errorf("the alert named in spec, the last of page two, is not in status as the cloud lists it: %s", indentedJSON(big.Status.Alerts[:min(3, len(big.Status.Alerts))]))
	}

	// A sync the user asks for reads the list afresh: with every page
	// reserved now (see below).
	f.requestSync("big", time.Now().Format(time.RFC3339Nano))
	secondPage := func() int {
		n := 0
		for _, c := range f.fake.CallLog() {
			if c.Operation == fakecloud.OpListServiceAlerts && c.ServiceID == distinctService(0) && !strings.Contains(c.Query, "offset=0") {
				n++
			}
		}
		return n
	}
	waitForCalls(t, "the big watch's second whole read", 2, secondPage)

	// Beside it, the small watch keeps its interval; the big one stays
	// complete. Real time: what is observed is one and a half intervals of
	// the manager's schedule, on the real clock (30 s is the least interval
	// a watch may ask for).
	time.Sleep(time.Until(created.Add(every * 3 / 2)))
	big = f.get("big")
	if c := meta.FindStatusCondition(big.Status.Conditions, swv1.ConditionAlertsSynced); c == nil || c.Status != metav1.ConditionTrue || big.Status.Summary.Alerts != 1200 {
		t.Errorf("the big watch after one more round: AlertsSynced %+v, %d alerts; want True and 1200", c, big.Status.Summary.Alerts)
	}
	var small, firstPages, secondPages []time.Time
	for _, c := range f.fake.CallLog() {
		switch {
		case c.Operation == fakecloud.OpListPipes && c.ServiceID == distinctService(1) && c.Status == 200:
			small = append(small, c.Time)
		case c.Operation == fakecloud.OpListServiceAlerts && c.ServiceID == distinctService(0) && strings.Contains(c.Query, "offset=0"):
			firstPages = append(firstPages, c.Time)
		case c.Operation == fakecloud.OpListServiceAlerts && c.ServiceID == distinctService(0):
			secondPages = append(secondPages, c.Time)
		}
		if c.Status == 429 {
			t.Errorf("the cloud answered 429 at %v", c.Time)
		}
	}
	if len(small) < 2 {
		t.Fatalf("the small watch synced %d times in %v at an interval of %v", len(small), time.Since(created), every)
	}
	for i := 1; i < len(small); i++ {
		if period := small[i].Sub(small[i-1]); period > every*11/10 {
			t.Errorf("the small watch's period %d was %v: want its interval %v within 10 %%", i, period, every)
		}
	}
	// Once a read has shown how many pages the list takes, the next sync
	// reserves them all with its other calls: its second page follows its
	// first at once, where the first read's waited for room.
	if len(firstPages) < 2 || len(secondPages) < 2 {
		t.Fatalf("the big watch's list was read from offset 0 %d times and from page two %d times in %v: want two whole reads", len(firstPages), len(secondPages), time.Since(created))
	}
	var gaps []time.Duration
	for i := range min(len(firstPages), len(secondPages)) {
		gaps = append(gaps, secondPages[i].Sub(firstPages[i]).Round(10*time.Millisecond))
	}
	if second := gaps[1]; second > time.Second {
		t.Errorf("the second read's second page came %v after its first: want it reserved with the sync, at once", second)
	}
	t.Logf("the small watch synced %d times; the big watch's list read %d times, page two after page one by %v", len(small), len(firstPages), gaps)
}

// Issue 39: a list that outgrows what its key admits in one sync (three
// pages beside the two management calls, on a key of 4 calls per 10 s)
// says why it waits, and the watch keeps its last complete list, never a
// part of the new one or none.
func TestAManagementAlertListThatCannotFinishKeepsItsLastCompleteList(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, budgets := scaledDownKey(f.fake, 4, 1)
	startOwnManager(t, "mgmtpaging-unfinished", budgets)
	f.fake.SetServiceAlerts(fakecloud.DefaultOrganizationID, distinctService(0), pagedAlerts(1200))
	w := f.newWatch("big")
	w.Labels = map[string]string{ownManagerLabel: "mgmtpaging-unfinished"}
	w.Spec.ServiceID = distinctService(0)
	w.Spec.AlertsFrom = swv1.AlertsFromManagementAPI
	w.Spec.AlertSelector = &swv1.AlertSelector{All: true}
	w.Spec.Interval = metav1.Duration{Duration: 30 * time.Second}
	f.create(f.managementSecret())
	f.create(w)
	f.waitFor("big", 30*time.Second, "Ready with its 1,200 alerts", func(w *swv1.ServiceWatch) bool {
		return isReady(w) && w.Status.Summary.Alerts == 1200
	})

	f.fake.SetServiceAlerts(fakecloud.DefaultOrganizationID, distinctService(0), pagedAlerts(2500))
	f.requestSync("big", time.Now().Format(time.RFC3339Nano)) // read afresh, not the list read for the last sync
	got := f.waitFor("big", 20*time.Second, "waiting for room for the list's third page", func(w *swv1.ServiceWatch) bool {
		c := meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionAlertsSynced)
		return c != nil && c.Reason == swv1.ReasonRateLimited
	})
	c := meta.FindStatusCondition(got.Status.Conditions, swv1.ConditionAlertsSynced)
	for _, words := range []string{"page 3 of 3 of the alert list", "rate budget", "last complete list"} {
		if !strings.Contains(c.Message, words) {
			t.Errorf("AlertsSynced %s %q: want it to say %q", c.Reason, c.Message, words)
		}
	}
	t.Logf("AlertsSynced %s: %s", c.Reason, c.Message)
	if got.Status.Summary.Alerts != 1200 || len(got.Status.Alerts) == 0 {
		t.Errorf("a list that could not finish left %d alerts in status (summary %d): want the last complete list's 1200", len(got.Status.Alerts), got.Status.Summary.Alerts)
	}
	for _, call := range f.fake.CallLog() {
		if call.Status == 429 {
			t.Errorf("the cloud answered 429 at %v", call.Time)
		}
	}
}
