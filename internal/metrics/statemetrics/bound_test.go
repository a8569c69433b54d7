package statemetrics_test

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

	"github.com/servicewatch/servicewatch/internal/metrics/statemetrics"
)

// TestItemSeriesBoundedInBytes: past the bound, a scrape shows the first
// items of each list ordered by ID (alerts, then endpoints, then pipes get
// the budget) and says how many it left out, including those the caller had
// already left out (PipesTotal).
func TestItemSeriesBoundedInBytes(t *testing.T) {
	// Each pipe below is charged 256 + 2 + 1 = 259 bytes, the endpoint 256
	// + 2 = 258, the alert 256 + 2 + 1 for its info and 256 + 2 for its
	// execution errors = 517: 1,460 bytes keep the alert, the endpoint and
	// the first 2 pipes by ID (775 + 518 = 1,293; a third would pass 1,460).
	c := statemetrics.NewCollector(true, statemetrics.WithMaxItemBytes(1460))
	c.Set(statemetrics.Watch{Namespace: "ns", Name: "w", Interval: time.Minute,
		Pipes: []statemetrics.Pipe{
			{ID: "p4", Name: "d"}, {ID: "p2", Name: "b"}, {ID: "p3", Name: "c"}, {ID: "p1", Name: "a"},
		},
		PipesTotal: 10, // the caller kept 4 of 10
		Endpoints:  []statemetrics.Endpoint{{ID: "e1"}},
		Alerts:     []statemetrics.Alert{{ID: "a1", Name: "x"}},
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
	pipes := make([]statemetrics.Pipe, 100)
	for i := range pipes {
		pipes[i] = statemetrics.Pipe{ID: fmt.Sprintf("p%03d", i)} // 256 + 4 bytes each
	}
	for _, tc := range []struct {
		own, shown int
	}{
		{own: 0, shown: 10},       // the collector's 2,600 bytes
		{own: 1 << 20, shown: 10}, // the collector's still
		{own: 1040, shown: 4},
		{own: 100, shown: 0},
	} {
		c := statemetrics.NewCollector(true, statemetrics.WithMaxItemBytes(2600))
		c.Set(statemetrics.Watch{Namespace: "ns", Name: "w", Pipes: slices.Clone(pipes), MaxItemBytes: tc.own})
		if n := testutil.CollectAndCount(c, "servicewatch_pipe_info"); n != tc.shown {
			t.Errorf("own bound %d: %d pipes shown, want %d", tc.own, n, tc.shown)
		}
	}
}

// TestLongNamesCostTheBoundNotTheList is the tenant of issue 17: 10,000
// pipes with names of 3.6 KB (36 MB of labels). The scrape stays within the
// default bound per watch.
func TestLongNamesCostTheBoundNotTheList(t *testing.T) {
	c := statemetrics.NewCollector(true)
	long := strings.Repeat("n", 3600)
	pipes := make([]statemetrics.Pipe, 10_000)
	for i := range pipes {
		pipes[i] = statemetrics.Pipe{ID: fmt.Sprintf("p%05d", i), Name: long, State: "Running"}
	}
	c.Set(statemetrics.Watch{Namespace: "ns", Name: "w", Pipes: pipes})
	text, err := testutil.CollectAndFormat(c, expfmt.TypeTextPlain, "servicewatch_pipe_info", "servicewatch_item_metrics_omitted")
	if err != nil {
		t.Fatal(err)
	}
	if len(text) > statemetrics.DefaultMaxItemBytes+4<<10 {
		t.Errorf("the pipes' series are %d bytes of text, want at most the bound %d (and the help text)", len(text), statemetrics.DefaultMaxItemBytes)
	}
	shown := testutil.CollectAndCount(c, "servicewatch_pipe_info")
	perPipe := 256 + len("p00000") + len(long) + len("Running")
	if want := statemetrics.DefaultMaxItemBytes / perPipe; shown != want {
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
		pipes := make([]statemetrics.Pipe, rng.IntN(60))
		for i := range pipes {
			pipes[i] = statemetrics.Pipe{ID: fmt.Sprintf("p%02d", rng.IntN(40)), Name: strings.Repeat("x", rng.IntN(600))}
		}
		sel := statemetrics.NewSelection[statemetrics.Pipe](budget)
		for _, p := range pipes {
			sel.Add(p)
		}
		streamed := statemetrics.NewCollector(true, statemetrics.WithMaxItemBytes(budget))
		streamed.Set(statemetrics.Watch{Namespace: "ns", Name: "w", Pipes: sel.Items(), PipesTotal: sel.Seen()})
		whole := statemetrics.NewCollector(true, statemetrics.WithMaxItemBytes(budget))
		whole.Set(statemetrics.Watch{Namespace: "ns", Name: "w", Pipes: slices.Clone(pipes)})

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
	if n := statemetrics.NewCollector(false).MaxItemBytes(); n != 0 {
		t.Errorf("MaxItemBytes with item metrics off = %d, want 0", n)
	}
	if n := statemetrics.NewCollector(true).MaxItemBytes(); n != statemetrics.DefaultMaxItemBytes {
		t.Errorf("MaxItemBytes = %d, want the default %d", n, statemetrics.DefaultMaxItemBytes)
	}
}
