package changes_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/changes"
)

var (
	t0    = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	t1    = t0.Add(5 * time.Minute)
	now   = t0.Add(10 * time.Minute)
	watch = changes.Watch{Namespace: "team-a", Name: "orders", UID: "uid-1"}
)

func TestDetect(t *testing.T) {
	left := changes.LeftOut{}
	left.Add(changes.KindPipe, "p9", "Running", t0)
	tests := []struct {
		name        string
		kind        changes.Kind
		baseline    []changes.Item
		read        []changes.Item
		wantSince   map[string]time.Time
		wantChanges []string // "id from→to worse"
	}{{
		name:      "first sync: every item since now, nothing told",
		kind:      changes.KindPipe,
		read:      []changes.Item{{ID: "p1", State: "Running"}, {ID: "p2", State: "Failed"}},
		wantSince: map[string]time.Time{"p1": now, "p2": now},
	}, {
		name:      "unchanged state keeps its since",
		kind:      changes.KindPipe,
		baseline:  []changes.Item{{ID: "p1", State: "Running", Since: t0}},
		read:      []changes.Item{{ID: "p1", State: "Running"}},
		wantSince: map[string]time.Time{"p1": t0},
	}, {
		name:        "into a failing state is worse",
		kind:        changes.KindPipe,
		baseline:    []changes.Item{{ID: "p1", State: "Running", Since: t0}},
		read:        []changes.Item{{ID: "p1", State: "Failed"}},
		wantSince:   map[string]time.Time{"p1": now},
		wantChanges: []string{"p1 Running→Failed worse"},
	}, {
		name:        "out of a failing state is better",
		kind:        changes.KindPipe,
		baseline:    []changes.Item{{ID: "p1", State: "failed", Since: t0}},
		read:        []changes.Item{{ID: "p1", State: "Running"}},
		wantSince:   map[string]time.Time{"p1": now},
		wantChanges: []string{"p1 failed→Running"},
	}, {
		name:        "one failing state to another is not worse",
		kind:        changes.KindPipe,
		baseline:    []changes.Item{{ID: "p1", State: "Failed", Since: t0}},
		read:        []changes.Item{{ID: "p1", State: "Degraded"}},
		wantSince:   map[string]time.Time{"p1": now},
		wantChanges: []string{"p1 Failed→Degraded"},
	}, {
		name:        "an endpoint rejected is worse",
		kind:        changes.KindReversePrivateEndpoint,
		baseline:    []changes.Item{{ID: "e1", State: "PendingAcceptance", Since: t0}},
		read:        []changes.Item{{ID: "e1", State: "Rejected"}},
		wantSince:   map[string]time.Time{"e1": now},
		wantChanges: []string{"e1 PendingAcceptance→Rejected worse"},
	}, {
		name:        "an alert that fires is worse",
		kind:        changes.KindAlert,
		baseline:    []changes.Item{{ID: "a1", State: "OK", Since: t0}},
		read:        []changes.Item{{ID: "a1", State: "ALERT"}},
		wantSince:   map[string]time.Time{"a1": now},
		wantChanges: []string{"a1 OK→ALERT worse"},
	}, {
		name:      "an alert whose fetch failed keeps its since and tells nothing",
		kind:      changes.KindAlert,
		baseline:  []changes.Item{{ID: "a1", State: "OK", Since: t0}},
		read:      []changes.Item{{ID: "a1", State: "ALERT", Stale: true}},
		wantSince: map[string]time.Time{"a1": t0},
	}, {
		name:      "an alert never read (its first fetch failed) has no since",
		kind:      changes.KindAlert,
		read:      []changes.Item{{ID: "a1", Stale: true}},
		wantSince: map[string]time.Time{},
	}, {
		name:      "a new item is since now and no change; a gone item is no change",
		kind:      changes.KindPipe,
		baseline:  []changes.Item{{ID: "p1", State: "Running", Since: t0}},
		read:      []changes.Item{{ID: "p2", State: "Failed"}},
		wantSince: map[string]time.Time{"p2": now},
	}, {
		name:      "a left-out item back in the state recorded keeps its since",
		kind:      changes.KindPipe,
		read:      []changes.Item{{ID: "p9", State: "Running"}},
		wantSince: map[string]time.Time{"p9": t0},
	}, {
		name:      "a left-out item back in another state starts again, untold (its old state is unknown)",
		kind:      changes.KindPipe,
		read:      []changes.Item{{ID: "p9", State: "Failed"}},
		wantSince: map[string]time.Time{"p9": now},
	}, {
		name:        "a baseline item without since (written before since) gets one, and its change is told",
		kind:        changes.KindPipe,
		baseline:    []changes.Item{{ID: "p1", State: "Running"}, {ID: "p2", State: "Running"}},
		read:        []changes.Item{{ID: "p1", State: "Running"}, {ID: "p2", State: "Failed"}},
		wantSince:   map[string]time.Time{"p1": now, "p2": now},
		wantChanges: []string{"p2 Running→Failed worse"},
	}, {
		name:      "an item without an id is not followed",
		kind:      changes.KindPipe,
		baseline:  []changes.Item{{State: "Running", Since: t0}},
		read:      []changes.Item{{State: "Failed"}},
		wantSince: map[string]time.Time{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := changes.Detect(changes.Input{Watch: watch, Kind: tt.kind, Now: now, Baseline: tt.baseline, LeftOut: left, Read: tt.read})
			if len(got.Since) != len(tt.wantSince) {
				t.Errorf("since: got %v, want %v", got.Since, tt.wantSince)
			}
			for id, want := range tt.wantSince {
				if !got.Since[id].Equal(want) {
					t.Errorf("since of %s: got %v, want %v", id, got.Since[id], want)
				}
			}
			var told []string
			for _, c := range got.Changes {
				s := fmt.Sprintf("%s %s→%s", c.ItemID, c.From, c.To)
				if c.Worse {
					s += " worse"
				}
				told = append(told, s)
				if c.Watch != watch.Name || c.Namespace != watch.Namespace || c.WatchUID != watch.UID || c.Kind != tt.kind || !c.Since.Equal(now) {
					t.Errorf("change %+v does not name the watch, kind and time", c)
				}
			}
			if fmt.Sprint(told) != fmt.Sprint(tt.wantChanges) {
				t.Errorf("changes: got %v, want %v", told, tt.wantChanges)
			}
		})
	}
}

// TestChangeIDIsFoundAgainTheSame: the same baseline and read (a write
// retried, a restart before the status was written, another clock) give the
// same ID; the same move from another baseline (the item moved back and
// again) gives another.
func TestChangeIDIsFoundAgainTheSame(t *testing.T) {
	detect := func(baseline changes.Item, at time.Time) string {
		got := changes.Detect(changes.Input{Watch: watch, Kind: changes.KindPipe, Now: at,
			Baseline: []changes.Item{baseline}, Read: []changes.Item{{ID: "p1", State: "Failed"}}})
		if len(got.Changes) != 1 {
			t.Fatalf("got %d changes, want 1", len(got.Changes))
		}
		return got.Changes[0].ID
	}
	first := detect(changes.Item{ID: "p1", State: "Running", Since: t0}, now)
	if again := detect(changes.Item{ID: "p1", State: "Running", Since: t0}, now.Add(time.Hour)); again != first {
		t.Errorf("found again after a restart: ID %s, first %s", again, first)
	}
	if later := detect(changes.Item{ID: "p1", State: "Running", Since: t1}, now); later == first {
		t.Errorf("the same move from a later since has the same ID %s", later)
	}
	other := changes.Detect(changes.Input{Watch: changes.Watch{Namespace: "team-a", Name: "orders", UID: "uid-2"}, Kind: changes.KindPipe, Now: now,
		Baseline: []changes.Item{{ID: "p1", State: "Running", Since: t0}}, Read: []changes.Item{{ID: "p1", State: "Failed"}}})
	if other.Changes[0].ID == first {
		t.Error("a watch of another UID (deleted and created again) gives the same ID")
	}
	if len(first) != 32 {
		t.Errorf("ID %q: want 32 hex digits", first)
	}
}

func TestLeftOutRoundTrips(t *testing.T) {
	l := changes.LeftOut{}
	l.Add(changes.KindPipe, "p1", "Running", t0)
	l.Add(changes.KindAlert, "a1", "OK", t1)
	l.Add(changes.KindPipe, "", "Running", t0) // no id: not kept
	entries := l.Entries()
	if len(entries) != 2 {
		t.Fatalf("entries %v: want 2", entries)
	}
	for _, e := range entries {
		if len(e) > 48 {
			t.Errorf("entry %q is longer than the CRD's 48", e)
		}
	}
	back := changes.ParseLeftOut(append(entries, "garbage", "p:zz:notanumber"))
	if got := back.Since(changes.KindPipe, "p1", "Running"); !got.Equal(t0) {
		t.Errorf("pipe p1 Running: since %v, want %v", got, t0)
	}
	if got := back.Since(changes.KindPipe, "p1", "Failed"); !got.IsZero() {
		t.Errorf("pipe p1 in another state: since %v, want none", got)
	}
	if got := back.Since(changes.KindReversePrivateEndpoint, "a1", "OK"); !got.IsZero() {
		t.Errorf("another kind of the same id: since %v, want none", got)
	}
	if got := back.Of(changes.KindAlert); len(got) != 1 || !got.Since(changes.KindAlert, "a1", "OK").Equal(t1) {
		t.Errorf("Of(alert) = %v", got)
	}
}
