package controller_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// normalize turns any value into what its JSON decodes to, so that the
// fake's data and the status read back can be compared field by field.
func normalize(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// expectedPipes is the fake's pipes as the status must show them: sorted by
// id, the connection string redacted, the MongoDB URI (which has no
// credentials to scrub) also read into its host and database, and the kind
// of source named (the fake sends the members of an object in sorted order).
func expectedPipes(t *testing.T, fake *fakecloud.Server) any {
	pipes := asList(t, normalize(t, fake.Data().Organizations[fakecloud.DefaultOrganizationID][fakecloud.DefaultServiceID].Pipes))
	for _, p := range pipes {
		source := asObject(t, asObject(t, p)["source"])
		if os, ok := source["objectStorage"].(map[string]any); ok && os["connectionString"] != nil {
			os["connectionString"] = "<redacted>"
		}
		if m, ok := source["mongodb"].(map[string]any); ok {
			m["host"], m["database"] = fakecloud.MongoDBHost, fakecloud.MongoDBDatabase
		}
		kinds := slices.Sorted(maps.Keys(source))
		asObject(t, p)["sourceKind"] = strings.Join(kinds, ",")
	}
	idOf := func(p any) string {
		id, ok := asObject(t, p)["id"].(string)
		if !ok {
			t.Fatalf("a pipe of the fake has no string id: %v", p)
		}
		return id
	}
	sort.Slice(pipes, func(i, j int) bool { return idOf(pipes[i]) < idOf(pipes[j]) })
	return pipes
}

// sinceChecked is items (status's raw list) with each item's since checked
// (a time every item read carries, issue 40) and then removed, so that the
// rest compares with the cloud's data.
func sinceChecked(t *testing.T, items any) any {
	t.Helper()
	list, _ := items.([]any)
	for _, item := range list {
		m, _ := item.(map[string]any)
		since, _ := m["since"].(string)
		if _, err := time.Parse(time.RFC3339, since); err != nil {
			t.Errorf("item %v has no since: %v", m["id"], err)
		}
		delete(m, "since")
	}
	return items
}

func diffJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s differ\n got: %s\nwant: %s", what, indentedJSON(got), indentedJSON(want))
	}
}

// 1. A full sync: every field of the fake's data arrives in status.
func TestFullSyncShowsEveryField(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.createSecrets()
	f.create(f.newWatch("analytics", fakecloud.DefaultAlertID, fakecloud.SecondAlertID))

	w := f.waitFor("analytics", 20*time.Second, "Ready", isReady)

	status := f.rawStatus("analytics")
	diffJSON(t, "pipes", normalize(t, sinceChecked(t, status["pipes"])), expectedPipes(t, f.fake))
	diffJSON(t, "reverse private endpoints", normalize(t, sinceChecked(t, status["reversePrivateEndpoints"])),
		normalize(t, f.fake.Data().Organizations[fakecloud.DefaultOrganizationID][fakecloud.DefaultServiceID].ReversePrivateEndpoints))
	var wantAlerts []any
	for _, id := range []string{fakecloud.DefaultAlertID, fakecloud.SecondAlertID} {
		a := maps.Clone(f.fake.Data().Alerts[id])
		a["selectedBy"] = swv1.SelectedByID // named in spec.alertIds
		wantAlerts = append(wantAlerts, a)
	}
	diffJSON(t, "alerts", normalize(t, sinceChecked(t, status["alerts"])), normalize(t, wantAlerts))

	if got := string(mustJSON(t, status)); strings.Contains(got, fakecloud.FakeConnectionString) {
		t.Error("the object-storage connection string reached status")
	}
	wantSummary := swv1.Summary{Pipes: 8, PipesByState: map[string]int32{"Running": 6, "Stopped": 2}, ReversePrivateEndpoints: 1, Alerts: 2}
	if !reflect.DeepEqual(*w.Status.Summary, wantSummary) {
		t.Errorf("summary = %+v, want %+v", *w.Status.Summary, wantSummary)
	}
	for _, c := range []string{swv1.ConditionPipesSynced, swv1.ConditionReversePrivateEndpointsSynced, swv1.ConditionAlertsSynced} {
		if !conditionIs(c, metav1.ConditionTrue, swv1.ReasonSynced)(w) {
			t.Errorf("%s is not True/Synced: %+v", c, meta.FindStatusCondition(w.Status.Conditions, c))
		}
	}
	for _, c := range []string{swv1.ConditionReconciling, swv1.ConditionStalled, swv1.ConditionStatusTruncated} {
		if meta.FindStatusCondition(w.Status.Conditions, c) != nil {
			t.Errorf("%s is present on a Ready watch", c)
		}
	}
	if w.Status.ObservedGeneration != w.Generation || w.Status.LastSyncTime == nil {
		t.Errorf("observedGeneration %d (generation %d), lastSyncTime %v", w.Status.ObservedGeneration, w.Generation, w.Status.LastSyncTime)
	}
	if lists, gets := f.fake.Calls(fakecloud.OpListAlerts), f.fake.Calls(fakecloud.OpGetAlert); lists != 1 || gets != 0 {
		t.Errorf("the fake saw %d alert list calls and %d single GETs, want one list", lists, gets)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// 2. Missing Secret → Stalled SecretNotFound, and creating it recovers
// without waiting for the interval; a missing key → SecretKeyMissing.
func TestMissingSecret(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(f.newWatch("no-secret"))

	w := f.waitFor("no-secret", 20*time.Second, "Stalled SecretNotFound",
		conditionIs(swv1.ConditionStalled, metav1.ConditionTrue, swv1.ReasonSecretNotFound))
	if !conditionIs(swv1.ConditionReady, metav1.ConditionFalse, swv1.ReasonSecretNotFound)(w) {
		t.Errorf("Ready is not False/SecretNotFound: %+v", meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionReady))
	}
	if msg := meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionStalled).Message; !strings.Contains(msg, f.ns+"/warehouse-api-key") {
		t.Errorf("Stalled message %q does not name the Secret", msg)
	}
	if calls := f.fake.Calls(fakecloud.OpListPipes); calls != 0 {
		t.Errorf("the cloud was called %d times without credentials", calls)
	}

	// The interval is 5m: recovering within seconds proves the Secret's
	// creation triggered the sync.
	f.create(f.managementSecret())
	w = f.waitFor("no-secret", 15*time.Second, "Ready after the Secret was created", isReady)
	if meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionStalled) != nil {
		t.Error("Stalled is still present after recovery")
	}

	t.Run("missing key", func(t *testing.T) {
		f := newFixture(t)
		secret := f.managementSecret()
		delete(secret.StringData, "keySecret")
		f.create(secret)
		f.create(f.newWatch("no-key"))
		w := f.waitFor("no-key", 20*time.Second, "Stalled SecretKeyMissing",
			conditionIs(swv1.ConditionStalled, metav1.ConditionTrue, swv1.ReasonSecretKeyMissing))
		if msg := meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionPipesSynced).Message; !strings.Contains(msg, `"keySecret"`) {
			t.Errorf("message %q does not name the missing key", msg)
		}
	})
}

// A credential longer than any the cloud issues is refused before any
// call: Stalled ConfigurationError, naming the Secret's key and the bound,
// never the value.
func TestOverlongCredentialIsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	secret := f.managementSecret()
	secret.StringData["keySecret"] = strings.Repeat("k", cloudapi.MaxCredentialBytes+1)
	f.create(secret)
	f.create(f.newWatch("long-key"))
	w := f.waitFor("long-key", 20*time.Second, "Stalled ConfigurationError",
		conditionIs(swv1.ConditionStalled, metav1.ConditionTrue, swv1.ReasonConfigurationError))
	msg := meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionPipesSynced).Message
	if want := fmt.Sprintf(`%s/warehouse-api-key key "keySecret" is longer than %d bytes`, f.ns, cloudapi.MaxCredentialBytes); !strings.Contains(msg, want) || strings.Contains(msg, "kkkk") {
		t.Errorf("message %q: want it to name the Secret, its key and the bound (%q), and not the value", msg, want)
	}
	if calls := f.fake.Calls(fakecloud.OpListPipes); calls != 0 {
		t.Errorf("the cloud was called %d times with the overlong key", calls)
	}
}

// 3. A rotated Secret is used at the next call.
func TestRotatedSecretIsUsed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.readyWatch("rotate")

	// The cloud now accepts only the new key; the old one would get 401.
	rotatedAt := time.Now()
	f.keySecret = secretMarker + "rotated-" + f.ns
	f.fake.SetManagementKey(f.keyID, f.keySecret)
	secret := f.managementSecret()
	if err := env.Client.Update(f.ctx, secret); err != nil {
		t.Fatal(err)
	}

	deadline := time.Now().Add(15 * time.Second)
	for !acceptedCallSince(f.fake, fakecloud.OpListPipes, rotatedAt) {
		if time.Now().After(deadline) {
			t.Fatalf("no pipes call with the rotated key was accepted; calls: %+v", f.fake.CallLog())
		}
		time.Sleep(100 * time.Millisecond)
	}
	w := f.waitFor("rotate", 10*time.Second, "Ready with the rotated key", func(w *swv1.ServiceWatch) bool {
		return isReady(w) && !w.Status.LastSyncTime.Time.Before(rotatedAt.Truncate(time.Second))
	})
	if c := meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionPipesSynced); c.Status != metav1.ConditionTrue {
		t.Errorf("PipesSynced after rotation: %+v", c)
	}
}

func acceptedCallSince(fake *fakecloud.Server, op fakecloud.Operation, since time.Time) bool {
	for _, c := range fake.CallLog() {
		if c.Operation == op && c.Time.After(since) && c.Status == 200 {
			return true
		}
	}
	return false
}

// 4. 401 and 403 → Unauthorized / Forbidden, Stalled.
func TestRejectedCredentialsStall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		op        fakecloud.Operation
		fault     fakecloud.Fault
		condition string
		reason    string
	}{
		{"plain-text 401 on pipes", fakecloud.OpListPipes, fakecloud.Fault{Status: 401, Body: fakecloud.PlainText401, ContentType: "text/plain"},
			swv1.ConditionPipesSynced, swv1.ReasonUnauthorized},
		{"403 on endpoints", fakecloud.OpListReversePrivateEndpoints, fakecloud.Fault{Status: 403, Body: `{"status":403,"requestId":"0b8f2c1e-1111-4c4c-8d8d-123456789abc","error":"key may not read this service"}`},
			swv1.ConditionReversePrivateEndpointsSynced, swv1.ReasonForbidden},
		{"401 on the alert list", fakecloud.OpListAlerts, fakecloud.Fault{Status: 401, Body: `{"message":"invalid token"}`},
			swv1.ConditionAlertsSynced, swv1.ReasonUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.faultyWatch("rejected", tt.op, tt.fault, fakecloud.DefaultAlertID)

			w := f.waitFor("rejected", 20*time.Second, "Stalled "+tt.reason,
				conditionIs(swv1.ConditionStalled, metav1.ConditionTrue, tt.reason))
			if !conditionIs(tt.condition, metav1.ConditionFalse, tt.reason)(w) {
				t.Errorf("%s: %+v", tt.condition, meta.FindStatusCondition(w.Status.Conditions, tt.condition))
			}
			if !conditionIs(swv1.ConditionReady, metav1.ConditionFalse, tt.reason)(w) {
				t.Errorf("Ready: %+v", meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionReady))
			}
			// A stalled watch waits for the user: no tight retry loop. Real
			// time: the manager runs on the real clock, and a loop would
			// call within milliseconds; the interval is minutes away.
			calls := f.fake.Calls(tt.op)
			time.Sleep(3 * time.Second)
			if again := f.fake.Calls(tt.op); again != calls {
				t.Errorf("a stalled watch called the cloud %d more times within 3s", again-calls)
			}
		})
	}
}

// 5. Endpoints fail with 500 while pipes succeed: pipes update, endpoints
// keep their last data, Ready False with ServerError.
func TestPartialFailureKeepsLastGoodData(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	before := f.readyWatch("partial")

	pipes := f.fake.Data().Organizations[fakecloud.DefaultOrganizationID][fakecloud.DefaultServiceID].Pipes
	pipes[0]["state"] = "Failed"
	f.fake.SetPipes(fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, pipes)
	f.fake.SetReversePrivateEndpoints(fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, nil)
	f.fake.SetFault(fakecloud.OpListReversePrivateEndpoints, fakecloud.Fault{Status: 500, Body: `{"status":500,"requestId":"9d2d8f4c-2222-4c4c-8d8d-123456789abc","error":"internal error"}`})

	w := f.requestSyncAndWait("partial")
	if !conditionIs(swv1.ConditionReversePrivateEndpointsSynced, metav1.ConditionFalse, swv1.ReasonServerError)(w) {
		t.Errorf("ReversePrivateEndpointsSynced: %+v", meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionReversePrivateEndpointsSynced))
	}
	if msg := meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionReversePrivateEndpointsSynced).Message; !strings.Contains(msg, "9d2d8f4c-2222-4c4c-8d8d-123456789abc") {
		t.Errorf("message %q does not quote the requestId", msg)
	}
	if !conditionIs(swv1.ConditionReady, metav1.ConditionFalse, swv1.ReasonServerError)(w) {
		t.Errorf("Ready: %+v", meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionReady))
	}
	if meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionStalled) != nil {
		t.Error("a 500 stalled the watch; retrying can help")
	}
	if !reflect.DeepEqual(w.Status.ReversePrivateEndpoints, before.Status.ReversePrivateEndpoints) || len(w.Status.ReversePrivateEndpoints) != 1 {
		t.Errorf("endpoints lost their last good data: %+v", w.Status.ReversePrivateEndpoints)
	}
	if w.Status.Summary.ReversePrivateEndpoints != 1 {
		t.Errorf("summary.reversePrivateEndpoints = %d, want the last good 1", w.Status.Summary.ReversePrivateEndpoints)
	}
	if !conditionIs(swv1.ConditionPipesSynced, metav1.ConditionTrue, swv1.ReasonSynced)(w) {
		t.Errorf("PipesSynced: %+v", meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionPipesSynced))
	}
	if got := w.Status.Summary.PipesByState["Failed"]; got != 1 {
		t.Errorf("pipes did not update: pipesByState = %v", w.Status.Summary.PipesByState)
	}

	// The failure retries on its own, with backoff, and recovery is seen.
	f.fake.ClearFaults()
	w = f.waitFor("partial", 30*time.Second, "Ready after the 500s stop", isReady)
	if len(w.Status.ReversePrivateEndpoints) != 0 {
		t.Errorf("endpoints did not update after recovery: %+v", w.Status.ReversePrivateEndpoints)
	}
}

// 6. One alert 404 among three: that entry carries error and keeps its last
// data; the others are current.
func TestOneMissingAlertAmongThree(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	third := "65f1a2b3c4d5e6f708192a3d"
	alert := f.fake.Data().Alerts[fakecloud.DefaultAlertID]
	alert["id"], alert["name"] = third, "Third alert"
	f.fake.SetAlert(third, alert)
	before := f.readyWatch("alerts", fakecloud.DefaultAlertID, fakecloud.SecondAlertID, third)

	f.fake.DeleteAlert(fakecloud.SecondAlertID)
	updated := f.fake.Data().Alerts[fakecloud.DefaultAlertID]
	updated["state"] = "firing"
	f.fake.SetAlert(fakecloud.DefaultAlertID, updated)

	w := f.requestSyncAndWait("alerts")
	if got := []string{w.Status.Alerts[0].ID, w.Status.Alerts[1].ID, w.Status.Alerts[2].ID}; !reflect.DeepEqual(got, []string{fakecloud.DefaultAlertID, fakecloud.SecondAlertID, third}) {
		t.Fatalf("alerts are not in spec order: %v", got)
	}
	missing := w.Status.Alerts[1]
	if !strings.Contains(missing.Error, "NotFound") {
		t.Errorf("the missing alert's error = %q", missing.Error)
	}
	lastGood := before.Status.Alerts[1]
	lastGood.Error = missing.Error
	if !reflect.DeepEqual(missing, lastGood) {
		t.Errorf("the missing alert lost its last data:\n got %+v\nwant %+v", missing, lastGood)
	}
	if ptr.Deref(w.Status.Alerts[0].State, "") != "firing" || w.Status.Alerts[0].Error != "" {
		t.Errorf("the first alert is not current: %+v", w.Status.Alerts[0])
	}
	if w.Status.Alerts[2].Error != "" || ptr.Deref(w.Status.Alerts[2].Name, "") != "Third alert" {
		t.Errorf("the third alert is not current: %+v", w.Status.Alerts[2])
	}
	c := meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionAlertsSynced)
	if c.Status != metav1.ConditionFalse || c.Reason != swv1.ReasonNotFound || !strings.Contains(c.Message, fakecloud.SecondAlertID) || strings.Contains(c.Message, third) {
		t.Errorf("AlertsSynced: %+v", c)
	}
	if w.Status.Summary.Alerts != 2 {
		t.Errorf("summary.alerts = %d, want 2", w.Status.Summary.Alerts)
	}

	t.Run("never fetched", func(t *testing.T) {
		f := newFixture(t)
		f.createSecrets()
		f.create(f.newWatch("unknown", "no-such-alert", fakecloud.DefaultAlertID))
		w := f.waitFor("unknown", 20*time.Second, "AlertsSynced NotFound",
			conditionIs(swv1.ConditionAlertsSynced, metav1.ConditionFalse, swv1.ReasonNotFound))
		want := swv1.AlertStatus{ID: "no-such-alert", SelectedBy: swv1.SelectedByID, Error: w.Status.Alerts[0].Error}
		if !reflect.DeepEqual(w.Status.Alerts[0], want) || want.Error == "" {
			t.Errorf("a never-fetched alert shows %+v, want just id and error", w.Status.Alerts[0])
		}
	})
}

// 7. 429 with Retry-After: no call to that API goes out before the wait the
// service asked for, even when a sync is requested in the meantime.
func TestRateLimitedWaitsForRetryAfter(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const retryAfter = 8 * time.Second // longer than the first backoff step (5s)
	f.faultyWatch("limited", fakecloud.OpListPipes, fakecloud.Fault{Status: 429, RetryAfter: "8", Body: "Too Many Requests", ContentType: "text/plain", Times: 1})

	w := f.waitFor("limited", 20*time.Second, "PipesSynced RateLimited",
		conditionIs(swv1.ConditionPipesSynced, metav1.ConditionFalse, swv1.ReasonRateLimited))
	if meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionStalled) != nil {
		t.Error("a 429 stalled the watch")
	}
	// A sync requested now must not send a pipes call before Retry-After.
	f.requestSyncAndWait("limited")
	f.waitFor("limited", 30*time.Second, "Ready after Retry-After", isReady)

	pipeCalls := f.callTimes(fakecloud.OpListPipes)
	if len(pipeCalls) < 2 {
		t.Fatalf("want at least 2 pipes calls, got %d", len(pipeCalls))
	}
	if gap := pipeCalls[1].Sub(pipeCalls[0]); gap < retryAfter {
		t.Errorf("the second pipes call came %v after the 429, before its Retry-After of %v", gap, retryAfter)
	}
}

// 8. Suspend: no calls reach the cloud; resuming syncs.
func TestSuspend(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.createSecrets()
	w := f.newWatch("paused", fakecloud.DefaultAlertID)
	w.Spec.Suspend = true
	f.create(w)

	f.waitFor("paused", 20*time.Second, "Ready False Suspended", conditionIs(swv1.ConditionReady, metav1.ConditionFalse, swv1.ReasonSuspended))
	f.requestSyncAndWait("paused") // acknowledged, still no calls
	// Real time: a read the request had started would run in the
	// background, on the real clock, and call within milliseconds.
	time.Sleep(2 * time.Second)
	if calls := len(f.fake.CallLog()); calls != 0 {
		t.Fatalf("a suspended watch made %d calls", calls)
	}

	cur := f.get("paused")
	cur.Spec.Suspend = false
	if err := env.Client.Update(f.ctx, cur); err != nil {
		t.Fatal(err)
	}
	resumed := f.waitFor("paused", 20*time.Second, "Ready after resuming", isReady)
	if resumed.Status.Summary.Pipes != 8 {
		t.Errorf("summary after resuming: %+v", resumed.Status.Summary)
	}

	// Suspending again keeps the data.
	cur = f.get("paused")
	cur.Spec.Suspend = true
	if err := env.Client.Update(f.ctx, cur); err != nil {
		t.Fatal(err)
	}
	suspended := f.waitFor("paused", 20*time.Second, "Suspended again", conditionIs(swv1.ConditionReady, metav1.ConditionFalse, swv1.ReasonSuspended))
	if !reflect.DeepEqual(suspended.Status.Pipes, resumed.Status.Pipes) || suspended.Status.Summary.Pipes != 8 {
		t.Error("suspending dropped the data")
	}
}

// 9. The requested-at annotation triggers a sync and is echoed.
func TestRequestedAtTriggersSync(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.readyWatch("on-demand")
	calls := f.fake.Calls(fakecloud.OpListPipes)

	w := f.requestSyncAndWait("on-demand")
	if got := f.fake.Calls(fakecloud.OpListPipes); got != calls+1 {
		t.Errorf("pipes calls went from %d to %d, want one more", calls, got)
	}
	if !isReady(w) {
		t.Error("not Ready after the requested sync")
	}
}

// 10. Quiet when nothing changes: syncs of unchanged data write nothing but
// lastSyncTime, and conditions keep their lastTransitionTime. Each sync is
// triggered by touching the Secret (a new resourceVersion, the same data),
// which the operator must answer with exactly one sync and one small write.
func TestUnchangedCloudWritesOnlyLastSyncTime(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ready := f.readyWatch("quiet", fakecloud.DefaultAlertID)
	eventsBefore := f.waitForEvent("quiet", swv1.ConditionReady)

	watcher, err := env.WatchClient.Watch(f.ctx, &swv1.ServiceWatchList{}, client.InNamespace(f.ns))
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()
	writes := watcher.ResultChan()
	nextWrite := func(prev *swv1.ServiceWatch, timeout time.Duration) *swv1.ServiceWatch {
		t.Helper()
		deadline := time.After(timeout)
		for {
			select {
			case ev := <-writes:
				if cur, ok := ev.Object.(*swv1.ServiceWatch); ok && cur.ResourceVersion != prev.ResourceVersion {
					return cur
				}
			case <-deadline:
				return nil
			}
		}
	}

	prev := ready
	for i := range 3 {
		// lastSyncTime has a resolution of one second: the next sync must
		// fall in a later second than the last one's for it to change.
		time.Sleep(time.Until(prev.Status.LastSyncTime.Add(time.Second)))
		calls := f.fake.Calls(fakecloud.OpListPipes)
		f.touchSecret(fmt.Sprintf("touch-%d", i))
		cur := nextWrite(prev, 15*time.Second)
		if cur == nil {
			t.Fatalf("touch %d: no status write after a change to the Secret", i)
		}
		assertOnlyLastSyncTimeChanged(t, prev, cur)
		if got := f.fake.Calls(fakecloud.OpListPipes); got != calls+1 {
			t.Errorf("touch %d: %d pipes calls, want exactly one", i, got-calls)
		}
		prev = cur
	}
	// The operator's own writes must not trigger more syncs.
	if cur := nextWrite(prev, 3*time.Second); cur != nil {
		t.Errorf("an unexpected write followed: %s", mustJSON(t, cur.Status))
	}
	// Events tell of changes of state, not of syncs.
	if after := f.events("quiet"); !reflect.DeepEqual(after, eventsBefore) {
		t.Errorf("syncs of unchanged data emitted events:\nbefore %s\nafter  %s", mustJSON(t, eventsBefore), mustJSON(t, after))
	}
}

// touchSecret changes the management Secret's labels only.
func (f *fixture) touchSecret(value string) {
	f.t.Helper()
	secret := &corev1.Secret{}
	if err := env.Client.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "warehouse-api-key"}, secret); err != nil {
		f.t.Fatal(err)
	}
	patch := client.MergeFrom(secret.DeepCopy())
	secret.Labels = map[string]string{"touched": value}
	if err := env.Client.Patch(f.ctx, secret, patch); err != nil {
		f.t.Fatal(err)
	}
}

// The schedule: with nothing changing, the next sync comes at the watch's
// phase slot, more than half an interval and at most one and a half intervals
// after the first (plus at most 1% jitter), so that watches created together
// spread over the interval. The unit tests pin the exact slot.
func TestSyncsEveryInterval(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.createSecrets()
	w := f.newWatch("periodic")
	w.Spec.Interval = metav1.Duration{Duration: 30 * time.Second}
	f.create(w)
	f.waitFor("periodic", 20*time.Second, "Ready", isReady)

	deadline := time.Now().Add(60 * time.Second)
	var calls []time.Time
	for len(calls) < 2 && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		calls = f.callTimes(fakecloud.OpListPipes)
	}
	if len(calls) < 2 {
		t.Fatalf("no second sync within 60s of an interval of 30s")
	}
	if gap := calls[1].Sub(calls[0]); gap <= 15*time.Second || gap > 52*time.Second {
		t.Errorf("the second sync came %v after the first, want over 15s and at most 45.3s (+ up to 7s of scheduling slack on a loaded machine)", gap)
	}
}

func assertOnlyLastSyncTimeChanged(t *testing.T, prev, cur *swv1.ServiceWatch) {
	t.Helper()
	if cur.Generation != prev.Generation || !reflect.DeepEqual(cur.Spec, prev.Spec) {
		t.Errorf("a sync changed the spec")
	}
	a, b := prev.Status.DeepCopy(), cur.Status.DeepCopy()
	if !b.LastSyncTime.After(a.LastSyncTime.Time) {
		t.Errorf("write %s did not advance lastSyncTime (%v → %v)", cur.ResourceVersion, a.LastSyncTime, b.LastSyncTime)
	}
	a.LastSyncTime, b.LastSyncTime = nil, nil
	if !reflect.DeepEqual(a, b) {
		t.Errorf("a sync of unchanged data changed more than lastSyncTime:\nbefore %s\nafter  %s", mustJSON(t, a), mustJSON(t, b))
	}
	for _, c := range cur.Status.Conditions {
		old := meta.FindStatusCondition(prev.Status.Conditions, c.Type)
		if old == nil || !old.LastTransitionTime.Equal(&c.LastTransitionTime) {
			t.Errorf("%s changed its lastTransitionTime", c.Type)
		}
	}
}

// 11. No credential anywhere: not in status, events, nor the manager's log
// (checked for every test by TestMain; here across failure paths that echo
// the service's words).
func TestNoCredentialLeaks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// An error body that echoes the credential back, as some services do.
	f.fake.SetFault(fakecloud.OpListPipes, fakecloud.Fault{Status: 401, Body: fmt.Sprintf(`{"status":401,"requestId":"r","error":"bad key %s:%s"}`, f.keyID, f.keySecret)})
	f.faultyWatch("leaky", fakecloud.OpGetAlert, fakecloud.Fault{Status: 500, Body: fmt.Sprintf(`{"message":"token %s rejected"}`, f.token)}, fakecloud.DefaultAlertID)

	f.waitFor("leaky", 20*time.Second, "Stalled Unauthorized", conditionIs(swv1.ConditionStalled, metav1.ConditionTrue, swv1.ReasonUnauthorized))
	f.fake.ClearFaults()
	f.requestSyncAndWait("leaky")
	f.waitFor("leaky", 20*time.Second, "Ready", isReady)

	status := string(mustJSON(t, f.rawStatus("leaky")))
	events := string(mustJSON(t, f.events("leaky")))
	log := managerLog.String()
	for _, secret := range []string{f.keySecret, f.token, fakecloud.FakeConnectionString} {
		for where, text := range map[string]string{"status": status, "events": events, "manager log": log} {
			if strings.Contains(text, secret) {
				t.Errorf("%s contains a credential:\n%s", where, linesWith(text, secret))
			}
		}
	}
	if !strings.Contains(events, "Unauthorized") {
		t.Errorf("no event told the user about the 401: %s", events)
	}
}

// 12. Truncation: 5,000 pipes give a valid, bounded status that says so.
func TestHugeServiceIsTruncated(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const total = 5000
	template := f.fake.Data().Organizations[fakecloud.DefaultOrganizationID][fakecloud.DefaultServiceID].Pipes[0]
	pipes := make([]map[string]any, total)
	for i := range pipes {
		p := asObject(t, normalize(t, template))
		p["id"] = fmt.Sprintf("00000000-0000-4000-8000-%012d", total-i) // served out of order
		p["name"] = fmt.Sprintf("pipe-%d", i)
		pipes[i] = p
	}
	f.fake.SetPipes(fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, pipes)
	f.createSecrets()
	f.create(f.newWatch("huge"))

	w := f.waitFor("huge", 60*time.Second, "StatusTruncated", conditionIs(swv1.ConditionStatusTruncated, metav1.ConditionTrue, swv1.ReasonTooLarge))
	if !isReady(w) {
		t.Errorf("a truncated but successful sync is not Ready: %+v", meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionReady))
	}
	if w.Status.Summary.Pipes != total {
		t.Errorf("summary.pipes = %d, want the full %d", w.Status.Summary.Pipes, total)
	}
	kept := len(w.Status.Pipes)
	if kept == 0 || kept >= total {
		t.Fatalf("status lists %d pipes", kept)
	}
	if first := ptr.Deref(w.Status.Pipes[0].ID, ""); first != "00000000-0000-4000-8000-000000000001" {
		t.Errorf("the kept pipes are not the first by id: starts at %s", first)
	}
	msg := meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionStatusTruncated).Message
	if !strings.Contains(msg, fmt.Sprintf("%d of %d pipes", kept, total)) {
		t.Errorf("StatusTruncated message %q does not say what was left out", msg)
	}
	if size := len(mustJSON(t, f.rawStatus("huge"))); size > 1<<20 {
		t.Errorf("status is %d bytes, over 1 MiB", size)
	}

	// Deterministic: a second sync of the same data changes nothing but
	// lastSyncTime. On a loaded machine the 5,000-pipe answer can outlast the
	// suite's 5 s client timeout; that failed sync says so in Ready (a
	// longer message, so a pipe fewer fits), which is not what is tested
	// here: ask again, a few times, for a sync that succeeds.
	again := f.requestSyncAndWait("huge")
	for range 3 {
		if isReady(again) {
			break
		}
		again = f.requestSyncAndWait("huge")
	}
	if !reflect.DeepEqual(again.Status.Pipes, w.Status.Pipes) {
		t.Errorf("truncation is not deterministic: the first sync kept %d pipes, the requested one %d (its Ready: %+v)",
			len(w.Status.Pipes), len(again.Status.Pipes), meta.FindStatusCondition(again.Status.Conditions, swv1.ConditionReady))
	}
}

// Real services are messier than their spec: nulls, fields and enum values it
// does not list. Status keeps what was sent (false, 0 and "" included), leaves
// out what was absent or null, keeps unknown values, and (since issue 15)
// keeps unknown fields as sent in otherFields instead of dropping them; the
// kinesis timestamp is the spec's integer (issue 28), 0 included.
func TestMessyCloudDataIsToleratedFaithfully(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.fake.SetPipes(fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, []map[string]any{{
		"id":            "aaaaaaaa-0000-4000-8000-000000000001",
		"state":         "Hibernating", // not a state the spec lists
		"name":          "",
		"scaling":       nil,
		"fieldMappings": []any{},
		"source":        map[string]any{"kinesis": map[string]any{"useEnhancedFanOut": false, "timestamp": 0, "futureOption": "x"}},
		"settings":      map[string]any{"warehouse_max_threads": 0, "brand_new_setting": 3},
		"color":         "blue", // a field the spec does not list
	}})
	f.readyWatch("messy")

	got := normalize(t, sinceChecked(t, f.rawStatus("messy")["pipes"]))
	want := normalize(t, []any{map[string]any{
		"id":            "aaaaaaaa-0000-4000-8000-000000000001",
		"state":         "Hibernating",
		"name":          "",
		"fieldMappings": []any{},
		"source":        map[string]any{"kinesis": map[string]any{"useEnhancedFanOut": false, "timestamp": 0}},
		"settings":      map[string]any{"warehouse_max_threads": 0},
		"sourceKind":    "kinesis",
		"otherFields":   []any{`color: "blue"`, `settings.brand_new_setting: 3`, `source.kinesis.futureOption: "x"`},
	}})
	diffJSON(t, "pipes", got, want)
	if w := f.get("messy"); w.Status.Summary.PipesByState["Hibernating"] != 1 {
		t.Errorf("pipesByState = %v", w.Status.Summary.PipesByState)
	}
}

// What a user reads in the condition when the cloud misbehaves: the reason
// the status code decides, the service's own short words, never a whole HTML
// page, and the requestId to quote to support.
func TestCloudFailuresReadWellInConditions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		fault      fakecloud.Fault
		reason     string
		mention    []string
		notMention []string
	}{
		{"HTML 504 from a CDN", fakecloud.Fault{Status: 504, Body: fakecloud.HTML504, ContentType: "text/html"},
			swv1.ReasonServerError, []string{"504", "Gateway Time-out"}, []string{"<html", "<script", "trace"}},
		{"management error body", fakecloud.Fault{Status: 404, Body: `{"status":404,"requestId":"3f2a1b4c-5d6e-4f70-8192-a3b4c5d6e7f8","error":"service not found"}`},
			swv1.ReasonNotFound, []string{"service not found", "3f2a1b4c-5d6e-4f70-8192-a3b4c5d6e7f8"}, nil},
		{"bare 429", fakecloud.Fault{Status: 429, Body: "slow down", ContentType: "text/plain"},
			swv1.ReasonRateLimited, []string{"429"}, nil},
		{"malformed JSON", fakecloud.Fault{Malformed: true},
			swv1.ReasonInvalidResponse, []string{"InvalidResponse"}, nil},
		{"body over the size cap", fakecloud.Fault{OversizedBytes: 17 << 20},
			swv1.ReasonInvalidResponse, []string{"too large"}, nil},
		{"hang until the client gives up", fakecloud.Fault{Hang: true},
			swv1.ReasonUnreachable, []string{"list pipes"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.faultyWatch("faulty", fakecloud.OpListPipes, tt.fault)
			w := f.waitFor("faulty", 30*time.Second, "PipesSynced "+tt.reason,
				conditionIs(swv1.ConditionPipesSynced, metav1.ConditionFalse, tt.reason))
			msg := meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionPipesSynced).Message
			t.Logf("PipesSynced message: %s", msg)
			for _, s := range tt.mention {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q does not mention %q", msg, s)
				}
			}
			for _, s := range tt.notMention {
				if strings.Contains(msg, s) {
					t.Errorf("message %q contains %q", msg, s)
				}
			}
			if len(msg) > 1000 {
				t.Errorf("message is %d characters long", len(msg))
			}
			if !conditionIs(swv1.ConditionReversePrivateEndpointsSynced, metav1.ConditionTrue, swv1.ReasonSynced)(w) {
				t.Error("the endpoints part did not sync beside the failing pipes")
			}
		})
	}
}
