package controller_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// Issue 39, as a user sees it: a service of 10,000 pipes, 2,000 of them
// failing (Failed, InternalError, Degraded) and spread over the id order,
// lists every failing pipe and at least 3,000 pipes in all, in id order,
// within the status size limit; the summary counts every pipe by state, and
// StatusTruncated says the failing ones were kept first and where the rest
// are. (Before: 949 pipes listed, 189 of the failing ones.)
func TestStatusListsEveryFailingPipeFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const total, every = 10_000, 5 // every fifth pipe fails
	failingStates := []string{"Failed", "InternalError", "Degraded"}
	pipes := make([]map[string]any, total)
	failing := map[string]bool{}
	wantByState := map[string]int32{}
	for i := range pipes {
		id, state := fmt.Sprintf("00000000-0000-4000-8000-%012d", i), "Running"
		if i%every == every-1 {
			state = failingStates[(i/every)%len(failingStates)]
			failing[id] = true
		}
		wantByState[state]++
		p := fakecloud.KafkaPipe(id, fmt.Sprintf("pipe-%d", i), state)
		delete(p, "destination") // under the fake's 16 MiB answer: about 1 kB a pipe
		delete(p, "fieldMappings")
		pipes[i] = p
	}
	if size := encodedSize(t, pipes); size > 15<<20 {
		t.Fatalf("the pipes are %d bytes, over the fake's answer limit", size)
	}
	f.fake.SetPipes(fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, pipes)
	f.createSecrets()
	f.create(f.newWatch("big"))
	w := f.waitFor("big", 60*time.Second, "StatusTruncated", conditionIs(swv1.ConditionStatusTruncated, metav1.ConditionTrue, swv1.ReasonTooLarge))

	listed, bare := 0, 0
	for i, p := range w.Status.Pipes {
		id := ptr.Deref(p.ID, "")
		if failing[id] {
			listed++
		}
		if p.Source == nil {
			bare++
		}
		if i > 0 && ptr.Deref(w.Status.Pipes[i-1].ID, "") >= id {
			t.Fatalf("status.pipes not in id order at %d: %s then %s", i, ptr.Deref(w.Status.Pipes[i-1].ID, ""), id)
		}
		if p.Name == nil || p.State == nil {
			t.Fatalf("pipe %s lost its identity: %+v", id, p)
		}
	}
	t.Logf("listed %d of %d pipes (%d by identity), %d of %d failing, status %d bytes",
		len(w.Status.Pipes), total, bare, listed, len(failing), encodedSize(t, &w.Status))
	if listed != len(failing) {
		t.Errorf("status lists %d of the %d failing pipes, want all", listed, len(failing))
	}
	if len(w.Status.Pipes) < 3000 {
		t.Errorf("status lists %d pipes, want at least 3000", len(w.Status.Pipes))
	}
	if len(w.Status.LeftOutSince) == 0 {
		t.Error("status keeps no since of the pipes it left out")
	}
	if w.Status.Summary.Pipes != total || !maps.Equal(w.Status.Summary.PipesByState, wantByState) {
		t.Errorf("summary: %d pipes by state %v, want %d by %v", w.Status.Summary.Pipes, w.Status.Summary.PipesByState, total, wantByState)
	}
	msg := w.Condition(swv1.ConditionStatusTruncated).Message
	for _, want := range []string{fmt.Sprintf("%d of %d pipes", len(w.Status.Pipes), total), "need attention", "servicewatch_pipe_info"} {
		if !strings.Contains(msg, want) {
			t.Errorf("StatusTruncated %q does not say %q", msg, want)
		}
	}
	if size := encodedSize(t, &w.Status); size > controller.DefaultStatusSizeLimit {
		t.Errorf("status is %d bytes, over the limit %d", size, controller.DefaultStatusSizeLimit)
	}
}
