package controller_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// What a user reads when the services answer as they do today: a service
// that is stopped or waking up, a URL that reaches no route of the API, a
// malformed alert ID. Each is named for what it is, says what to do, and is
// Stalled only when retrying cannot help.
func TestServiceErrorsAreNamedForWhatTheyAre(t *testing.T) {
	// Not parallel with the other tests: the timing-sensitive ones (shared
	// reads, schedules) must not share the two cores with its fixtures.
	tests := []struct {
		name      string
		op        fakecloud.Operation
		fault     fakecloud.Fault
		alertIDs  []string
		condition string
		reason    string
		stalled   bool
		mention   []string
	}{
		{name: "a stopped service", op: fakecloud.OpListPipes, fault: fakecloud.ServiceNotRunningFault("stopped"),
			condition: swv1.ConditionPipesSynced, reason: swv1.ReasonServiceNotRunning,
			mention: []string{"Current state: stopped", "not running (stopped)", "retried every interval"}},
		{name: "a service waking up, structured body", op: fakecloud.OpListReversePrivateEndpoints, fault: fakecloud.ServiceAwakingFault(),
			condition: swv1.ConditionReversePrivateEndpointsSynced, reason: swv1.ReasonServiceNotRunning,
			mention: []string{"not running (awaking)"}},
		{name: "an idle service, structured body", op: fakecloud.OpListPipes, fault: fakecloud.ServiceIdleFault(),
			condition: swv1.ConditionPipesSynced, reason: swv1.ReasonServiceIdle, mention: []string{"idle"}},
		{name: "a management URL that reaches no route", op: fakecloud.OpListPipes, fault: fakecloud.RouteNotFoundFault("/v1/organizations/x/services/y/pipes"),
			condition: swv1.ConditionPipesSynced, reason: swv1.ReasonEndpointNotFound, stalled: true,
			mention: []string{"Cannot GET /v1/organizations/x/services/y/pipes", "spec.managementApi.url"}},
		{name: "a malformed alert ID", op: fakecloud.OpGetAlert, fault: fakecloud.InvalidObjectIDFault(), alertIDs: []string{fakecloud.DefaultAlertID},
			condition: swv1.ConditionAlertsSynced, reason: swv1.ReasonBadRequest, stalled: true,
			mention: []string{"Params validation failed: id: Invalid ObjectId", "spec.alertIds"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			if tt.op == fakecloud.OpGetAlert {
				// An ID's 400 comes from its own GET: a host that reads
				// alerts one by one (no list route).
				f.fake.SetAlertListRoute(fakecloud.AlertListNone)
			}
			before := f.readyWatch("svc", tt.alertIDs...)
			f.fake.SetFault(tt.op, tt.fault)
			w := f.requestSyncAndWait("svc")

			c := meta.FindStatusCondition(w.Status.Conditions, tt.condition)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != tt.reason {
				t.Fatalf("%s = %+v, want False/%s", tt.condition, c, tt.reason)
			}
			t.Logf("%s message: %s", tt.condition, c.Message)
			for _, s := range tt.mention {
				if !strings.Contains(c.Message, s) {
					t.Errorf("message %q does not mention %q", c.Message, s)
				}
			}
			if !conditionIs(swv1.ConditionReady, metav1.ConditionFalse, tt.reason)(w) {
				t.Errorf("Ready: %+v", meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionReady))
			}
			stalled := meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionStalled)
			if got := stalled != nil && stalled.Status == metav1.ConditionTrue && stalled.Reason == tt.reason; got != tt.stalled {
				t.Errorf("Stalled = %+v, want stalled %v", stalled, tt.stalled)
			}
			// The data already in status is kept.
			if !reflect.DeepEqual(w.Status.Pipes, before.Status.Pipes) || !reflect.DeepEqual(w.Status.ReversePrivateEndpoints, before.Status.ReversePrivateEndpoints) {
				t.Error("a failing part lost its last good data")
			}
			// Not retried on a backoff: no second call within a few seconds.
			// Real time: the manager schedules on the real clock; a backoff
			// retry would come within BackoffBase (5 s), a tight loop within
			// milliseconds, and the next interval is minutes away.
			calls := f.fake.Calls(tt.op)
			time.Sleep(3 * time.Second)
			if again := f.fake.Calls(tt.op); again != calls {
				t.Errorf("%s was retried %d times within 3s; want it retried at the interval", tt.reason, again-calls)
			}
		})
	}
}
