package controller_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// What the HTTP in front of the services answers reaches the condition with
// its own words and, for a redirect, where to: the user can fix the URL.
func TestFrontAnswersShowTheirWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		op     fakecloud.Operation
		fault  fakecloud.Fault
		cond   string
		reason string
		want   []string
	}{
		{"moved", fakecloud.OpListPipes, fakecloud.RedirectFault(301, "https://user:pw@new.example.invalid/v1/organizations/o/services/s/pipes?sig=abc"),
			swv1.ConditionPipesSynced, swv1.ReasonUnexpectedStatus,
			[]string{"redirect to https://new.example.invalid/v1/organizations/o/services/s/pipes not followed", "set spec.managementApi.url"}},
		{"untitled", fakecloud.OpListReversePrivateEndpoints, fakecloud.UntitledPageFault(502),
			swv1.ConditionReversePrivateEndpointsSynced, swv1.ReasonServerError,
			[]string{"upstream connect error or disconnect/reset before headers"}},
		{"challenged", fakecloud.OpListPipes, fakecloud.AuthChallengeFault("the key was revoked"),
			swv1.ConditionPipesSynced, swv1.ReasonUnauthorized, []string{"the key was revoked"}},
		{"wrapped", fakecloud.OpListPipes, fakecloud.EnvelopeDisagreesFault(500, "database unavailable"),
			swv1.ConditionPipesSynced, swv1.ReasonInvalidResponse,
			[]string{"database unavailable", "envelope status 500 disagrees with HTTP status 200"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.faultyWatch(tt.name, tt.op, tt.fault)
			w := f.waitFor(tt.name, 20*time.Second, tt.cond+" "+tt.reason, conditionIs(tt.cond, metav1.ConditionFalse, tt.reason))
			msg := w.Condition(tt.cond).Message
			for _, s := range tt.want {
				if !strings.Contains(msg, s) {
					t.Errorf("%s message %q lacks %q", tt.cond, msg, s)
				}
			}
			if strings.Contains(msg, "sig=abc") || strings.Contains(msg, "user:pw") {
				t.Errorf("%s message %q shows the Location's query or user info", tt.cond, msg)
			}
		})
	}
}

// A null result is an empty list: Synced, 0 items.
func TestNullResultIsSyncedEmpty(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.faultyWatch("empty", fakecloud.OpListPipes, fakecloud.NullResultFault())
	w := f.waitFor("empty", 20*time.Second, "PipesSynced True", conditionIs(swv1.ConditionPipesSynced, metav1.ConditionTrue, swv1.ReasonSynced))
	if len(w.Status.Pipes) != 0 || w.Status.Summary.Pipes != 0 {
		t.Errorf("pipes %d, summary %d; want none", len(w.Status.Pipes), w.Status.Summary.Pipes)
	}
}

// A 503 with Retry-After is waited for as the cloud asked (past the first
// backoff step of 5s), even by a sync the user requests: retryNotBefore
// shows it, and the fake cloud sees no call of the watch before it.
func TestUnavailableWaitsForRetryAfter(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const retryAfter = 8 * time.Second
	fault := fakecloud.UnavailableFault("8")
	fault.Times = 1
	f.faultyWatch("unavailable", fakecloud.OpListPipes, fault)
	w := f.waitFor("unavailable", 20*time.Second, "PipesSynced ServerError",
		conditionIs(swv1.ConditionPipesSynced, metav1.ConditionFalse, swv1.ReasonServerError))
	if msg := w.Condition(swv1.ConditionPipesSynced).Message; !strings.Contains(msg, "scheduled maintenance") || !strings.Contains(msg, "retry after 8s") {
		t.Errorf("PipesSynced message %q lacks the service's words or the wait", msg)
	}
	if w.Status.RetryNotBefore == nil {
		t.Fatal("retryNotBefore not set after a 503 with Retry-After")
	}
	// A sync requested now waits for it too, as one held by a 429 does.
	f.requestSyncAndWait("unavailable")
	f.waitFor("unavailable", 30*time.Second, "Ready after Retry-After", isReady)

	pipeCalls := f.callTimes(fakecloud.OpListPipes)
	if len(pipeCalls) < 2 {
		t.Fatalf("want at least 2 pipes calls, got %d", len(pipeCalls))
	}
	if gap := pipeCalls[1].Sub(pipeCalls[0]); gap < retryAfter {
		t.Errorf("the second pipes call came %v after the 503, before its Retry-After of %v", gap, retryAfter)
	}
	if !pipeCalls[1].After(w.Status.RetryNotBefore.Add(-time.Second)) {
		t.Errorf("the second pipes call at %v, before retryNotBefore %v", pipeCalls[1], w.Status.RetryNotBefore)
	}
}

// After a restart, a 503's wait still holds the watch that got it, and only
// it: a new watch on the same key and host is called at once.
func TestUnavailableWaitHoldsOnlyItsWatchAfterARestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.faultyWatch("unavailable", fakecloud.OpListPipes, fakecloud.UnavailableFault("600"))
	f.waitHeldFor10Minutes("unavailable")

	// The restart: a reconciler with a client that never saw the 503.
	r, budgets := restartedReconciler(t)
	f.fake.ResetCalls()

	// The newcomer is seen first (it is not created: only this reconciler
	// syncs it). The watch that got the 503 keeps its wait through its
	// retryNotBefore (the pacer's first sight, TestPacedOf).
	newcomer := f.unseenWatch("newcomer")
	if wait := r.StartSync(f.ctx, newcomer); wait != 0 {
		t.Errorf("the new watch on the same key waits %s after the restart, want none: the 503 was the other watch's", wait)
	}
	if until := budgets.HeldUntil(cloudapi.APIManagement, f.fake.URL, cloudapi.NewBasicCredentials(fakecloud.DefaultKeyID, fakecloud.DefaultKeySecret)); !until.IsZero() {
		t.Errorf("the key's budget is held until %v after the restart, want no hold", until)
	}
	deadline := time.Now().Add(10 * time.Second)
	for f.fake.Calls(fakecloud.OpListPipes) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the new watch did not call the cloud after the restart")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
