package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/changes"
)

// TestTruncatedListKeepsTheSinceOfWhatItLeftOut: a list too long for its
// status keeps the since of its items cut to their identity, and of those
// left out in leftOutSince; none is told as gone, and one that comes back
// in the state it had keeps its since across the syncs in between. One
// whose state changed while it was out starts again, untold.
func TestTruncatedListKeepsTheSinceOfWhatItLeftOut(t *testing.T) {
	const n, limit = 1500, 256 << 10
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	w := testWatch()
	sync := func(at time.Time, limit int, edit func([]swv1.Pipe)) tracking {
		pipes := mediumPipes(n)
		if edit != nil {
			edit(pipes)
		}
		return applyResultsAt(w, syncParts(), []partResult{pipesOK(pipes...), endpointsOK(0), alertsFetched(nil)}, limit, at)
	}
	sinceOf := func(id string) *time.Time {
		for _, p := range w.Status.Pipes {
			if *p.ID == id {
				return &p.Since.Time
			}
		}
		return nil
	}

	if found := sync(t0, limit, nil); len(found.changes) != 0 {
		t.Fatalf("the first sync told %d changes", len(found.changes))
	}
	kept := len(w.Status.Pipes)
	if kept == n || kept == 0 {
		t.Fatalf("the test needs a list that is cut: %d of %d kept", kept, n)
	}
	for _, p := range w.Status.Pipes {
		if p.Since == nil || !p.Since.Time.Equal(t0) {
			t.Fatalf("pipe %s (omitted %v) has since %v, want %v", *p.ID, p.Omitted, p.Since, t0)
		}
	}
	if got, want := len(w.Status.LeftOutSince), min(n-kept, leftOutRoom(limit, n)/changes.LeftOutEntryBytes); got != want || got == 0 {
		t.Fatalf("leftOutSince has %d entries, want one per pipe left out (%d) within its room (%d)", got, n-kept, want)
	}
	if fixedSize(&w.Status) > limit {
		t.Fatalf("the status with its record takes %d bytes, over the limit %d", fixedSize(&w.Status), limit)
	}
	last, changed := fmt.Sprintf("p-%05d", kept), fmt.Sprintf("p-%05d", kept+1)
	if sinceOf(last) != nil {
		t.Fatalf("%s is listed; the test needs it left out", last)
	}

	t1 := t0.Add(time.Minute)
	if found := sync(t1, limit, nil); len(found.changes) != 0 {
		t.Fatalf("a sync of the same truncated list told %d changes: %+v", len(found.changes), found.changes)
	}
	if got := sinceOf("p-00000"); got == nil || !got.Equal(t0) {
		t.Errorf("a listed pipe's since moved to %v", got)
	}

	t2 := t1.Add(time.Minute)
	found := sync(t2, DefaultStatusSizeLimit, func(pipes []swv1.Pipe) { pipes[kept+1].State = ptr.To("Paused") })
	if len(w.Status.Pipes) != n {
		t.Fatalf("%d pipes listed with room for all", len(w.Status.Pipes))
	}
	if got := sinceOf(last); got == nil || !got.Equal(t0) {
		t.Errorf("%s came back in the state it had: since %v, want %v", last, got, t0)
	}
	if got := sinceOf(changed); got == nil || !got.Equal(t2) {
		t.Errorf("%s came back in another state: since %v, want %v", changed, got, t2)
	}
	if len(found.changes) != 0 {
		t.Errorf("a pipe whose state changed while left out was told (its old state is unknown): %+v", found.changes)
	}
	if len(w.Status.LeftOutSince) != 0 {
		t.Errorf("leftOutSince kept %d entries with nothing left out", len(w.Status.LeftOutSince))
	}
}

// TestFailedPartKeepsItsSince: a read that failed is no change of its items:
// their since and the record stay as they were, and nothing is told.
func TestFailedPartKeepsItsSince(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	w := testWatch()
	applyResultsAt(w, syncParts(), []partResult{pipesOK(pipe("a", "Running")), endpointsOK(1), alertsFetched(nil)}, DefaultStatusSizeLimit, t0)
	w.Status.LeftOutSince = []string{"p:0123456789abcdef:1767225600"}
	found := applyResultsAt(w, syncParts(), []partResult{failed(swv1.ReasonUnreachable, "down"), failed(swv1.ReasonUnreachable, "down"), alertsFetched(nil)},
		DefaultStatusSizeLimit, t0.Add(time.Hour))
	if len(found.changes) != 0 {
		t.Errorf("a failed read told %+v", found.changes)
	}
	if p := w.Status.Pipes[0]; p.Since == nil || !p.Since.Time.Equal(t0) {
		t.Errorf("pipe since %v after a failed read, want %v", p.Since, t0)
	}
	if e := w.Status.ReversePrivateEndpoints[0]; e.Since == nil || !e.Since.Time.Equal(t0) {
		t.Errorf("endpoint since %v after a failed read, want %v", e.Since, t0)
	}
	if got := strings.Join(w.Status.LeftOutSince, ","); got != "p:0123456789abcdef:1767225600" {
		t.Errorf("leftOutSince %q after a failed read of pipes", got)
	}
}
