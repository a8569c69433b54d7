package controller

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

func manyPipes(n int) []swv1.Pipe {
	pipes := make([]swv1.Pipe, n)
	for i := range pipes {
		pipes[i] = swv1.Pipe{ID: ptr.To(fmt.Sprintf("pipe-%05d", i)), Name: ptr.To(strings.Repeat("n", 200)), State: ptr.To("Running")}
	}
	return pipes
}

func TestTruncate(t *testing.T) {
	const limit = 20 << 10
	bigAlert := func(ids []string) partResult {
		res := alertsFetched(ids)
		apply := res.apply
		res.apply = func(s *swv1.ServiceWatchStatus) error {
			if err := apply(s); err != nil {
				return err
			}
			for i := range s.Alerts {
				s.Alerts[i].Message = ptr.To(strings.Repeat("m", 4000))
			}
			return nil
		}
		return res
	}
	tests := []struct {
		name                                    string
		alertIDs                                []string
		results                                 []partResult
		wantTruncated                           bool
		wantAllEndpoints, wantAllAlerts, fitsIn bool
	}{
		{"small status is untouched", nil, []partResult{pipesOK(manyPipes(3)...), endpointsOK(2), alertsFetched(nil)}, false, true, true, true},
		{"pipes are cut first, endpoints kept", nil, []partResult{pipesOK(manyPipes(500)...), endpointsOK(5), alertsFetched(nil)}, true, true, true, true},
		{"alerts are cut too: 10 alerts of 4 kB", []string{"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9"},
			[]partResult{pipesOK(manyPipes(5)...), endpointsOK(1), bigAlert([]string{"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9"})}, true, true, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := testWatch(tt.alertIDs...)
			parts := syncParts()
			applyResults(w, parts, tt.results, limit)
			raw, _ := json.Marshal(w.Status)
			if tt.fitsIn && len(raw) > limit {
				t.Errorf("status is %d bytes, over the limit of %d", len(raw), limit)
			}
			c := w.Condition(swv1.ConditionStatusTruncated)
			if (c != nil) != tt.wantTruncated {
				t.Fatalf("StatusTruncated = %+v, want present %v", c, tt.wantTruncated)
			}
			if tt.wantAllEndpoints && int32(len(w.Status.ReversePrivateEndpoints)) != w.Status.Summary.ReversePrivateEndpoints {
				t.Errorf("endpoints were cut before pipes")
			}
			if tt.wantAllAlerts && len(w.Status.Alerts) != len(tt.alertIDs) {
				t.Errorf("alerts cut: %d of %d", len(w.Status.Alerts), len(tt.alertIDs))
			}
			if c != nil && !strings.Contains(c.Message, fmt.Sprintf("%d of %d pipes", len(w.Status.Pipes), w.Status.Summary.Pipes)) {
				t.Errorf("StatusTruncated message %q does not say what was left out", c.Message)
			}
			// The same input gives the same output.
			again := testWatch(tt.alertIDs...)
			applyResults(again, parts, tt.results, limit)
			if !equality.Semantic.DeepEqual(again.Status.Pipes, w.Status.Pipes) || !equality.Semantic.DeepEqual(again.Status.Alerts, w.Status.Alerts) {
				t.Error("truncation is not deterministic")
			}
		})
	}
}

// Which items fit does not depend on what the status held before: the
// first sync (no StatusTruncated condition yet, no requested-at echo) cuts
// where a later, requested sync of the same data does, and stays under the
// limit once the condition is set. Pipe counts around the limit try every
// place the cut can fall at.
func TestTruncateDependsOnTheDataAlone(t *testing.T) {
	const limit = 20 << 10
	for n := 60; n <= 110; n++ {
		results := []partResult{pipesOK(manyPipes(n)...), endpointsOK(1), alertsFetched(nil)}
		w := testWatch()
		applyResults(w, syncParts(), results, limit)
		if size := jsonBytes(t, &w.Status); size > limit {
			t.Errorf("%d pipes: the first sync's status is %d bytes, over the limit of %d", n, size, limit)
		}
		first := len(w.Status.Pipes)
		w.Status.LastHandledRequestedAt = strings.Repeat("\"", maxRequestedAtEcho)
		applyResults(w, syncParts(), results, limit)
		if size := jsonBytes(t, &w.Status); len(w.Status.Pipes) != first || size > limit {
			t.Errorf("%d pipes: the first sync kept %d, a requested one %d (%d bytes)", n, first, len(w.Status.Pipes), size)
		}
	}
}

// jsonBytes is the size of v's JSON.
func jsonBytes(t testing.TB, v any) int {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return len(raw)
}

// The status' final size check cuts inside a big item before it drops any
// whole one, and StatusTruncated names what it cut where.
func TestTruncateSlimsABigPipeFirst(t *testing.T) {
	const limit = 40 << 10
	pipes := manyPipes(6)
	big := &pipes[2]
	big.SourceKind = ptr.To("postgres")
	big.Source = &swv1.PipeSource{Postgres: &swv1.PostgresSource{}}
	for i := range 4000 {
		big.Source.Postgres.TableMappings = append(big.Source.Postgres.TableMappings,
			swv1.PostgresTableMapping{SourceTable: ptr.To(fmt.Sprintf("table_%05d", i)), TargetTable: ptr.To(fmt.Sprintf("table_%05d", i))})
	}
	w := testWatch()
	applyResults(w, syncParts(), []partResult{pipesOK(pipes...), endpointsOK(1), alertsFetched(nil)}, limit)
	if len(w.Status.Pipes) != 6 {
		t.Fatalf("kept %d of 6 pipes, want every one", len(w.Status.Pipes))
	}
	got := w.Status.Pipes[2]
	kept := len(got.Source.Postgres.TableMappings)
	left := got.Omitted["source.postgres.tableMappings"]
	if kept == 0 || int(left)+kept != 4000 || got.Name == nil || got.State == nil {
		t.Errorf("big pipe kept %d mappings, omitted %v", kept, got.Omitted)
	}
	c := w.Condition(swv1.ConditionStatusTruncated)
	if want := fmt.Sprintf("pipe pipe-00002: %d source.postgres.tableMappings left out", left); c == nil || !strings.Contains(c.Message, want) {
		t.Errorf("StatusTruncated = %+v, want it to say %q", c, want)
	}
	if size := jsonBytes(t, &w.Status); size > limit {
		t.Errorf("status is %d bytes, over the limit of %d", size, limit)
	}
}

// Each list keeps its items that need attention first when it does not fit
// (issue 39): failing pipes and endpoints, firing alerts, though they come
// last in the list's order, are all kept, with others after them, and what
// is kept stays in the list's order.
func TestTruncateKeepsWhatNeedsAttentionFirst(t *testing.T) {
	const n, failing, limit = 1000, 20, 96 << 10
	pad := strings.Repeat("x", 600)
	tests := map[string]struct {
		fill func(s *swv1.ServiceWatchStatus, i int, fails bool)
		ids  func(s *swv1.ServiceWatchStatus) (ids []string, attention []bool)
	}{
		"pipes": {
			fill: func(s *swv1.ServiceWatchStatus, i int, fails bool) {
				s.Pipes = append(s.Pipes, swv1.Pipe{ID: ptr.To(fmt.Sprintf("p-%04d", i)), State: ptr.To(map[bool]string{true: "Degraded", false: "Running"}[fails]), CreatedAt: &pad})
			},
			ids: func(s *swv1.ServiceWatchStatus) (ids []string, attention []bool) {
				for i := range s.Pipes {
					ids, attention = append(ids, *s.Pipes[i].ID), append(attention, s.Pipes[i].NeedsAttention())
				}
				return ids, attention
			},
		},
		"endpoints": {
			fill: func(s *swv1.ServiceWatchStatus, i int, fails bool) {
				s.ReversePrivateEndpoints = append(s.ReversePrivateEndpoints, swv1.ReversePrivateEndpoint{ID: ptr.To(fmt.Sprintf("e-%04d", i)),
					Status: ptr.To(map[bool]string{true: "Rejected", false: "Ready"}[fails]), DNSNames: []string{pad}})
			},
			ids: func(s *swv1.ServiceWatchStatus) (ids []string, attention []bool) {
				for i := range s.ReversePrivateEndpoints {
					e := &s.ReversePrivateEndpoints[i]
					ids, attention = append(ids, *e.ID), append(attention, e.NeedsAttention())
				}
				return ids, attention
			},
		},
		"alerts": {
			fill: func(s *swv1.ServiceWatchStatus, i int, fails bool) {
				s.Alerts = append(s.Alerts, swv1.AlertStatus{ID: fmt.Sprintf("a-%04d", i), State: ptr.To(map[bool]string{true: "ALERT", false: "OK"}[fails]), Message: &pad})
			},
			ids: func(s *swv1.ServiceWatchStatus) (ids []string, attention []bool) {
				for i := range s.Alerts {
					ids, attention = append(ids, s.Alerts[i].ID), append(attention, s.Alerts[i].NeedsAttention())
				}
				return ids, attention
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			s := &swv1.ServiceWatchStatus{Summary: &swv1.Summary{}}
			for i := range n {
				tt.fill(s, i, i >= n-failing)
			}
			truncate(s, listsOf(syncParts()), limit)
			ids, attention := tt.ids(s)
			kept := 0
			for i, a := range attention {
				if a {
					kept++
				}
				if i > 0 && ids[i-1] >= ids[i] {
					t.Fatalf("not in list order at %d: %s then %s", i, ids[i-1], ids[i])
				}
			}
			if kept != failing || len(ids) <= failing || len(ids) == n {
				t.Errorf("kept %d of %d items, %d of the %d that need attention; want them all and others", len(ids), n, kept, failing)
			}
		})
	}
}

// mediumPipes are n Postgres pipes of about 1.5 kB of JSON each (22 table
// mappings): over the 1 KiB floor, about 250 bytes each by identity (charged
// decoded: 4,189 of them fill the 1 MiB limit).
func mediumPipes(n int) []swv1.Pipe {
	pipes := make([]swv1.Pipe, n)
	for i := range pipes {
		p := swv1.Pipe{ID: ptr.To(fmt.Sprintf("p-%05d", i)), Name: ptr.To(fmt.Sprintf("orders %d", i)), State: ptr.To("Running"),
			SourceKind: ptr.To("postgres"), Source: &swv1.PipeSource{Postgres: &swv1.PostgresSource{}}}
		for m := range 22 {
			p.Source.Postgres.TableMappings = append(p.Source.Postgres.TableMappings, swv1.PostgresTableMapping{
				SourceTable: ptr.To(fmt.Sprintf("table_%05d", m)), TargetTable: ptr.To(fmt.Sprintf("public_table_%05d", m))})
		}
		pipes[i] = p
	}
	return pipes
}

// The status' final size check keeps every pipe by identity when the
// pipes slimmed to 1 KiB do not fit but their identities do; when the
// identities do not fit either, it keeps the longest prefix of the id order
// that fits by identity (issue 39: it kept a prefix at 1 KiB, none by
// identity, a third as many). StatusTruncated says which.
func TestTruncateKeepsEveryIdentityThatFits(t *testing.T) {
	const limit = DefaultStatusSizeLimit
	tests := map[string]struct {
		pipes int
		// all: every pipe is kept, some by identity alone.
		all bool
	}{
		"1200 pipes: identities fit": {pipes: 1200, all: true},
		"8000 pipes: they do not":    {pipes: 8000},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			w := testWatch()
			applyResults(w, syncParts(), []partResult{pipesOK(mediumPipes(tt.pipes)...), endpointsOK(1), alertsFetched(nil)}, limit)
			bare := 0
			for i, p := range w.Status.Pipes {
				if p.Source == nil {
					bare++
				}
				if want := fmt.Sprintf("p-%05d", i); *p.ID != want || p.Name == nil || p.State == nil || p.SourceKind == nil {
					t.Fatalf("pipe %d: %+v; want %s with its identity", i, p, want)
				}
			}
			c := w.Condition(swv1.ConditionStatusTruncated)
			kept := len(w.Status.Pipes)
			switch {
			case c == nil:
				t.Fatal("no StatusTruncated condition")
			case tt.all && (kept != tt.pipes || bare == 0 || !strings.Contains(c.Message, fmt.Sprintf("%d of %d pipes", kept, kept))):
				t.Errorf("kept %d of %d pipes, %d by identity; StatusTruncated %q", kept, tt.pipes, bare, c.Message)
			case !tt.all && (bare == 0 || kept == tt.pipes || kept <= limit/(1<<10)):
				t.Errorf("kept %d of %d pipes, %d by identity; want a prefix of more than fit at 1 KiB, by identity", kept, tt.pipes, bare)
			}
			// It promises every item listed only when none was left out.
			if promised := strings.Contains(c.Message, "every item still listed"); promised != (kept == tt.pipes) {
				t.Errorf("kept %d of %d pipes, yet StatusTruncated says %q", kept, tt.pipes, c.Message)
			}
			if size := jsonBytes(t, &w.Status); size > limit {
				t.Errorf("status is %d bytes, over the limit of %d", size, limit)
			}
		})
	}
}
