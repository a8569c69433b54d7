package controller_test

import (
	"encoding/json"
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

// Issue 28, part 4, as a user sees it: a service with one CDC pipe of 4000
// table mappings (about 1 MB) among 50 others still shows all 51 pipes by
// id, name, state and source kind; the big one's mappings are cut and
// counted in its omitted record, and StatusTruncated names it.
func TestOneBigPipeNeverHidesTheOthers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const bigID, mappings = "p-20", 4000
	pipes := make([]map[string]any, 0, 51)
	for i := range 51 {
		id := fmt.Sprintf("p-%02d", i)
		if id == bigID {
			pipes = append(pipes, fakecloud.BigCDCPipe(id, "orders_cdc", mappings))
			continue
		}
		pipes = append(pipes, fakecloud.KafkaPipe(id, "events "+id, "Running"))
	}
	f.fake.SetPipes(fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, pipes)
	if body := encodedSize(t, pipes[20]); body < 1<<20 {
		t.Fatalf("the big pipe is %d bytes, want over 1 MiB", body)
	}
	w := f.readyWatch("big")

	if len(w.Status.Pipes) != 51 || w.Status.Summary.Pipes != 51 {
		t.Fatalf("status shows %d pipes of %d, want all 51", len(w.Status.Pipes), w.Status.Summary.Pipes)
	}
	for i, p := range w.Status.Pipes {
		id := fmt.Sprintf("p-%02d", i)
		if ptr.Deref(p.ID, "") != id || p.Name == nil || ptr.Deref(p.State, "") != "Running" || p.SourceKind == nil {
			t.Errorf("pipe %d: want %s with its name, state and source kind, got %+v", i, id, p)
		}
	}
	big := w.Status.Pipes[20]
	kept := 0
	if big.Source != nil && big.Source.Postgres != nil {
		kept = len(big.Source.Postgres.TableMappings)
	}
	left := big.Omitted["source.postgres.tableMappings"]
	if ptr.Deref(big.SourceKind, "") != "postgres" || left == 0 || int(left)+kept != mappings {
		t.Errorf("big pipe: %d table mappings kept, omitted %v; want the rest of %d counted", kept, big.Omitted, mappings)
	}
	c := w.Condition(swv1.ConditionStatusTruncated)
	want := fmt.Sprintf("pipe %s: %d source.postgres.tableMappings", bigID, left)
	if c == nil || c.Reason != swv1.ReasonTooLarge || !strings.Contains(c.Message, want) || len(c.Message) > 2048 {
		t.Errorf("StatusTruncated = %+v, want TooLarge naming %q, bounded", c, want)
	}
	if size := encodedSize(t, &w.Status); size > controller.DefaultStatusSizeLimit {
		t.Errorf("status is %d bytes, over the limit %d", size, controller.DefaultStatusSizeLimit)
	}
}

// When the cloud sends two pipes with one id, status shows the one whose
// encoding sorts first and the summary counts that one: reversing the
// cloud's order of the same data leaves the status as it was.
func TestDuplicatePipesGiveOneStatusInEitherOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	running := fakecloud.KafkaPipe("p-a", "orders", "Running")
	stopped := fakecloud.KafkaPipe("p-a", "orders", "Stopped")
	other := fakecloud.KafkaPipe("p-b", "events", "Paused")
	f.fake.SetPipes(fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, []map[string]any{running, other, stopped})
	f.readyWatch("dup")
	first := f.requestSyncAndWait("dup")

	f.fake.SetPipes(fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, []map[string]any{stopped, other, running})
	second := f.requestSyncAndWait("dup")

	wantByState := map[string]int32{"Running": 1, "Paused": 1}
	for name, w := range map[string]*swv1.ServiceWatch{"cloud's order": first, "reversed": second} {
		if len(w.Status.Pipes) != 2 || ptr.Deref(w.Status.Pipes[0].State, "") != "Running" ||
			!maps.Equal(w.Status.Summary.PipesByState, wantByState) || w.Status.Summary.Pipes != 2 {
			t.Errorf("%s: pipes %s, summary %+v; want p-a Running, counted as shown", name, indentedJSON(w.Status.Pipes), w.Status.Summary)
		}
	}
	if a, b := statusAsCompared(t, first), statusAsCompared(t, second); a != b {
		t.Errorf("reversing the cloud's order changed status:\n%s\nthen\n%s", a, b)
	}
}

// statusAsCompared is w's status as JSON, without what a requested sync
// changes by itself: its echo, the time of the sync, the conditions' times.
func statusAsCompared(t *testing.T, w *swv1.ServiceWatch) string {
	s := w.Status.DeepCopy()
	s.LastHandledRequestedAt, s.LastSyncTime = "", nil
	for i := range s.Conditions {
		s.Conditions[i].LastTransitionTime = metav1.Time{Time: time.Time{}}
	}
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// encodedSize is the size of v's JSON.
func encodedSize(t *testing.T, v any) int {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return len(raw)
}
