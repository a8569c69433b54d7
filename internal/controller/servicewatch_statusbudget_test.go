package controller_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/conditions"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// Memory is bounded per namespace, not only per watch: four watches of one
// namespace whose answers fill a status each keep together no more than the
// namespace's budget (the suite's is two statuses at the limit); the later
// ones have their lists cut, keep their counts, and say it was for the
// namespace's budget. A watch of the same answer in another namespace keeps
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
	if strings.Contains(conditions.Get(alone, swv1.ConditionStatusTruncated).Message, "namespace") {
		t.Errorf("the watch alone in its namespace was cut for a namespace budget: %s", conditions.Get(alone, swv1.ConditionStatusTruncated).Message)
	}
	full := len(alone.Status.Pipes)

	kept, cut := 0, 0
	var fewest *swv1.ServiceWatch
	for _, name := range names {
		w := crowded.waitFor(name, 60*time.Second, "StatusTruncated", truncated)
		msg := conditions.Get(w, swv1.ConditionStatusTruncated).Message
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
