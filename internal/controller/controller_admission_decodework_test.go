package controller

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/pacing"
	"github.com/servicewatch/servicewatch/internal/tenancy"
)

// costlyCloud answers every list with an answer that cost units of work to
// decode, as the client reports it (ListOptions.Work).
type costlyCloud struct {
	budgetCloud
	units int64
}

func (c *costlyCloud) ListPipes(ctx context.Context, url string, creds cloudapi.BasicCredentials, org, svc string, opts cloudapi.ListOptions[swv1.Pipe]) (cloudapi.List[swv1.Pipe], error) {
	opts.Work(c.units)
	return c.budgetCloud.ListPipes(ctx, url, creds, org, svc, opts)
}

// noSecrets knows no Secret.
type noSecrets struct{}

func (noSecrets) Version(context.Context, types.NamespacedName) string { return "" }

// A namespace whose answers cost more than its share of decode work waits
// before its next sync until it has earned the work back; another
// namespace's syncs are admitted meanwhile, as they would be without it.
func TestANamespaceOverItsDecodeShareWaitsAndOthersDoNot(t *testing.T) {
	clock := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	syncMetrics, err := metrics.NewSync(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	cloud := &costlyCloud{units: 5000}
	r := &ServiceWatchReconciler{Cloud: cloud, Budgets: cloud, Metrics: syncMetrics, clock: pacing.NewClock(now, nil),
		WorkShares: tenancy.NewWorkShares(100, 1000, now)} // 100 units a second, 1000 at once
	r.defaults()
	r.credentials.Secrets = noSecrets{}
	r.pacer = testPacer(r.clock.Now)
	scopeIn := func(namespace string) *syncScope {
		w := testWatch()
		w.Namespace = namespace
		in := r.newScope(context.Background(), w)
		in.management = newManagementAccess("https://api.example.com", cloudapi.NewBasicCredentials("k-"+namespace, "s"))
		return in
	}
	hostile, victim := scopeIn("hostile"), scopeIn("victim")

	if res := readPipes(context.Background(), cloud, hostile); res.failure != nil {
		t.Fatalf("the read failed: %v", res.failure)
	}
	if a := r.admitAt(hostile, pacing.User); a.wait != 40*time.Second || !a.overShare {
		t.Errorf("the hostile namespace waits %s (for its share: %t), want the 40s it takes to earn back 4000 units at 100/s", a.wait, a.overShare)
	}
	if a := r.admitAt(victim, pacing.Periodic); a.wait != 0 {
		t.Errorf("the victim namespace waits %s for the hostile one's decode work", a.wait)
	}
	clock = clock.Add(40 * time.Second)
	if a := r.admitAt(hostile, pacing.User); a.wait != 0 {
		t.Errorf("the hostile namespace still waits %s once it has earned its work back", a.wait)
	}
}

// failingCloud fails every list of pipes with err.
type failingCloud struct {
	stubCloud
	err error
}

func (c failingCloud) ListPipes(context.Context, string, cloudapi.BasicCredentials, string, string, cloudapi.ListOptions[swv1.Pipe]) (cloudapi.List[swv1.Pipe], error) {
	return cloudapi.List[swv1.Pipe]{}, c.err
}

// An answer over its decode work budget fails its part only, with
// DecodeBudgetExceeded and the client's words; the part keeps the data it
// had, the other parts are written, and the watch does not stall.
func TestAnAnswerOverItsDecodeBudgetKeepsThePartsLastData(t *testing.T) {
	w := testWatch()
	parts := syncParts()
	applyResults(w, parts, []partResult{pipesOK(pipe("a", "Running")), endpointsOK(0), alertsFetched(nil)}, DefaultStatusSizeLimit)

	cloud := failingCloud{err: &cloudapi.Error{Reason: cloudapi.ReasonDecodeBudgetExceeded, StatusCode: 200, Operation: cloudapi.OperationListPipes,
		Err: errors.New("decode management response: decode work budget exceeded: more than 402653184 units of work")}}
	in := &syncScope{watch: w, management: newManagementAccess("https://api.example.com", cloudapi.NewBasicCredentials("k", "s"))}
	res := readPipes(context.Background(), cloud, in)
	applyResults(w, parts, []partResult{res, endpointsOK(2), alertsFetched(nil)}, DefaultStatusSizeLimit)

	c := w.Condition(swv1.ConditionPipesSynced)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != swv1.ReasonDecodeBudgetExceeded || !strings.Contains(c.Message, "decode work budget exceeded") {
		t.Errorf("PipesSynced = %+v, want False, DecodeBudgetExceeded, saying why", c)
	}
	if len(w.Status.Pipes) != 1 || *w.Status.Pipes[0].ID != "a" || w.Status.Summary.Pipes != 1 {
		t.Errorf("the pipes lost their last data: %+v (summary %d)", w.Status.Pipes, w.Status.Summary.Pipes)
	}
	if w.Status.Summary.ReversePrivateEndpoints != 2 {
		t.Errorf("the endpoints were not written: summary %d", w.Status.Summary.ReversePrivateEndpoints)
	}
	if w.Condition(swv1.ConditionStalled) != nil {
		t.Error("the watch stalled; the answer may change")
	}
}
