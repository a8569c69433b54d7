package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
	"github.com/servicewatch/servicewatch/internal/cloudapi/slim"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/pacing"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// stubCloud answers like the client: it hands every distinct item to Each and
// keeps only the first `keep` of them.
type stubCloud struct {
	pipes []swv1.Pipe
	keep  int
	// panics makes every call panic, as a bug triggered by a cloud answer
	// would.
	panics bool
}

func (c stubCloud) ListPipes(_ context.Context, _ string, _ cloudapi.BasicCredentials, _, _ string, opts cloudapi.ListOptions[swv1.Pipe]) (cloudapi.List[swv1.Pipe], error) {
	if c.panics {
		panic("boom in pipes")
	}
	for i := range c.pipes {
		if opts.Each != nil {
			opts.Each(&c.pipes[i])
		}
	}
	list := cloudapi.List[swv1.Pipe]{Items: c.pipes[:c.keep], Total: len(c.pipes)}
	if opts.KeepEncoded { // as the client keeps them: through a keeper
		k := slim.NewKeeper(func(p *swv1.Pipe) string { return ptr.Deref(p.ID, "") }, 0, nil, nil)
		for i := range list.Items {
			if err := k.Add(&list.Items[i], lenient.Report{}); err != nil {
				return cloudapi.List[swv1.Pipe]{}, err
			}
		}
		encoded, err := k.Encoded()
		list.Items, list.Encoded = nil, encoded
		return list, err
	}
	return list, nil
}

func (c stubCloud) ListReversePrivateEndpoints(context.Context, string, cloudapi.BasicCredentials, string, string, cloudapi.ListOptions[swv1.ReversePrivateEndpoint]) (cloudapi.List[swv1.ReversePrivateEndpoint], error) {
	return cloudapi.List[swv1.ReversePrivateEndpoint]{}, nil
}

func (c stubCloud) GetAlertFrom(context.Context, cloudapi.AlertSource, string) (cloudapi.AlertResult, error) {
	if c.panics {
		panic("boom in alerts")
	}
	return cloudapi.AlertResult{}, nil
}

// ListAlerts: the stub's host has no list route, so its alerts are read
// one by one.
func (c stubCloud) ListAlerts(context.Context, cloudapi.AlertSource, cloudapi.AlertPageRequest) (cloudapi.AlertPage, error) {
	return cloudapi.AlertPage{}, cloudapi.ErrNoListRoute
}

func (c stubCloud) Admit(string, string, ratebudget.CredentialID, int) time.Duration { return 0 }
func (c stubCloud) Hold(string, string, ratebudget.CredentialID, time.Time)          {}

func (c stubCloud) MaxBatch(string) int { return 0 }

func (c stubCloud) Allowance(string, string) float64 { return 0 }

// The client keeps what fits the status; the summary counts and the state
// metrics still see every pipe it listed.
func TestPipesCountAndMetricsSeeEveryPipe(t *testing.T) {
	pipes := make([]swv1.Pipe, 5)
	for i := range pipes {
		pipes[i] = pipe(fmt.Sprintf("p%d", i), []string{"Running", "Failed"}[i%2])
	}
	w := testWatch()
	in := &syncScope{watch: w, management: managementAccess{apiAccess: apiAccess{url: "https://api.example.com"}}, metricBytes: metrics.DefaultMaxItemBytes}
	res := readPipes(context.Background(), stubCloud{pipes: pipes, keep: 2}, in)
	applyResults(w, syncParts(), []partResult{res, endpointsOK(0), alertsFetched(nil)}, DefaultStatusSizeLimit)

	if len(w.Status.Pipes) != 2 || w.Status.Summary.Pipes != 5 {
		t.Errorf("status lists %d pipes and counts %d, want 2 and 5", len(w.Status.Pipes), w.Status.Summary.Pipes)
	}
	if got := w.Status.Summary.PipesByState; got["Running"] != 3 || got["Failed"] != 2 {
		t.Errorf("pipesByState = %v, want 3 Running and 2 Failed", got)
	}
	snap := stateMetricsOf(w, res.metricItems)
	if len(snap.Pipes) != 5 || snap.Pipes[4] != (metrics.Pipe{ID: "p4", State: "Running"}) {
		t.Errorf("state metrics show %d pipes (%v), want all 5", len(snap.Pipes), snap.Pipes)
	}
	if plain := stateMetricsOf(w); len(plain.Pipes) != 2 {
		t.Errorf("without the part's items, the metrics show status's %d pipes", len(plain.Pipes))
	}
}

// The items gathered for the state metrics while a list streams are bounded
// in bytes, whatever the length of the list and of its names (issue 17: a
// tenant's URL serving long names made 36 MiB per watch), and are the first
// by ID.
func TestMetricItemsAreBoundedInBytes(t *testing.T) {
	const budget = 64 << 10
	c := newCollector(budget, pipeItem)
	long := strings.Repeat("n", 3600)
	for i := range 10_000 {
		p := swv1.Pipe{ID: ptr.To(fmt.Sprintf("p%05d", 9_999-i)), Name: ptr.To(long)}
		c.add(&p)
	}
	items := c.items.Items()
	bytes := 0
	for _, p := range items {
		bytes += len(p.ID) + len(p.Name)
	}
	if bytes > budget || len(items) == 0 {
		t.Errorf("%d items of %d bytes kept, want some, within %d bytes", len(items), bytes, budget)
	}
	if items[0].ID != "p00000" {
		t.Errorf("first item kept %q, want p00000: the first by ID", items[0].ID)
	}
	if c.items.Seen() != 10_000 {
		t.Errorf("Seen = %d, want 10000", c.items.Seen())
	}
}

// A panic while reading one part fails that part, not the manager.
func TestAPanickingReadFailsItsPartOnly(t *testing.T) {
	w := testWatch("a1", "a2")
	in := &syncScope{watch: w, management: managementAccess{apiAccess: apiAccess{url: "https://api.example.com"}}, alerts: alertAccess{apiAccess: apiAccess{url: "https://alerts.example.com"}}, alertConcurrency: 2}
	in.parts = syncParts()
	results := readCloud(context.Background(), stubCloud{panics: true}, in)
	if f := results[0].failure; f == nil || !strings.Contains(f.message, "boom in pipes") {
		t.Errorf("pipes: %+v, want a failure naming the panic", results[0])
	}
	if results[1].failure != nil {
		t.Errorf("endpoints failed beside the panicking pipes: %v", results[1].failure)
	}
	if f := results[2].failure; f == nil || !strings.Contains(f.message, "boom in alerts") {
		t.Errorf("alerts: %+v, want a failure naming the panic", results[2].failure)
	}
}

func TestListedMessage(t *testing.T) {
	tests := []struct {
		name       string
		total      int
		incomplete int
		described  []string
		want       string
	}{
		{"every item read", 3, 0, nil, "Listed 3 pipes"},
		{"one item lost a field", 3, 1, []string{"p1 (scaling.replicas)"},
			"Listed 3 pipes; 1 had fields left out that could not be read (kept as sent in otherFields): p1 (scaling.replicas)"},
		{"more than the client described", 100, 7, []string{"p1 (a)", "p2 (b)"},
			"Listed 100 pipes; 7 had fields left out that could not be read (kept as sent in otherFields): p1 (a); p2 (b); and 5 more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := listedMessage(tt.total, "pipes", tt.incomplete, tt.described); got != tt.want {
				t.Errorf("listedMessage =\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
}

func TestAssess(t *testing.T) {
	tests := []struct {
		name    string
		results []partResult
		want    pacing.Outcome
	}{
		{"all synced", []partResult{{}, {}, {}}, pacing.Outcome{}},
		{"a stalled failure is not transient", []partResult{failed(swv1.ReasonUnauthorized, ""), {}, {}}, pacing.Outcome{Failed: true}},
		{"an idle service waits for the interval", []partResult{failed(swv1.ReasonServiceIdle, ""), failed(swv1.ReasonServiceIdle, ""), {}}, pacing.Outcome{Failed: true}},
		{"any transient failure makes the sync transient", []partResult{failed(swv1.ReasonUnauthorized, ""), failed(swv1.ReasonServerError, ""), {}}, pacing.Outcome{Failed: true, Transient: true}},
		{"the longest Retry-After wins", []partResult{
			{failure: &failure{reason: swv1.ReasonRateLimited, retryAfter: time.Minute}},
			{failure: &failure{reason: swv1.ReasonRateLimited, retryAfter: time.Hour}}, {},
		}, pacing.Outcome{Failed: true, Transient: true, RetryAfter: time.Hour}},
	}
	for _, tt := range tests {
		if got := assess(tt.results); got != tt.want {
			t.Errorf("%s: assess = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// A part whose result is one value, not a list, fits the part table: from
// its table entry alone its condition is owned (another writer's copy of it
// does not survive the write), what it read is written into the status, and
// Ready, StatusTruncated and the item metrics, which count lists, leave it
// out, all without a panic; with the lists cut to the limit as well.
func TestAPartThatIsNotAListFitsTheTable(t *testing.T) {
	const serviceState = "ServiceStateSynced" // a test-only part's condition
	oneValue := part{name: "service_state", condition: serviceState, noun: "service state", inUse: always,
		read: func(context.Context, Cloud, *syncScope) partResult {
			// The part's one value; the test borrows alertsReadBy as its
			// field, the API having no field of a service's state.
			return partResult{message: "the service is running", apply: func(s *swv1.ServiceWatchStatus) error { s.AlertsReadBy = "running"; return nil }}
		}}
	parts := append(syncParts(), oneValue)
	if ownsCondition(syncParts(), serviceState) || !ownsCondition(parts, serviceState) {
		t.Fatalf("the condition %s is owned by the table without its part, or not with it: want owned exactly when its part is in the table", serviceState)
	}

	w := testWatch()
	theirs := metav1.Condition{Type: serviceState, Status: metav1.ConditionFalse, Reason: "Tampered", Message: "not the controller's"}
	reviewed := metav1.Condition{Type: "example.com/Reviewed", Status: metav1.ConditionTrue, Reason: "Approved"}
	w.Status.Conditions = []metav1.Condition{theirs, reviewed}
	base := slices.Clone(w.Status.Conditions)
	results := []partResult{pipesOK(mediumPipes(40)...), endpointsOK(1), alertsFetched(nil), oneValue.read(context.Background(), nil, nil)}
	const limit = 32 << 10 // cuts the pipes
	buildStatus(w, statusChange{synced: &syncScope{parts: parts, results: results, outcome: assess(results), allowed: pacing.Allowance{Every: time.Minute}}}, limit)
	keepOthersConditions(w, base, parts)

	if got := w.Condition(serviceState); got == nil || got.Status != metav1.ConditionTrue || got.Reason != swv1.ReasonSynced || got.Message != "the service is running" {
		t.Errorf("the one-value part's condition is %+v, want True, Synced, its message (the controller's, not another writer's)", got)
	}
	if w.Status.AlertsReadBy != "running" {
		t.Errorf("the one-value part's value is %q in status, want it written", w.Status.AlertsReadBy)
	}
	if c := w.Condition(reviewed.Type); c == nil || c.Reason != reviewed.Reason {
		t.Errorf("another writer's condition is %+v, want it kept", c)
	}
	if want := "Synced 40 pipes, 1 reverse private endpoints and 0 alerts"; !w.IsReady() || w.Condition(swv1.ConditionReady).Message != want {
		t.Errorf("Ready is %+v, want True, Synced: %s", w.Condition(swv1.ConditionReady), want)
	}
	truncated := w.Condition(swv1.ConditionStatusTruncated)
	if want := "status lists 40 of 40 pipes, 1 of 1 reverse private endpoints and 0 of 0 alerts ("; truncated == nil || !strings.HasPrefix(truncated.Message, want) {
		t.Errorf("with the pipes over the limit, StatusTruncated is %+v, want it to begin %q: the lists, cut, and nothing of the one-value part", truncated, want)
	}
	syncMetrics, err := metrics.NewSync(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	recordSync(syncMetrics, w, parts)
}
