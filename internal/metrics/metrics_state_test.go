package metrics_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/servicewatch/servicewatch/internal/metrics"
)

var families = []string{
	"servicewatch_pipe_info",
	"servicewatch_reverse_private_endpoint_info",
	"servicewatch_alert_info",
	"servicewatch_alert_fetch_failed",
	"servicewatch_condition",
	"servicewatch_last_sync_timestamp_seconds",
	"servicewatch_interval_seconds",
}

// sample is a watch like the demo's: two pipes, an endpoint, two alerts of
// which one failed its latest fetch.
func sample() metrics.Watch {
	return metrics.Watch{
		Namespace: "data", Name: "prod",
		Conditions: []metav1.Condition{
			{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Synced", Message: "not exported"},
			{Type: "AlertsSynced", Status: metav1.ConditionFalse, Reason: "NotFound"},
		},
		LastSyncTime: time.Unix(1_800_000_000, 0),
		Interval:     5 * time.Minute,
		Pipes: []metrics.Pipe{
			{ID: "p1", Name: "events", State: "Running", SourceKind: "kafka"},
			{ID: "p2", Name: "files", State: "Stopped", SourceKind: "objectStorage"},
		},
		Endpoints: []metrics.Endpoint{{ID: "e1", Type: "VPC_ENDPOINT_SERVICE", Status: "Ready"}},
		Alerts: []metrics.Alert{
			{ID: "a1", Name: "lag", State: "active"},
			{ID: "a2", Name: "errors", State: "disabled", FetchFailed: true},
		},
	}
}

const sampleHelp = `
# HELP servicewatch_alert_fetch_failed 1 while the latest fetch of an alert of a ServiceWatch failed (its info then shows the last successful fetch); absent otherwise.
# TYPE servicewatch_alert_fetch_failed gauge
# HELP servicewatch_alert_info An alert of a ServiceWatch, with its state as the alert API last returned it. Always 1.
# TYPE servicewatch_alert_info gauge
# HELP servicewatch_condition A condition of a ServiceWatch's status, with its status and reason. Always 1.
# TYPE servicewatch_condition gauge
# HELP servicewatch_interval_seconds Sync interval of a ServiceWatch, in seconds.
# TYPE servicewatch_interval_seconds gauge
# HELP servicewatch_last_sync_timestamp_seconds Unix time of a ServiceWatch's last sync that reached the cloud; absent until the first.
# TYPE servicewatch_last_sync_timestamp_seconds gauge
# HELP servicewatch_pipe_info A pipe of a ServiceWatch, with its state and source kind (kafka, objectStorage, kinesis, postgres, pubsub, mysql, bigquery, mongodb, or the cloud's own name of a kind the operator does not know; several joined by a comma). Always 1.
# TYPE servicewatch_pipe_info gauge
# HELP servicewatch_reverse_private_endpoint_info A reverse private endpoint of a ServiceWatch, with its type and status. Always 1.
# TYPE servicewatch_reverse_private_endpoint_info gauge
`

func TestCollector(t *testing.T) {
	tests := []struct {
		name        string
		itemMetrics bool
		apply       func(c *metrics.State)
		want        string
	}{{
		name:        "every series of a watch",
		itemMetrics: true,
		apply:       func(c *metrics.State) { c.Set(sample()) },
		want: `
servicewatch_alert_fetch_failed{alert_id="a2",namespace="data",servicewatch="prod"} 1
servicewatch_alert_info{alert_id="a1",alert_name="lag",namespace="data",servicewatch="prod",state="active"} 1
servicewatch_alert_info{alert_id="a2",alert_name="errors",namespace="data",servicewatch="prod",state="disabled"} 1
servicewatch_condition{namespace="data",reason="NotFound",servicewatch="prod",status="False",type="AlertsSynced"} 1
servicewatch_condition{namespace="data",reason="Synced",servicewatch="prod",status="True",type="Ready"} 1
servicewatch_interval_seconds{namespace="data",servicewatch="prod"} 300
servicewatch_last_sync_timestamp_seconds{namespace="data",servicewatch="prod"} 1.8e+09
servicewatch_pipe_info{namespace="data",pipe_id="p1",pipe_name="events",servicewatch="prod",source_kind="kafka",state="Running"} 1
servicewatch_pipe_info{namespace="data",pipe_id="p2",pipe_name="files",servicewatch="prod",source_kind="objectStorage",state="Stopped"} 1
servicewatch_reverse_private_endpoint_info{endpoint_id="e1",namespace="data",servicewatch="prod",status="Ready",type="VPC_ENDPOINT_SERVICE"} 1
`,
	}, {
		name:        "a removed pipe, a changed state, a fixed alert and condition leave no stale series",
		itemMetrics: true,
		apply: func(c *metrics.State) {
			c.Set(sample())
			w := sample()
			w.Pipes = []metrics.Pipe{{ID: "p1", Name: "events", State: "Failed", SourceKind: "kafka"}}
			w.Endpoints = nil
			w.Alerts[1].FetchFailed = false
			w.Conditions[1] = metav1.Condition{Type: "AlertsSynced", Status: metav1.ConditionTrue, Reason: "Synced"}
			w.LastSyncTime = time.Unix(1_800_000_300, 0)
			w.Interval = time.Minute
			c.Set(w)
		},
		want: `
servicewatch_alert_info{alert_id="a1",alert_name="lag",namespace="data",servicewatch="prod",state="active"} 1
servicewatch_alert_info{alert_id="a2",alert_name="errors",namespace="data",servicewatch="prod",state="disabled"} 1
servicewatch_condition{namespace="data",reason="Synced",servicewatch="prod",status="True",type="AlertsSynced"} 1
servicewatch_condition{namespace="data",reason="Synced",servicewatch="prod",status="True",type="Ready"} 1
servicewatch_interval_seconds{namespace="data",servicewatch="prod"} 60
servicewatch_last_sync_timestamp_seconds{namespace="data",servicewatch="prod"} 1.8000003e+09
servicewatch_pipe_info{namespace="data",pipe_id="p1",pipe_name="events",servicewatch="prod",source_kind="kafka",state="Failed"} 1
`,
	}, {
		name:        "a deleted watch leaves no series, others stay",
		itemMetrics: true,
		apply: func(c *metrics.State) {
			c.Set(sample())
			other := metrics.Watch{Namespace: "data", Name: "staging", Interval: time.Minute,
				Pipes: []metrics.Pipe{{ID: "p9", Name: "cdc", State: "Running", SourceKind: "postgres"}}}
			c.Set(other)
			c.Delete("data", "prod")
			c.Delete("data", "never-set")
		},
		want: `
servicewatch_interval_seconds{namespace="data",servicewatch="staging"} 60
servicewatch_pipe_info{namespace="data",pipe_id="p9",pipe_name="cdc",servicewatch="staging",source_kind="postgres",state="Running"} 1
`,
	}, {
		name:        "a watch of the same name in another namespace is another watch",
		itemMetrics: true,
		apply: func(c *metrics.State) {
			c.Set(metrics.Watch{Namespace: "a", Name: "w", Interval: time.Minute})
			c.Set(metrics.Watch{Namespace: "b", Name: "w", Interval: 2 * time.Minute})
			c.Delete("a", "w")
		},
		want: `
servicewatch_interval_seconds{namespace="b",servicewatch="w"} 120
`,
	}, {
		name:        "item metrics off: only conditions, last sync and interval",
		itemMetrics: false,
		apply:       func(c *metrics.State) { c.Set(sample()) },
		want: `
servicewatch_condition{namespace="data",reason="NotFound",servicewatch="prod",status="False",type="AlertsSynced"} 1
servicewatch_condition{namespace="data",reason="Synced",servicewatch="prod",status="True",type="Ready"} 1
servicewatch_interval_seconds{namespace="data",servicewatch="prod"} 300
servicewatch_last_sync_timestamp_seconds{namespace="data",servicewatch="prod"} 1.8e+09
`,
	}, {
		name:        "never synced: no last sync series",
		itemMetrics: true,
		apply: func(c *metrics.State) {
			c.Set(metrics.Watch{Namespace: "data", Name: "new", Interval: 30 * time.Second})
		},
		want: `
servicewatch_interval_seconds{namespace="data",servicewatch="new"} 30
`,
	}, {
		name:        "messy cloud data: repeated items once, invalid UTF-8 replaced, empty labels kept",
		itemMetrics: true,
		apply: func(c *metrics.State) {
			c.Set(metrics.Watch{Namespace: "data", Name: "messy", Interval: time.Minute,
				Pipes: []metrics.Pipe{
					{Name: "no-id"}, {Name: "no-id"},
					{ID: "p1", Name: "bad\xffname", State: "Running", SourceKind: "kafka,postgres"},
				},
				Endpoints: []metrics.Endpoint{{ID: "e1"}, {ID: "e1"}},
				Alerts:    []metrics.Alert{{ID: "a1", FetchFailed: true}, {ID: "a1", Name: "again"}},
			})
		},
		want: `
servicewatch_alert_fetch_failed{alert_id="a1",namespace="data",servicewatch="messy"} 1
servicewatch_alert_info{alert_id="a1",alert_name="",namespace="data",servicewatch="messy",state=""} 1
servicewatch_interval_seconds{namespace="data",servicewatch="messy"} 60
servicewatch_pipe_info{namespace="data",pipe_id="",pipe_name="no-id",servicewatch="messy",source_kind="",state=""} 1
servicewatch_pipe_info{namespace="data",pipe_id="p1",pipe_name="bad\uFFFDname",servicewatch="messy",source_kind="kafka,postgres",state="Running"} 1
servicewatch_reverse_private_endpoint_info{endpoint_id="e1",namespace="data",servicewatch="messy",status="",type=""} 1
`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := metrics.NewState(tt.itemMetrics)
			tt.apply(c)
			want := strings.ReplaceAll(sampleHelp+tt.want, `\uFFFD`, "\uFFFD")
			if err := testutil.CollectAndCompare(c, strings.NewReader(want), families...); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestSetKeepsItsOwnCopy shows that a caller reusing its slices after Set
// does not change what is exported.
func TestSetKeepsItsOwnCopy(t *testing.T) {
	c := metrics.NewState(true)
	w := sample()
	c.Set(w)
	w.Pipes[0].State = "Changed"
	w.Conditions[0].Reason = "Changed"
	if n := testutil.CollectAndCount(c, "servicewatch_pipe_info"); n != 2 {
		t.Fatalf("%d pipe series, want 2", n)
	}
	got, err := testutil.CollectAndFormat(c, expfmt.TypeTextPlain, "servicewatch_pipe_info", "servicewatch_condition")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got), "Changed") {
		t.Errorf("a change to the caller's slices after Set shows in the metrics:\n%s", got)
	}
}

// TestDescribeMatchesCollect lets a registry check the collector: every
// collected metric must be described, with matching labels.
func TestDescribeMatchesCollect(t *testing.T) {
	for _, items := range []bool{true, false} {
		c := metrics.NewState(items)
		c.Set(sample())
		problems, err := testutil.CollectAndLint(c)
		if err != nil {
			t.Fatalf("item metrics %v: %v", items, err)
		}
		for _, p := range problems {
			// Info metrics are gauges of 1 by the convention of
			// kube-state-metrics; the linter wants no other advice here.
			t.Errorf("item metrics %v: %s: %s", items, p.Metric, p.Text)
		}
	}
}

func TestSetIfAbsentKeepsAKnownSnapshot(t *testing.T) {
	c := metrics.NewState(true)
	full := metrics.Watch{Namespace: "ns", Name: "w", Pipes: []metrics.Pipe{{ID: "a", State: "Running"}, {ID: "b", State: "Running"}}}
	cut := metrics.Watch{Namespace: "ns", Name: "w", Pipes: []metrics.Pipe{{ID: "a", State: "Running"}}}
	c.SetIfAbsent(full)
	c.SetIfAbsent(cut)
	if n := testutil.CollectAndCount(c, "servicewatch_pipe_info"); n != 2 {
		t.Errorf("%d pipe series after SetIfAbsent of a known watch, want the 2 of the first snapshot", n)
	}
}

// A silenced alert and one whose evaluations or deliveries fail are visible
// to alerting; a silence shows until it ends, judged at the scrape.
func TestCollectorShowsSilencedAndFailingAlerts(t *testing.T) {
	alertFamilies := []string{
		"servicewatch_alert_silenced",
		"servicewatch_alert_silenced_until_timestamp_seconds",
		"servicewatch_alert_execution_errors",
		"servicewatch_alert_last_execution_error_timestamp_seconds",
	}
	const help = `
# HELP servicewatch_alert_execution_errors Recent failures of an alert of a ServiceWatch to evaluate or to deliver its notifications, as the alert API last reported them (at most the 5 status keeps); 0 when none.
# TYPE servicewatch_alert_execution_errors gauge
# HELP servicewatch_alert_last_execution_error_timestamp_seconds Unix time of the latest execution failure of an alert of a ServiceWatch; absent when there is none or its time is unknown. It changes when a new failure is reported.
# TYPE servicewatch_alert_last_execution_error_timestamp_seconds gauge
# HELP servicewatch_alert_silenced 1 while the alert API reports an alert of a ServiceWatch silenced (its notifications are not sent), until the silence ends; absent otherwise.
# TYPE servicewatch_alert_silenced gauge
# HELP servicewatch_alert_silenced_until_timestamp_seconds Unix time at which the silence of a silenced alert of a ServiceWatch ends; absent when it is not silenced or the alert API does not say.
# TYPE servicewatch_alert_silenced_until_timestamp_seconds gauge
`
	now := time.Unix(1_800_000_000, 0)
	watch := metrics.Watch{Namespace: "data", Name: "prod", Interval: time.Minute, Alerts: []metrics.Alert{
		{ID: "silenced-failing", Silenced: true, SilencedUntil: now.Add(time.Hour), ExecutionErrors: 2, LastExecutionError: now.Add(-time.Minute)},
		{ID: "silence-ended", Silenced: true, SilencedUntil: now.Add(-time.Second)},
		{ID: "silenced-for-good", Silenced: true},
		{ID: "quiet"},
		{ID: "failing-at-unknown-times", ExecutionErrors: 1},
	}}
	tests := []struct {
		name        string
		itemMetrics bool
		want        string
	}{{
		name:        "item metrics on",
		itemMetrics: true,
		want: help + `
servicewatch_alert_execution_errors{alert_id="failing-at-unknown-times",namespace="data",servicewatch="prod"} 1
servicewatch_alert_execution_errors{alert_id="quiet",namespace="data",servicewatch="prod"} 0
servicewatch_alert_execution_errors{alert_id="silence-ended",namespace="data",servicewatch="prod"} 0
servicewatch_alert_execution_errors{alert_id="silenced-failing",namespace="data",servicewatch="prod"} 2
servicewatch_alert_execution_errors{alert_id="silenced-for-good",namespace="data",servicewatch="prod"} 0
servicewatch_alert_last_execution_error_timestamp_seconds{alert_id="silenced-failing",namespace="data",servicewatch="prod"} 1.79999994e+09
servicewatch_alert_silenced{alert_id="silenced-failing",namespace="data",servicewatch="prod"} 1
servicewatch_alert_silenced{alert_id="silenced-for-good",namespace="data",servicewatch="prod"} 1
servicewatch_alert_silenced_until_timestamp_seconds{alert_id="silenced-failing",namespace="data",servicewatch="prod"} 1.8000036e+09
`,
	}, {
		name: "item metrics off",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := metrics.NewState(tt.itemMetrics)
			c.SetClock(func() time.Time { return now })
			c.Set(watch)
			if err := testutil.CollectAndCompare(c, strings.NewReader(tt.want), alertFamilies...); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestItemSeriesBoundedInBytes: past the bound, a scrape shows the first
// items of each list ordered by ID (alerts, then endpoints, then pipes get
// the budget) and says how many it left out, including those the caller had
// already left out (PipesTotal).
func TestItemSeriesBoundedInBytes(t *testing.T) {
	// Each pipe below is charged 256 + 2 + 1 = 259 bytes, the endpoint 256
	// + 2 = 258, the alert 256 + 2 + 1 for its info and 256 + 2 for its
	// execution errors = 517: 1,460 bytes keep the alert, the endpoint and
	// the first 2 pipes by ID (775 + 518 = 1,293; a third would pass 1,460).
	c := metrics.NewState(true, metrics.WithMaxItemBytes(1460))
	c.Set(metrics.Watch{Namespace: "ns", Name: "w", Interval: time.Minute,
		Pipes: []metrics.Pipe{
			{ID: "p4", Name: "d"}, {ID: "p2", Name: "b"}, {ID: "p3", Name: "c"}, {ID: "p1", Name: "a"},
		},
		PipesTotal: 10, // the caller kept 4 of 10
		Endpoints:  []metrics.Endpoint{{ID: "e1"}},
		Alerts:     []metrics.Alert{{ID: "a1", Name: "x"}},
	})
	want := `
# HELP servicewatch_item_metrics_omitted Items of a ServiceWatch, by kind (pipe, reverse_private_endpoint, alert), left out of the item series because the watch's series passed their bound in bytes (--item-metrics-max-bytes, or less: the room the namespace's or the manager's status budget left the watch); the first items ordered by ID are shown. Absent when none are left out.
# TYPE servicewatch_item_metrics_omitted gauge
servicewatch_item_metrics_omitted{kind="pipe",namespace="ns",servicewatch="w"} 8
# HELP servicewatch_pipe_info A pipe of a ServiceWatch, with its state and source kind (kafka, objectStorage, kinesis, postgres, pubsub, mysql, bigquery, mongodb, or the cloud's own name of a kind the operator does not know; several joined by a comma). Always 1.
# TYPE servicewatch_pipe_info gauge
servicewatch_pipe_info{namespace="ns",pipe_id="p1",pipe_name="a",servicewatch="w",source_kind="",state=""} 1
servicewatch_pipe_info{namespace="ns",pipe_id="p2",pipe_name="b",servicewatch="w",source_kind="",state=""} 1
# HELP servicewatch_reverse_private_endpoint_info A reverse private endpoint of a ServiceWatch, with its type and status. Always 1.
# TYPE servicewatch_reverse_private_endpoint_info gauge
servicewatch_reverse_private_endpoint_info{endpoint_id="e1",namespace="ns",servicewatch="w",status="",type=""} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want),
		"servicewatch_item_metrics_omitted", "servicewatch_pipe_info", "servicewatch_reverse_private_endpoint_info"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(c, "servicewatch_alert_info"); n != 1 {
		t.Errorf("%d alert series, want the 1 alert, served first", n)
	}
}

// A watch's own bound, the room its status budget left it, holds below the
// collector's; above it, the collector's holds; zero is no bound of its own.
func TestWatchBoundBelowTheCollectors(t *testing.T) {
	pipes := make([]metrics.Pipe, 100)
	for i := range pipes {
		pipes[i] = metrics.Pipe{ID: fmt.Sprintf("p%03d", i)} // 256 + 4 bytes each
	}
	for _, tc := range []struct {
		own, shown int
	}{
		{own: 0, shown: 10},       // the collector's 2,600 bytes
		{own: 1 << 20, shown: 10}, // the collector's still
		{own: 1040, shown: 4},
		{own: 100, shown: 0},
	} {
		c := metrics.NewState(true, metrics.WithMaxItemBytes(2600))
		c.Set(metrics.Watch{Namespace: "ns", Name: "w", Pipes: slices.Clone(pipes), MaxItemBytes: tc.own})
		if n := testutil.CollectAndCount(c, "servicewatch_pipe_info"); n != tc.shown {
			t.Errorf("own bound %d: %d pipes shown, want %d", tc.own, n, tc.shown)
		}
	}
}

// TestLongNamesCostTheBoundNotTheList is the tenant of issue 17: 10,000
// pipes with names of 3.6 KB (36 MB of labels). The scrape stays within the
// default bound per watch.
func TestLongNamesCostTheBoundNotTheList(t *testing.T) {
	c := metrics.NewState(true)
	long := strings.Repeat("n", 3600)
	pipes := make([]metrics.Pipe, 10_000)
	for i := range pipes {
		pipes[i] = metrics.Pipe{ID: fmt.Sprintf("p%05d", i), Name: long, State: "Running"}
	}
	c.Set(metrics.Watch{Namespace: "ns", Name: "w", Pipes: pipes})
	text, err := testutil.CollectAndFormat(c, expfmt.TypeTextPlain, "servicewatch_pipe_info", "servicewatch_item_metrics_omitted")
	if err != nil {
		t.Fatal(err)
	}
	if len(text) > metrics.DefaultMaxItemBytes+4<<10 {
		t.Errorf("the pipes' series are %d bytes of text, want at most the bound %d (and the help text)", len(text), metrics.DefaultMaxItemBytes)
	}
	shown := testutil.CollectAndCount(c, "servicewatch_pipe_info")
	perPipe := 256 + len("p00000") + len(long) + len("Running")
	if want := metrics.DefaultMaxItemBytes / perPipe; shown != want {
		t.Errorf("%d pipes shown, want the %d that fit", shown, want)
	}
	wantOmitted := fmt.Sprintf(`servicewatch_item_metrics_omitted{kind="pipe",namespace="ns",servicewatch="w"} %d`, 10_000-shown)
	if !strings.Contains(string(text), wantOmitted) {
		t.Errorf("the scrape does not say %s:\n%.400s", wantOmitted, text)
	}
	if !strings.Contains(string(text), `pipe_id="p00000"`) {
		t.Errorf("the first pipe by ID is not shown")
	}
}

// TestSelectionKeepsWhatTheBoundKeeps: items streamed through a Selection
// (the controller's, while the cloud's list streams) in any order leave the
// same series as the whole list given to the collector.
func TestSelectionKeepsWhatTheBoundKeeps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 17))
	for round := range 200 {
		budget := rng.IntN(8000)
		pipes := make([]metrics.Pipe, rng.IntN(60))
		for i := range pipes {
			pipes[i] = metrics.Pipe{ID: fmt.Sprintf("p%02d", rng.IntN(40)), Name: strings.Repeat("x", rng.IntN(600))}
		}
		sel := metrics.NewSelection[metrics.Pipe](budget)
		for _, p := range pipes {
			sel.Add(p)
		}
		streamed := metrics.NewState(true, metrics.WithMaxItemBytes(budget))
		streamed.Set(metrics.Watch{Namespace: "ns", Name: "w", Pipes: sel.Items(), PipesTotal: sel.Seen()})
		whole := metrics.NewState(true, metrics.WithMaxItemBytes(budget))
		whole.Set(metrics.Watch{Namespace: "ns", Name: "w", Pipes: slices.Clone(pipes)})

		got, err := testutil.CollectAndFormat(streamed, expfmt.TypeTextPlain, "servicewatch_pipe_info")
		if err != nil {
			t.Fatal(err)
		}
		want, err := testutil.CollectAndFormat(whole, expfmt.TypeTextPlain, "servicewatch_pipe_info")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("round %d, budget %d, %d pipes: streamed\n%s\nwhole\n%s", round, budget, len(pipes), got, want)
		}
		if sel.Seen() != len(pipes) {
			t.Fatalf("Seen %d, want %d", sel.Seen(), len(pipes))
		}
	}
}

func TestItemMetricsOffKeepNothing(t *testing.T) {
	if n := metrics.NewState(false).MaxItemBytes(); n != 0 {
		t.Errorf("MaxItemBytes with item metrics off = %d, want 0", n)
	}
	if n := metrics.NewState(true).MaxItemBytes(); n != metrics.DefaultMaxItemBytes {
		t.Errorf("MaxItemBytes = %d, want the default %d", n, metrics.DefaultMaxItemBytes)
	}
}
