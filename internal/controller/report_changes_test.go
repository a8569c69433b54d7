package controller

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/servicewatch/servicewatch/internal/changes"
)

// TestChangeEventsAreBounded: a sync's changes beyond the singles allowed
// are counted by transition in one Event, which says how many; names are
// valid and stable.
func TestChangeEventsAreBounded(t *testing.T) {
	w := testWatch()
	w.Name = strings.Repeat("w", 253)
	var found []changes.Change
	for i := range 1000 {
		from, to := "Running", "Failed"
		if i%4 == 0 {
			from, to = "Failed", "Running"
		}
		id := strings.Repeat("x", 3) + string(rune('a'+i%26))
		found = append(found, changes.Change{ID: changes.ChangeID(w.UID, changes.KindPipe, id+strings.Repeat("0", i%7), from, time.Unix(int64(i), 0), to),
			Kind: changes.KindPipe, ItemID: id, From: from, To: to, Worse: to == "Failed"})
	}
	events := changeEvents(w, found, maxChangeEventsPerSync)
	if len(events) != maxChangeEventsPerSync+1 {
		t.Fatalf("%d Events for 1,000 changes, want %d", len(events), maxChangeEventsPerSync+1)
	}
	for _, e := range events[:maxChangeEventsPerSync] {
		if e.eventType != "Warning" || e.reason != "PipeStateChanged" {
			t.Errorf("single %+v: want the worse first, as Warnings", e)
		}
	}
	last := events[maxChangeEventsPerSync]
	if last.reason != "ItemStatesChanged" || last.eventType != "Warning" ||
		!strings.Contains(last.note, "990 more item state changes") || !strings.Contains(last.note, "740 Pipe Running → Failed") ||
		!strings.Contains(last.note, "250 Pipe Failed → Running") {
		t.Errorf("counting Event %+v", last)
	}
	for _, e := range events {
		if len(e.name) > 253 || strings.HasPrefix(e.name, ".") || len(e.note) > maxEventNoteBytes {
			t.Errorf("Event name %q (%d) or note (%d bytes) out of bounds", e.name, len(e.name), len(e.note))
		}
	}
	again := changeEvents(w, found, maxChangeEventsPerSync)
	for i := range events {
		if again[i].name != events[i].name {
			t.Errorf("Event %d named %s, then %s", i, events[i].name, again[i].name)
		}
	}
}

// TestChangeBudgetBoundsAFlappingWatch: a watch whose item flaps at every
// sync gets its burst, then one single Event a minute.
func TestChangeBudgetBoundsAFlappingWatch(t *testing.T) {
	var b changeBudgets
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	k := types.NamespacedName{Namespace: "ns", Name: "w"}
	singles := 0
	for i := range 120 { // an hour of syncs every 30 s
		singles += b.take(k, 1, t0.Add(time.Duration(i)*30*time.Second))
	}
	if want := changeEventBurst + 59; singles > want+1 || singles < want-1 {
		t.Errorf("%d single Events in an hour of flapping, want about %d", singles, want)
	}
}
