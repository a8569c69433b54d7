package controller_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
	"github.com/servicewatch/servicewatch/internal/tenancy"
)

// Memory is bounded per namespace, not only per watch: four watches of one
// namespace whose answers fill a status each keep together no more than the
// namespace's budget (the suite's holds two statuses at the limit, not
// three); the later ones have their lists cut, keep their counts, and say
// it was for the namespace's budget. A watch of the same answer in another namespace keeps
// its whole status.
func TestNamespaceStatusBudget(t *testing.T) {
	t.Parallel()
	crowded := newFixture(t)
	other := newNamedFixture(t, t.Name()+"-other")
	const total = 5000
	for _, f := range []*fixture{crowded, other} {
		template := f.fake.Data().Organizations[fakecloud.DefaultOrganizationID][fakecloud.DefaultServiceID].Pipes[0]
		pipes := make([]map[string]any, total)
		for i := range pipes {
			p := asObject(t, normalize(t, template))
			p["id"] = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
			p["name"] = fmt.Sprintf("pipe-%d", i)
			pipes[i] = p
		}
		f.fake.SetPipes(fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, pipes)
		f.createSecrets()
	}
	names := []string{"w1", "w2", "w3", "w4"}
	for _, name := range names {
		crowded.create(crowded.newWatch(name))
	}
	other.create(other.newWatch("alone"))
	truncated := conditionIs(swv1.ConditionStatusTruncated, metav1.ConditionTrue, swv1.ReasonTooLarge)
	alone := other.waitFor("alone", 60*time.Second, "StatusTruncated", truncated)
	if strings.Contains(alone.Condition(swv1.ConditionStatusTruncated).Message, "namespace") {
		t.Errorf("the watch alone in its namespace was cut for a namespace budget: %s", alone.Condition(swv1.ConditionStatusTruncated).Message)
	}
	full := len(alone.Status.Pipes)

	kept, cut := 0, 0
	var fewest *swv1.ServiceWatch
	for _, name := range names {
		w := crowded.waitFor(name, 60*time.Second, "StatusTruncated", truncated)
		msg := w.Condition(swv1.ConditionStatusTruncated).Message
		if w.Status.Summary.Pipes != total {
			t.Errorf("%s: summary.pipes = %d, want the full %d", name, w.Status.Summary.Pipes, total)
		}
		if fewest == nil || len(w.Status.Pipes) < len(fewest.Status.Pipes) {
			fewest = w
		}
		switch {
		case len(w.Status.Pipes) == full && !strings.Contains(msg, "--namespace-status-budget"):
			kept++
		case len(w.Status.Pipes) < full && strings.Contains(msg, "namespace "+crowded.ns) && strings.Contains(msg, "--namespace-status-budget"):
			cut++
		default:
			t.Errorf("%s: %d of %d pipes listed (%d alone), StatusTruncated %q: want all or fewer with the namespace budget named", name, len(w.Status.Pipes), total, full, msg)
		}
	}
	if kept != 2 || cut != 2 {
		t.Errorf("%d watches kept their whole status and %d were cut for the namespace budget, want 2 and 2", kept, cut)
	}
	// The state metrics keep no more of a watch's items than the room its
	// status had: the watch cut the most shows fewer pipe series than the
	// watch alone in its namespace (both past --item-metrics-max-bytes
	// otherwise).
	pipeSeries := func(ns, name string) int {
		return len(regexp.MustCompile(`servicewatch_pipe_info\{[^}]*namespace="`+ns+`"[^}]*servicewatch="`+name+`"`).FindAllString(metricsText(t), -1))
	}
	if most, least := pipeSeries(other.ns, "alone"), pipeSeries(crowded.ns, fewest.Name); least >= most {
		t.Errorf("%s, cut to %d pipes in status, shows %d pipe series; the watch alone in its namespace %d: want fewer",
			fewest.Name, len(fewest.Status.Pipes), least, most)
	}
	sum := 0
	for _, name := range names {
		sum += len(mustJSON(t, crowded.rawStatus(name)))
	}
	if sum > suiteNamespaceStatusBudget {
		t.Errorf("the namespace's statuses keep %d bytes of JSON together, over its budget of %d", sum, suiteNamespaceStatusBudget)
	}
}

// One namespace's watches cannot take another's room in the manager's
// status budget, however many they are: a manager whose budget (scaled down
// to 36 KiB, 18 KiB a namespace for two) is already booked past its end by 14
// stalled watches of one namespace (each keeps its conditions and counts,
// a few KiB, which no budget can refuse) still gives another namespace its
// part: that namespace's first watch keeps all its 40 pipes; its second,
// for which the namespace's part has no room left, is cut, and its message
// tells of its own namespace only: not the stalled namespace, nor what all
// watches keep, nor the manager's total. Before, the stalled watches'
// bookings counted against every namespace: the first watch kept 0 pipes,
// and its message gave what all the others keep.
func TestStatusBudgetPartPerNamespace(t *testing.T) {
	t.Parallel()
	const (
		manager      = "statusbudget"
		managerBytes = 36 << 10
		part         = managerBytes / 2 // two namespaces
		stalled      = 14
		pipes        = 40
	)
	crowded := newNamedFixture(t, t.Name()+"-crowded")
	victim := newNamedFixture(t, t.Name()+"-victim")
	fast := ratebudget.RateLimit{Requests: 1000, Per: time.Second, Burst: 1000}
	ledger := tenancy.NewStatusLedger(tenancy.StatusBudget{Setting: "--namespace-status-budget"}, // no bound
		tenancy.StatusBudget{Bytes: managerBytes, Setting: "--total-status-budget"})
	startOwnManager(t, manager, cloudapi.NewBudgets(fast, fast), func(_ ctrl.Manager, r *controller.ServiceWatchReconciler) {
		r.StatusBudget = ledger
	})
	own := func(w *swv1.ServiceWatch) *swv1.ServiceWatch {
		w.Labels = map[string]string{ownManagerLabel: manager}
		return w
	}
	// The crowded namespace's watches read nothing: their Secret is missing.
	for i := range stalled {
		crowded.create(own(crowded.newWatch(fmt.Sprintf("stalled-%d", i))))
	}
	for i := range stalled {
		crowded.waitFor(fmt.Sprintf("stalled-%d", i), 60*time.Second, "Stalled SecretNotFound",
			conditionIs(swv1.ConditionStalled, metav1.ConditionTrue, swv1.ReasonSecretNotFound))
	}
	if crowdedBytes, _ := ledger.Kept(crowded.ns); crowdedBytes < managerBytes {
		t.Fatalf("the stalled watches' statuses are charged %d bytes, under the manager's budget of %d: the test proves nothing", crowdedBytes, managerBytes)
	}

	list := make([]map[string]any, pipes) // small pipes: the 40 fit the namespace's part with room to spare
	for i := range list {
		list[i] = map[string]any{"id": fmt.Sprintf("00000000-0000-4000-8000-%012d", i), "name": fmt.Sprintf("pipe-%d", i), "state": "Running"}
	}
	victim.fake.SetPipes(fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, list)
	victim.createSecrets()
	victim.create(own(victim.newWatch("first")))
	first := victim.waitFor("first", 30*time.Second, "Ready", isReady)
	if len(first.Status.Pipes) != pipes || first.Condition(swv1.ConditionStatusTruncated) != nil {
		t.Errorf("the other namespace's first watch lists %d of its %d pipes (StatusTruncated %+v): the stalled watches took its room",
			len(first.Status.Pipes), pipes, first.Condition(swv1.ConditionStatusTruncated))
	}
	firstBytes, _ := ledger.Kept(victim.ns)
	t.Logf("first is charged %d bytes", firstBytes)

	victim.create(own(victim.newWatch("second")))
	second := victim.waitFor("second", 30*time.Second, "StatusTruncated",
		conditionIs(swv1.ConditionStatusTruncated, metav1.ConditionTrue, swv1.ReasonTooLarge))
	msg := second.Condition(swv1.ConditionStatusTruncated).Message
	if len(second.Status.Pipes) >= pipes || !strings.Contains(msg, "namespace "+victim.ns) || !strings.Contains(msg, "--total-status-budget") {
		t.Errorf("the second watch lists %d of %d pipes, StatusTruncated %q: want fewer, cut for its namespace's part of --total-status-budget", len(second.Status.Pipes), pipes, msg)
	}
	if strings.Contains(msg, crowded.ns) {
		t.Errorf("the message names the other namespace: %q", msg)
	}
	for _, m := range regexp.MustCompile(`(\d+) KiB`).FindAllStringSubmatch(msg, -1) {
		if n, _ := strconv.Atoi(m[1]); n > part>>10 {
			t.Errorf("the message gives %s KiB, more than the namespace may keep: what others keep, or the manager's total: %q", m[1], msg)
		}
	}
}
