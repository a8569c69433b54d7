package controller

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/conditions"
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
		res.apply = func(s *swv1.ServiceWatchStatus) {
			apply(s)
			for i := range s.Alerts {
				s.Alerts[i].Message = ptr.To(strings.Repeat("m", 4000))
			}
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
			c := conditions.Get(w, swv1.ConditionStatusTruncated)
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
	c := conditions.Get(w, swv1.ConditionStatusTruncated)
	if want := fmt.Sprintf("pipe pipe-00002: %d source.postgres.tableMappings left out", left); c == nil || !strings.Contains(c.Message, want) {
		t.Errorf("StatusTruncated = %+v, want it to say %q", c, want)
	}
	if size := jsonBytes(t, &w.Status); size > limit {
		t.Errorf("status is %d bytes, over the limit of %d", size, limit)
	}
}
