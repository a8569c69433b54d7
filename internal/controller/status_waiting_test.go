package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

// Waiting is not truncation (issue 29): alerts whose budget has not yet
// admitted their first fetch are not "left out to stay under" a size. Their
// part says they wait; StatusTruncated says only what a size cut, for
// alerts as for the lists.
func TestWaitingAlertsAreNotTruncated(t *testing.T) {
	ids := make([]string, 10)
	for i := range ids {
		ids[i] = fmt.Sprintf("alert-%d", i)
	}
	waiting := partResult{deferred: newFailure(swv1.ReasonRateLimited, "waiting for room in the alert API token's rate budget")}

	w := testWatch(ids...)
	applyResults(w, syncParts(), []partResult{pipesOK(), endpointsOK(0), waiting}, DefaultStatusSizeLimit)
	if c := w.Condition(swv1.ConditionStatusTruncated); c != nil {
		t.Errorf("alerts waiting for their first fetch read as truncated: %s %q", c.Reason, c.Message)
	}
	if c := w.Condition(swv1.ConditionAlertsSynced); c == nil || c.Status != metav1.ConditionFalse ||
		c.Reason != swv1.ReasonRateLimited || !strings.Contains(c.Message, "waiting") {
		t.Errorf("AlertsSynced = %+v, want False/RateLimited saying the alerts wait", c)
	}

	// A size that cuts alerts still says so, with the alerts the sync read.
	cut := testWatch(ids...)
	applyResults(cut, syncParts(), []partResult{pipesOK(), endpointsOK(0), alertsFetched(ids)}, 1)
	c := cut.Condition(swv1.ConditionStatusTruncated)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != swv1.ReasonTooLarge ||
		!strings.Contains(c.Message, fmt.Sprintf("%d of 10 alerts", len(cut.Status.Alerts))) || len(cut.Status.Alerts) == 10 {
		t.Errorf("alerts cut by a 1-byte limit: %d kept, StatusTruncated %+v; want fewer than 10 and the cut named", len(cut.Status.Alerts), c)
	}
}

// The wait says until when: the budget's next room, for the budget that
// reads the watch's alerts (the alert API token's, or the management API
// key's when the alerts come from there).
func TestWaitingAlertsSayUntilWhen(t *testing.T) {
	roomAt := time.Date(2026, 11, 23, 12, 0, 7, 0, time.UTC)
	for _, tt := range []struct {
		from, want string
	}{
		{swv1.AlertsFromAlertAPI, "waiting for room in the alert API token's rate budget until 12:00:07 UTC"},
		{swv1.AlertsFromManagementAPI, "waiting for room in the management API key's rate budget until 12:00:07 UTC"},
	} {
		w := testWatch("a1", "a2")
		w.Spec.AlertsFrom = tt.from
		in := &syncScope{watch: w, admission: admission{alertsDeferred: true, alertsRoomAt: roomAt}}
		res := readAlerts(context.Background(), stubCloud{}, in)
		if res.deferred == nil || !strings.HasPrefix(res.deferred.message, tt.want) {
			t.Errorf("alerts from %s waiting: %+v, want a deferral saying %q", tt.from, res.deferred, tt.want)
		}
	}
}
