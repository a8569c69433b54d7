package controller

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

// mediumPipes are n Postgres pipes of about 1.5 kB of JSON each (22 table
// mappings): over the 1 KiB floor, about 500 bytes each by identity.
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
		"4000 pipes: they do not":    {pipes: 4000},
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
