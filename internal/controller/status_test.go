package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/alerts"
	"github.com/servicewatch/servicewatch/internal/pacing"
	"github.com/servicewatch/servicewatch/internal/tenancy"
)

// Fixtures for the pure status rules: results built the way the parts build
// them, applied to a watch without any API server.

func testWatch(alertIDs ...string) *swv1.ServiceWatch {
	return &swv1.ServiceWatch{
		ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", Generation: 3, UID: "0b1c2d3e-aaaa-4bbb-8ccc-000000000001"},
		Spec: swv1.ServiceWatchSpec{
			AlertIDs: alertIDs,
			Interval: metav1.Duration{Duration: time.Minute},
		},
	}
}

func pipe(id, state string) swv1.Pipe { return swv1.Pipe{ID: ptr.To(id), State: ptr.To(state)} }

func pipesOK(pipes ...swv1.Pipe) partResult {
	return partResult{message: fmt.Sprintf("Listed %d pipes", len(pipes)), apply: func(s *swv1.ServiceWatchStatus) error {
		s.Pipes = pipes
		s.Summary.Pipes = int32(len(pipes))
		s.Summary.PipesByState = byState(pipes)
		return nil
	}}
}

// byState counts pipes by state as readPipes does, through the client's Each.
func byState(pipes []swv1.Pipe) map[string]int32 {
	if len(pipes) == 0 {
		return nil
	}
	counts := map[string]int32{}
	for _, p := range pipes {
		counts[ptr.Deref(p.State, "Unknown")]++
	}
	return counts
}

func endpointsOK(n int) partResult {
	eps := make([]swv1.ReversePrivateEndpoint, n)
	for i := range eps {
		eps[i].ID = ptr.To(fmt.Sprintf("ep-%d", i))
	}
	return partResult{message: fmt.Sprintf("Listed %d reverse private endpoints", n), apply: func(s *swv1.ServiceWatchStatus) error {
		s.ReversePrivateEndpoints = eps
		s.Summary.ReversePrivateEndpoints = int32(n)
		return nil
	}}
}

func failed(reason, message string) partResult {
	return partResult{failure: &failure{reason: reason, message: message}}
}

func alertsFetched(ids []string, fs ...*failure) partResult {
	entries := make([]alerts.Entry, len(ids))
	for i, id := range ids {
		entries[i] = alerts.Entry{ID: id, SelectedBy: swv1.SelectedByID, Alert: &swv1.AlertStatus{ID: id, Name: ptr.To("name of " + id)}}
		if i < len(fs) && fs[i] != nil {
			entries[i] = alerts.Entry{ID: id, SelectedBy: swv1.SelectedByID, Failed: entryFailure(fs[i], nil)}
		}
	}
	return alertsResult(entries, 0, "", swv1.AlertsReadOneByOne)
}

func condition(w *swv1.ServiceWatch, t string) string {
	c := w.Condition(t)
	if c == nil {
		return "absent"
	}
	return string(c.Status) + "/" + c.Reason
}

func TestApplyResults(t *testing.T) {
	tests := []struct {
		name string
		// prior is applied first, as the previous sync.
		prior, results []partResult
		alertIDs       []string
		wantPipes      int
		wantEndpoints  int
		wantAlerts     []swv1.AlertStatus
		wantConditions map[string]string
		wantReadyMsg   string
	}{
		{
			name:          "everything synced",
			results:       []partResult{pipesOK(pipe("b", "Running"), pipe("a", "Stopped")), endpointsOK(1), alertsFetched([]string{"x"})},
			alertIDs:      []string{"x"},
			wantPipes:     2,
			wantEndpoints: 1,
			wantAlerts:    []swv1.AlertStatus{{ID: "x", SelectedBy: swv1.SelectedByID, Name: ptr.To("name of x")}},
			wantConditions: map[string]string{
				swv1.ConditionPipesSynced: "True/Synced", swv1.ConditionReversePrivateEndpointsSynced: "True/Synced",
				swv1.ConditionAlertsSynced: "True/Synced", swv1.ConditionReady: "True/Synced",
				swv1.ConditionStalled: "absent", swv1.ConditionReconciling: "absent", swv1.ConditionStatusTruncated: "absent",
			},
			wantReadyMsg: "Synced 2 pipes, 1 reverse private endpoints and 1 alerts",
		},
		{
			name:          "a failing part keeps its last good data; the others update",
			prior:         []partResult{pipesOK(pipe("a", "Running")), endpointsOK(2), alertsFetched(nil)},
			results:       []partResult{failed(swv1.ReasonServerError, "list pipes: 503"), endpointsOK(3), alertsFetched(nil)},
			wantPipes:     1,
			wantEndpoints: 3,
			wantConditions: map[string]string{
				swv1.ConditionPipesSynced: "False/ServerError", swv1.ConditionReversePrivateEndpointsSynced: "True/Synced",
				swv1.ConditionReady: "False/ServerError", swv1.ConditionStalled: "absent",
			},
			wantReadyMsg: "PipesSynced: list pipes: 503",
		},
		{
			name:    "only the user can fix a missing Secret: Stalled with the first stalled part's reason",
			results: []partResult{failed(swv1.ReasonServerError, "503"), failed(swv1.ReasonSecretNotFound, "Secret ns/k not found"), alertsFetched(nil)},
			wantConditions: map[string]string{
				swv1.ConditionReady: "False/ServerError", swv1.ConditionStalled: "True/SecretNotFound",
			},
			wantReadyMsg: "PipesSynced: 503; ReversePrivateEndpointsSynced: Secret ns/k not found",
		},
		{
			name:       "a failed alert keeps its last fetch and says why; AlertsSynced has the first failing alert's reason",
			prior:      []partResult{pipesOK(), endpointsOK(0), alertsFetched([]string{"x", "y", "z"})},
			results:    []partResult{pipesOK(), endpointsOK(0), alertsFetched([]string{"x", "y", "z"}, nil, &failure{reason: swv1.ReasonNotFound, message: "gone"}, &failure{reason: swv1.ReasonServerError, message: "503"})},
			alertIDs:   []string{"x", "y", "z"},
			wantAlerts: []swv1.AlertStatus{{ID: "x", SelectedBy: swv1.SelectedByID, Name: ptr.To("name of x")}, {ID: "y", SelectedBy: swv1.SelectedByID, Name: ptr.To("name of y"), Error: "NotFound: gone"}, {ID: "z", SelectedBy: swv1.SelectedByID, Name: ptr.To("name of z"), Error: "ServerError: 503"}},
			wantConditions: map[string]string{
				swv1.ConditionAlertsSynced: "False/NotFound", swv1.ConditionReady: "False/NotFound",
			},
			wantReadyMsg: "AlertsSynced: 2 of 3 alerts failed: y (NotFound: gone); z (ServerError: 503)",
		},
		{
			name:          "an idle service keeps its data and is not Stalled",
			prior:         []partResult{pipesOK(pipe("a", "Running")), endpointsOK(1), alertsFetched(nil)},
			results:       []partResult{failed(swv1.ReasonServiceIdle, "424: Current state: idle"), failed(swv1.ReasonServiceIdle, "424: Current state: idle"), alertsFetched(nil)},
			wantPipes:     1,
			wantEndpoints: 1,
			wantConditions: map[string]string{
				swv1.ConditionPipesSynced: "False/ServiceIdle", swv1.ConditionReady: "False/ServiceIdle", swv1.ConditionStalled: "absent",
			},
		},
		{
			name:       "an alert never fetched has just its id and error",
			results:    []partResult{pipesOK(), endpointsOK(0), wholeFailed(&swv1.ServiceWatch{Spec: swv1.ServiceWatchSpec{AlertIDs: []string{"x"}}}, &failure{reason: swv1.ReasonSecretKeyMissing, message: "no token"})},
			alertIDs:   []string{"x"},
			wantAlerts: []swv1.AlertStatus{{ID: "x", SelectedBy: swv1.SelectedByID, Error: "SecretKeyMissing: no token"}},
			wantConditions: map[string]string{
				swv1.ConditionAlertsSynced: "False/SecretKeyMissing", swv1.ConditionStalled: "True/SecretKeyMissing",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := testWatch(tt.alertIDs...)
			parts := syncParts()
			if tt.prior != nil {
				applyResults(w, parts, tt.prior, DefaultStatusSizeLimit)
			}
			markReconciling(w, "syncing generation 3")
			applyResults(w, parts, tt.results, DefaultStatusSizeLimit)

			if len(w.Status.Pipes) != tt.wantPipes || len(w.Status.ReversePrivateEndpoints) != tt.wantEndpoints {
				t.Errorf("status has %d pipes and %d endpoints, want %d and %d", len(w.Status.Pipes), len(w.Status.ReversePrivateEndpoints), tt.wantPipes, tt.wantEndpoints)
			}
			if tt.wantAlerts != nil && !equality.Semantic.DeepEqual(w.Status.Alerts, tt.wantAlerts) {
				t.Errorf("alerts = %+v, want %+v", w.Status.Alerts, tt.wantAlerts)
			}
			for typ, want := range tt.wantConditions {
				if got := condition(w, typ); got != want {
					t.Errorf("%s = %s, want %s", typ, got, want)
				}
			}
			if c := w.Condition(swv1.ConditionReconciling); c != nil {
				t.Errorf("Reconciling outlived the sync that ended it")
			}
			for _, c := range w.Status.Conditions {
				if c.ObservedGeneration != w.Generation {
					t.Errorf("%s has observedGeneration %d, want %d", c.Type, c.ObservedGeneration, w.Generation)
				}
			}
			if tt.wantReadyMsg != "" {
				if got := w.Condition(swv1.ConditionReady).Message; got != tt.wantReadyMsg {
					t.Errorf("Ready message = %q, want %q", got, tt.wantReadyMsg)
				}
			}
		})
	}
}

// An unchanged result keeps lastTransitionTime: conditions are only touched
// where something changed, which keeps a quiet sync quiet.
func TestApplyResultsKeepsTransitionTimes(t *testing.T) {
	w := testWatch()
	parts := syncParts()
	applyResults(w, parts, []partResult{pipesOK(), endpointsOK(0), alertsFetched(nil)}, DefaultStatusSizeLimit)
	first := w.DeepCopy()
	for i := range w.Status.Conditions {
		w.Status.Conditions[i].LastTransitionTime = metav1.NewTime(time.Unix(1, 0))
	}
	applyResults(w, parts, []partResult{pipesOK(), endpointsOK(0), alertsFetched(nil)}, DefaultStatusSizeLimit)
	for _, c := range w.Status.Conditions {
		if c.LastTransitionTime.Unix() != 1 {
			t.Errorf("%s moved its lastTransitionTime on an unchanged sync", c.Type)
		}
	}
	if len(first.Status.Conditions) != len(w.Status.Conditions) {
		t.Errorf("conditions changed on an unchanged sync")
	}
}

// Whatever the cloud or a tenant sends, every condition message stays under
// the API server's 32 KiB limit, and Ready still names what failed.
func TestConditionMessagesAreBounded(t *testing.T) {
	ids := make([]string, 100)
	fs := make([]*failure, 100)
	for i := range ids {
		ids[i] = fmt.Sprintf("%03d-%s", i, strings.Repeat("x", 124))
		fs[i] = &failure{reason: swv1.ReasonNotFound, message: strings.Repeat("m", 200)}
	}
	w := testWatch(ids...)
	applyResults(w, syncParts(), []partResult{
		failed(swv1.ReasonServerError, strings.Repeat("p", 40000)),
		failed(swv1.ReasonServerError, strings.Repeat("e", 40000)),
		alertsFetched(ids, fs...),
	}, DefaultStatusSizeLimit)
	for _, c := range w.Status.Conditions {
		if len(c.Message) > maxConditionMessageBytes {
			t.Errorf("%s message is %d bytes, over %d", c.Type, len(c.Message), maxConditionMessageBytes)
		}
	}
	msg := w.Condition(swv1.ConditionAlertsSynced).Message
	if !strings.HasPrefix(msg, "100 of 100 alerts failed: 000-") || !strings.Contains(msg, "more") {
		t.Errorf("AlertsSynced does not list the first failing IDs then how many more: %q", msg)
	}
}

func TestMarkSuspendedKeepsData(t *testing.T) {
	w := testWatch()
	applyResults(w, syncParts(), []partResult{pipesOK(pipe("a", "Running")), failed(swv1.ReasonUnauthorized, "401"), alertsFetched(nil)}, DefaultStatusSizeLimit)
	markReconciling(w, "syncing")
	markSuspended(w)
	if got := condition(w, swv1.ConditionReady); got != "False/Suspended" {
		t.Errorf("Ready = %s", got)
	}
	if condition(w, swv1.ConditionStalled) != "absent" || condition(w, swv1.ConditionReconciling) != "absent" {
		t.Errorf("a suspended watch is neither Stalled nor Reconciling: %v", w.Status.Conditions)
	}
	if len(w.Status.Pipes) != 1 {
		t.Errorf("suspending dropped the data")
	}
	if w.Status.ObservedGeneration != w.Generation {
		t.Errorf("observedGeneration = %d", w.Status.ObservedGeneration)
	}
}

// buildStatus is the whole desired status for each kind of change: a
// suspension, an announcement, the end of a sync.
func TestBuildStatus(t *testing.T) {
	ended := time.Date(2026, 11, 23, 10, 0, 0, 700_000_000, time.UTC)
	synced := func(results ...partResult) statusChange {
		return statusChange{synced: endedScope(results, true, ended, time.Minute)}
	}
	tests := []struct {
		name   string
		change statusChange
		check  func(t *testing.T, w *swv1.ServiceWatch)
	}{
		{"suspended: Ready False, the request echoed, data kept", statusChange{suspended: true}, func(t *testing.T, w *swv1.ServiceWatch) {
			if got := condition(w, swv1.ConditionReady); got != "False/Suspended" {
				t.Errorf("Ready = %s", got)
			}
			if w.Status.LastHandledRequestedAt != "req-1" || len(w.Status.Pipes) != 1 {
				t.Errorf("lastHandledRequestedAt %q, %d pipes", w.Status.LastHandledRequestedAt, len(w.Status.Pipes))
			}
		}},
		{"announced: Reconciling True, nothing else", statusChange{announce: "syncing generation 4"}, func(t *testing.T, w *swv1.ServiceWatch) {
			if got := condition(w, swv1.ConditionReconciling); got != "True/Progressing" {
				t.Errorf("Reconciling = %s", got)
			}
			if w.Status.LastHandledRequestedAt != "" || w.Status.ObservedGeneration != 2 {
				t.Errorf("an announcement handled the request or the generation: %+v", w.Status)
			}
		}},
		{"synced: Ready, the generation and request handled, Reconciling ended, lastSyncTime in whole seconds",
			synced(pipesOK(), endpointsOK(0), alertsFetched(nil)), func(t *testing.T, w *swv1.ServiceWatch) {
				if !w.IsReady() || condition(w, swv1.ConditionReconciling) != "absent" {
					t.Errorf("Ready %s, Reconciling %s", condition(w, swv1.ConditionReady), condition(w, swv1.ConditionReconciling))
				}
				if w.Status.ObservedGeneration != w.Generation || w.Status.LastHandledRequestedAt != "req-1" {
					t.Errorf("observedGeneration %d, lastHandledRequestedAt %q", w.Status.ObservedGeneration, w.Status.LastHandledRequestedAt)
				}
				if !w.Status.LastSyncTime.Equal(&metav1.Time{Time: ended.Truncate(time.Second)}) || w.Status.RetryNotBefore != nil {
					t.Errorf("lastSyncTime %v, retryNotBefore %v", w.Status.LastSyncTime, w.Status.RetryNotBefore)
				}
			}},
		{"synced with a Retry-After: retryNotBefore a second past it, in whole seconds",
			synced(partResult{failure: &failure{reason: swv1.ReasonRateLimited, message: "429", retryAfter: 30 * time.Second}}, endpointsOK(0), alertsFetched(nil)),
			func(t *testing.T, w *swv1.ServiceWatch) {
				want := ended.Add(31 * time.Second).Truncate(time.Second)
				if w.Status.RetryNotBefore == nil || !w.Status.RetryNotBefore.Time.Equal(want) {
					t.Errorf("retryNotBefore %v, want %v", w.Status.RetryNotBefore, want)
				}
				if len(w.Status.Pipes) != 1 {
					t.Error("the failed part lost its data")
				}
			}},
		{"synced but stretched by the budget: IntervalMet False",
			statusChange{synced: endedScope([]partResult{pipesOK(), endpointsOK(0), alertsFetched(nil)}, false, ended, 2*time.Minute)},
			func(t *testing.T, w *swv1.ServiceWatch) {
				if got := condition(w, swv1.ConditionIntervalMet); got != "False/BudgetExceeded" {
					t.Errorf("IntervalMet = %s", got)
				}
				if w.Status.LastSyncTime != nil {
					t.Errorf("a sync that did not reach the cloud set lastSyncTime %v", w.Status.LastSyncTime)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := testWatch()
			w.Generation = 4
			w.Annotations = map[string]string{swv1.RequestedAtAnnotation: "req-1"}
			applyResults(w, syncParts(), []partResult{pipesOK(pipe("a", "Running")), endpointsOK(0), alertsFetched(nil)}, DefaultStatusSizeLimit)
			w.Status.ObservedGeneration = 2
			buildStatus(w, tt.change, DefaultStatusSizeLimit)
			tt.check(t, w)
		})
	}
}

// The conditions of types the controller does not own are kept exactly as
// the base has them, in their places; those it owns are the controller's.
func TestKeepOthersConditions(t *testing.T) {
	reviewed := metav1.Condition{Type: "example.com/Reviewed", Status: metav1.ConditionTrue, Reason: "Approved"}
	ready := metav1.Condition{Type: swv1.ConditionReady, Status: metav1.ConditionTrue, Reason: swv1.ReasonSynced}
	notReady := metav1.Condition{Type: swv1.ConditionReady, Status: metav1.ConditionFalse, Reason: swv1.ReasonUnreachable}
	changed := reviewed
	changed.Status = metav1.ConditionFalse
	tests := []struct {
		name        string
		base, built []metav1.Condition
		want        []metav1.Condition
	}{
		{"only owned: as built", []metav1.Condition{ready}, []metav1.Condition{notReady}, []metav1.Condition{notReady}},
		{"another's kept in its place", []metav1.Condition{reviewed, ready}, []metav1.Condition{reviewed, notReady}, []metav1.Condition{reviewed, notReady}},
		{"another's changed by a setter: the base's wins", []metav1.Condition{ready, reviewed}, []metav1.Condition{notReady, changed}, []metav1.Condition{notReady, reviewed}},
		{"another's dropped by a setter: put back", []metav1.Condition{reviewed, ready}, []metav1.Condition{notReady}, []metav1.Condition{notReady, reviewed}},
		{"one the base lacks is not another's to add", []metav1.Condition{ready}, []metav1.Condition{notReady, reviewed}, []metav1.Condition{notReady}},
		{"an owned one the controller deleted stays deleted", []metav1.Condition{ready, reviewed}, []metav1.Condition{reviewed}, []metav1.Condition{reviewed}},
		{"none", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := testWatch()
			w.Status.Conditions = tt.built
			keepOthersConditions(w, tt.base, syncParts())
			if !equality.Semantic.DeepEqual(w.Status.Conditions, tt.want) {
				t.Errorf("got %+v\nwant %+v", w.Status.Conditions, tt.want)
			}
		})
	}
}

// IntervalMet's message gives the effective interval, the namespace's share
// and its watches' need in calls per minute (the book keeps calls per
// second), readable and never NaN.
func TestIntervalMetMessage(t *testing.T) {
	got := intervalMetMessage(time.Minute, pacing.Allowance{Every: 2 * time.Minute, Share: tenancy.Share{Share: 0.33, Need: 0.6}})
	if want := "syncing every 2m0s instead of every 1m0s: this namespace's share of the key is 19.8 calls/min; its watches need 36.0; data is as fresh as the budget allows"; got != want {
		t.Errorf("IntervalMet's message = %q, want %q", got, want)
	}
	if strings.Contains(got, "NaN") {
		t.Error(got)
	}
}
