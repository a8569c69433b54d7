package pacing

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

// testClock is a wall clock the test sets, and a monotonic clock that
// advances with it unless the test steps the wall clock alone.
type testClock struct {
	wall time.Time
	mono time.Duration
}

func (c *testClock) advance(d time.Duration) { c.wall, c.mono = c.wall.Add(d), c.mono+d }

// newTestPacer is a Pacer on c whose periodic syncs have no jitter.
func newTestPacer(c *testClock) *Pacer[string, string] {
	return New[string, string](NewClock(func() time.Time { return c.wall }, func() time.Duration { return c.mono }),
		func(time.Duration) time.Duration { return 0 })
}

func TestUntilDue(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	every := time.Minute
	synced := func(ago time.Duration, ready bool) Watch[string] {
		return Watch[string]{Key: "w", Trigger: "t", Every: every, LastSync: now.Add(-ago), Ready: ready}
	}
	annotated := synced(time.Second, true)
	annotated.Requested = true
	newGeneration := synced(time.Second, false) // Ready is for the generation before
	newGeneration.NewSpec = true
	fresh := synced(time.Second, true)
	last := fresh.LastSync
	never := Watch[string]{Key: "w", Trigger: "t", Every: every, NewSpec: true}
	withRetryNotBefore := func(w Watch[string], at time.Time) Watch[string] {
		w.RetryNotBefore = at
		return w
	}
	// The watch's group synced with it and is headed a quarter of an
	// interval on: each period moves it by MaxMove.
	headed := Phase{Known: true, At: shareOf(last, every), Target: shareOf(last, every) + 0.25}

	tests := []struct {
		name  string
		watch Watch[string]
		known *Entry
		phase Phase
		want  time.Duration
	}{
		{"a new generation is due at once", newGeneration, &Entry{Trigger: "t", NextSync: now.Add(time.Hour)}, headed, 0},
		{"a new requested-at value is due at once", annotated, &Entry{Trigger: "t", NextSync: now.Add(time.Hour)}, headed, 0},
		{"a changed Secret (trigger) is due at once", fresh, &Entry{Trigger: "old", NextSync: now.Add(time.Hour)}, headed, 0},
		{"a known schedule is followed", fresh, &Entry{Trigger: "t", NextSync: now.Add(time.Minute)}, headed, time.Minute},
		{"an overdue schedule is due", fresh, &Entry{Trigger: "t", NextSync: now.Add(-time.Minute)}, headed, 0},
		{"a periodic sync is placed with the phase known now, not when it was planned", fresh,
			&Entry{Trigger: "t", NextSync: now.Add(time.Minute), Plan: &Plan{After: last, Every: every}}, headed,
			last.Add(every + MaxMove(every)).Sub(now)},
		{"a periodic sync keeps its jitter and a Retry-After", fresh,
			&Entry{Trigger: "t", Plan: &Plan{After: last, Every: every, Jitter: time.Second, NotBefore: now.Add(time.Hour)}}, headed,
			time.Hour},
		{"a stretched interval is one stretched period", fresh,
			&Entry{Trigger: "t", Plan: &Plan{After: last, Every: 2 * every}}, Phase{Known: true, At: shareOf(last, 2*every), Target: shareOf(last, 2*every)},
			last.Add(2 * every).Sub(now)},
		{"after a restart a Ready watch waits one interval from its last sync", fresh, nil, Phase{}, last.Add(every).Sub(now)},
		{"after a restart a Ready watch moves toward its phase like any", fresh, nil, headed, last.Add(every + MaxMove(every)).Sub(now)},
		{"after a restart a watch that is not Ready syncs at once", synced(time.Second, false), nil, headed, 0},
		{"a never-synced watch syncs at once", never, nil, headed, 0},
		{"after a restart the cloud's Retry-After still holds, even for a new generation", withRetryNotBefore(newGeneration, now.Add(90*time.Second)), nil, headed, 90 * time.Second},
		{"a Retry-After that has passed is no longer waited for", withRetryNotBefore(newGeneration, now.Add(-time.Second)), nil, headed, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := untilDue(now, tt.watch, tt.known, tt.phase); got != tt.want {
				t.Errorf("untilDue = %v, want %v", got, tt.want)
			}
		})
	}
}

// Due on a watch first seen after a start: it keeps the watch's slot (so a
// Secret touched meanwhile still triggers), rechecks a periodic slot every
// half interval, and a Retry-After's slot is not a periodic one.
func TestPacerDueOnFirstSight(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	every := 5 * time.Minute
	healthy := Watch[string]{Key: "w", Trigger: "t", Every: every, LastSync: t0.Add(-time.Minute), Ready: true}
	held := healthy
	held.RetryNotBefore = t0.Add(10 * time.Minute)
	tests := []struct {
		name  string
		watch Watch[string]
		// want is the first wait, again the wait when looked at again at
		// that moment, and touched the wait once the trigger changed.
		want, again, touched time.Duration
	}{
		{"a healthy watch waits one interval from its last sync, rechecked every half interval",
			healthy, 90 * time.Second, 2*time.Minute + 30*time.Second, 0},
		{"a Retry-After is waited for whole",
			held, 10 * time.Minute, 0, 0},
		{"a watch never synced is due at once",
			Watch[string]{Key: "w", Trigger: "t", Every: every, NewSpec: true}, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &testClock{wall: t0}
			p := newTestPacer(c)
			got := p.Due(tt.watch)
			if got != tt.want {
				t.Fatalf("Due = %v, want %v", got, tt.want)
			}
			c.advance(got)
			if again := p.Due(tt.watch); again != tt.again {
				t.Errorf("looked at again after %v: Due = %v, want %v", got, again, tt.again)
			}
			touched := tt.watch
			touched.Trigger = "touched"
			if d := p.Due(touched); d != tt.touched {
				t.Errorf("after its Secret was touched: Due = %v, want %v", d, tt.touched)
			}
		})
	}
}

// A step of the wall clock moves the schedules: a watch synced a minute
// before a step of -1h is due four minutes later, not 64.
func TestAWallClockStepMovesTheSchedules(t *testing.T) {
	c := &testClock{wall: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	p := newTestPacer(c)
	w := Watch[string]{Key: "w", Trigger: "t", Every: 5 * time.Minute}

	// dueIn is when the watch's sync is due, as a reconcile (which
	// rechecks its slot every half interval) sees it.
	dueIn := func() time.Duration {
		p.Due(w)
		e, _ := p.schedules.Get(w.Key)
		return e.Plan.Due(p.phases.PhaseOf(w.Key, w.Group, w.Every)).Sub(c.wall)
	}
	p.Synced(w, SyncRecord{Every: 5 * time.Minute, Began: c.wall, ReachedCloud: true, Level: Periodic})
	c.advance(time.Minute)
	before := dueIn()
	c.wall = c.wall.Add(-time.Hour)
	if after := dueIn(); after != before {
		t.Errorf("after a step of -1h the watch is due in %s; %s before the step", after, before)
	}
	c.wall = c.wall.Add(2 * time.Hour)
	if after := dueIn(); after != before {
		t.Errorf("after a step of +1h the watch is due in %s; %s before the step", after, before)
	}
}

// Synced plans the next sync: one interval on after a success (or a
// stalled failure), a backoff that doubles with consecutive transient
// failures, a Retry-After; and the wait it returns is a recheck within half
// an interval for a periodic slot.
func TestPacerSynced(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	every := time.Minute
	w := Watch[string]{Key: "w", Trigger: "t", Every: every}
	ok := Outcome{}
	transient := Outcome{Failed: true, Transient: true}
	stalled := Outcome{Failed: true}
	tests := []struct {
		name     string
		outcomes []Outcome // of successive syncs, each ending 1 s after it began
		every    time.Duration
		want     time.Duration // the wait after the last
		due      time.Duration // when the last plans the next sync, after it ended
	}{
		{"a success: rechecked within half an interval, due one interval after it began", []Outcome{ok}, every, 29 * time.Second, 59 * time.Second},
		{"a transient failure backs off", []Outcome{transient}, every, BackoffBase, BackoffBase},
		{"three transient failures in a row double twice", []Outcome{transient, transient, transient}, every, 4 * BackoffBase, 4 * BackoffBase},
		{"a success resets the backoff", []Outcome{transient, transient, ok, transient}, every, BackoffBase, BackoffBase},
		{"a stalled failure waits for the interval", []Outcome{stalled}, every, 29 * time.Second, 59 * time.Second},
		{"a Retry-After is waited for", []Outcome{{Failed: true, Transient: true, RetryAfter: 3 * time.Minute}}, every, 3 * time.Minute, 3 * time.Minute},
		{"a stretched interval", []Outcome{ok}, 2 * every, 59 * time.Second, 119 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &testClock{wall: t0}
			p := newTestPacer(c)
			var got time.Duration
			for _, o := range tt.outcomes {
				began := c.wall
				c.advance(time.Second)
				got = p.Synced(w, SyncRecord{Began: began, Every: tt.every, Level: Periodic, ReachedCloud: true, Outcome: o})
			}
			if got != tt.want {
				t.Errorf("Synced = %v, want %v", got, tt.want)
			}
			e, _ := p.schedules.Get(w.Key)
			due := e.NextSync
			if e.Plan != nil {
				due = e.Plan.Due(p.phases.PhaseOf(w.Key, w.Group, w.Every))
			}
			if d := due.Sub(c.wall); d != tt.due {
				t.Errorf("the next sync is due %v after the last ended, want %v", d, tt.due)
			}
		})
	}
}

// Level and Fresh tell the work a sync is for from the watch and the
// trigger of its last sync.
func TestPacerLevelAndFresh(t *testing.T) {
	synced := Watch[string]{Key: "w", Trigger: "t", Every: time.Minute}
	with := func(f func(w *Watch[string])) Watch[string] {
		w := synced
		f(&w)
		return w
	}
	tests := []struct {
		name      string
		lastSync  bool // the Pacer saw a sync of trigger "t"
		watch     Watch[string]
		wantLevel Level
		wantFresh bool
	}{
		{"a periodic refresh", true, synced, Periodic, false},
		{"a periodic refresh after a restart", false, synced, Periodic, false},
		{"a new watch", false, with(func(w *Watch[string]) { w.NewSpec = true }), User, false},
		{"a new generation", true, with(func(w *Watch[string]) { w.NewSpec, w.Trigger = true, "new" }), User, false},
		{"a changed Secret", true, with(func(w *Watch[string]) { w.Trigger = "new" }), Secret, true},
		{"a requested sync", true, with(func(w *Watch[string]) { w.Requested, w.Trigger = true, "new" }), User, true},
		{"a requested sync with a new generation", true, with(func(w *Watch[string]) { w.Requested, w.NewSpec, w.Trigger = true, true, "new" }), User, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &testClock{wall: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
			p := newTestPacer(c)
			if tt.lastSync {
				p.Synced(synced, SyncRecord{Began: c.wall, Every: synced.Every})
			}
			if got := p.Level(tt.watch); got != tt.wantLevel {
				t.Errorf("Level = %v, want %v", got, tt.wantLevel)
			}
			if got := p.Fresh(tt.watch); got != tt.wantFresh {
				t.Errorf("Fresh = %v, want %v", got, tt.wantFresh)
			}
		})
	}
}

// testBudget is a rate budget that admits calls while it has room, and
// tells the askers to come back in 5 s otherwise.
type testBudget struct {
	room, admits int
}

func (b *testBudget) of(id string) Budget {
	return Budget{ID: id, Rate: 1, Admit: func(n int) time.Duration {
		b.admits++
		if n > b.room {
			return 5 * time.Second
		}
		b.room -= n
		return 0
	}}
}

// Ask: work a user asked for, told to wait, gets the budget's room before a
// periodic refresh that asks first; the refresh does not even ask the
// budget while the claim stands, and goes ahead once the new watch was
// admitted. Waiters queue: the second waits for the first's calls.
func TestPacerAsk(t *testing.T) {
	c := &testClock{wall: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	p := newTestPacer(c)
	b := &testBudget{}
	type ask struct {
		key   string
		level Level
		want  time.Duration
	}
	steps := []struct {
		name   string
		before func()
		ask    ask
		admits int // the budget's admissions so far
	}{
		{"a new watch on a spent budget waits", func() {}, ask{"new", User, 5 * time.Second}, 1},
		{"another new watch waits behind it in line: the budget's wait, then the first's 2 calls", func() {}, ask{"second", User, 7 * time.Second}, 2},
		{"a periodic refresh is held back by their claims without asking", func() { b.room = 10; c.advance(5 * time.Second) }, ask{"old", Periodic, ClaimRecheck}, 2},
		{"the new watch gets the room", func() {}, ask{"new", User, 0}, 3},
		{"the second too", func() { p.Admitted("new") }, ask{"second", User, 0}, 4},
		{"the refresh goes ahead once both were admitted", func() { p.Admitted("second") }, ask{"old", Periodic, 0}, 5},
	}
	for _, s := range steps {
		s.before()
		if got := p.Ask(s.ask.key, s.ask.level, b.of("k1"), 2); got != s.ask.want {
			t.Errorf("%s: Ask = %v, want %v", s.name, got, s.ask.want)
		}
		if b.admits != s.admits {
			t.Errorf("%s: the budget was asked %d times, want %d", s.name, b.admits, s.admits)
		}
	}
}

// Demand stretches the interval of the watches whose budget is over, and
// Forget gives the others back their room.
func TestPacerDemandAndForget(t *testing.T) {
	c := &testClock{wall: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	p := newTestPacer(c)
	every := 30 * time.Second
	watch := func(key string, group uint64) Watch[string] {
		return Watch[string]{Key: key, Trigger: "t", Every: every, Group: group}
	}
	demand := []Demand[string]{{API: "management", Budget: "key", Label: "k", Allowed: 0.1, Reads: []string{"pipes", "endpoints"}}}
	steps := []struct {
		name string
		do   func() time.Duration
		want time.Duration
	}{
		{"two reads per 30 s of a budget of 3 per 30 s fit", func() time.Duration { return p.Demand(watch("a", 1), demand) }, every},
		{"a watch of the same group shares its reads", func() time.Duration { return p.Demand(watch("b", 1), demand) }, every},
		{"a watch of another group makes its own: 4 per 30 s are stretched to 40 s", func() time.Duration { return p.Demand(watch("c", 2), demand) }, 40 * time.Second},
		{"once it is gone, the others fit again", func() time.Duration { p.Forget("c"); return p.Demand(watch("a", 1), demand) }, every},
	}
	for _, s := range steps {
		if got := s.do(); got != s.want {
			t.Errorf("%s: interval %v, want %v", s.name, got, s.want)
		}
	}
	changed := p.TakeDemandChanges()
	if len(changed) != 1 || changed[0].Label != "k" || math.Abs(changed[0].Ratio-2.0/30/0.1) > 1e-9 {
		t.Errorf("TakeDemandChanges = %+v, want the ratio of label k, 2/30 calls per second of 0.1", changed)
	}
	if again := p.TakeDemandChanges(); len(again) != 0 {
		t.Errorf("TakeDemandChanges hands out %+v again", again)
	}
}

// AlertBatch and Took take a watch's reads in turn; Forget starts it over.
func TestPacerAlertBatch(t *testing.T) {
	p := newTestPacer(&testClock{wall: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)})
	reads := []string{"a0", "a1", "a2", "a3", "a4"}
	var got [][]string
	for range 2 {
		got = append(got, p.AlertBatch("w", reads, 2))
		p.Took("w", 5, 2)
	}
	got = append(got, p.AlertBatch("other", reads, 2))
	p.Forget("w")
	got = append(got, p.AlertBatch("w", reads, 2), p.AlertBatch("w", reads, 5), p.AlertBatch("w", reads, 0))
	want := [][]string{{"a0", "a1"}, {"a2", "a3"}, {"a0", "a1"}, {"a0", "a1"}, reads, reads}
	if !slices.EqualFunc(got, want, slices.Equal[[]string]) {
		t.Errorf("batches %v, want %v", got, want)
	}
}

// Forget drops every book's entry of a watch: a forgotten watch is seen
// anew, and holds no budget back.
func TestPacerForget(t *testing.T) {
	c := &testClock{wall: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	p := newTestPacer(c)
	w := Watch[string]{Key: "w", Trigger: "t", Every: time.Minute}
	b := &testBudget{}
	p.Synced(w, SyncRecord{Began: c.wall, Every: w.Every, ReachedCloud: true, Level: Periodic})
	p.Demand(w, []Demand[string]{{API: "management", Budget: "key", Label: "k", Allowed: 1, Reads: []string{"pipes"}}})
	p.Ask("w", User, b.of("k1"), 1)
	p.Forget("w")
	p.TakeDemandChanges()
	if _, ok := p.schedules.Get("w"); ok {
		t.Error("the schedule still has the watch")
	}
	if phase := p.phases.PhaseOf("w", 0, time.Minute); phase.Known {
		t.Errorf("the phases still place the watch's group: %+v", phase)
	}
	if p.demands.budgets["key"] != nil {
		t.Error("the demands still count the watch's reads")
	}
	if len(p.claims.byBudget) != 0 || len(p.claims.of) != 0 {
		t.Errorf("the watch's claims are still there: %v", p.claims.byBudget)
	}
	if len(p.reserved.byBudget) != 0 || len(p.reserved.of) != 0 {
		t.Errorf("the watch still reserves room: %v", p.reserved.byBudget)
	}
	if len(p.queue.budgets) != 0 {
		t.Error("the watch still stands in a budget's line")
	}
	if changed := p.Level(w); changed != Periodic {
		t.Errorf("a forgotten watch is seen anew, at level %v; want periodic", changed)
	}
}

// gcraBudget is a rate budget as the client keeps one: calls spaced at rate,
// a burst of them at once, and its refills offset by offset (a budget
// created together with others; see ratebudget's Store.phaseFor).
type gcraBudget struct {
	c        *testClock
	interval time.Duration // between calls
	burst    int
	tat      time.Time // when the budget is next back to a whole burst
	asks     int
}

func (b *gcraBudget) of(id string) Budget {
	return Budget{ID: id, Rate: float64(time.Second) / float64(b.interval), Admit: func(n int) time.Duration {
		b.asks++
		now := b.c.wall
		tat := b.tat
		if tat.Before(now) {
			tat = now
		}
		next := tat.Add(time.Duration(n) * b.interval)
		if allowAt := next.Add(-time.Duration(b.burst) * b.interval); allowAt.After(now) {
			return allowAt.Sub(now)
		}
		b.tat = next
		return 0
	}}
}

// Waiting costs about one ask per watch however the budget's refills are
// offset: each of 200 watches that find the budget spent asks once, is told
// when its place in the line comes, and is admitted when it comes back, at
// the budget's own pace (none later than its budget allows, none skipped).
func TestWaitersAskAboutOnceWhateverTheBudgetsOffset(t *testing.T) {
	const waiters = 200
	for _, offset := range []time.Duration{0, 700 * time.Millisecond, 1300 * time.Millisecond, 2100 * time.Millisecond} {
		t.Run(offset.String(), func(t *testing.T) {
			c := &testClock{wall: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
			p := newTestPacer(c)
			start := c.wall
			// A spent budget of 1 call a second, burst 10, refilling offset.
			b := &gcraBudget{c: c, interval: time.Second, burst: 10, tat: start.Add(10*time.Second + offset)}
			type ask struct {
				at  time.Time
				key string
			}
			var due []ask
			for i := range waiters {
				due = append(due, ask{start, fmt.Sprintf("w%03d", i)})
			}
			var last time.Time
			for len(due) > 0 {
				slices.SortStableFunc(due, func(a, b ask) int { return a.at.Compare(b.at) })
				next := due[0]
				due = due[1:]
				c.wall = next.at
				wait := p.Ask(next.key, Periodic, b.of("k"), 2)
				if wait == 0 {
					p.Admitted(next.key)
					last = c.wall
					continue
				}
				due = append(due, ask{c.wall.Add(wait), next.key})
			}
			// The budget's own pace: 2 calls every 2 s after its offset.
			ideal := 10*time.Second + offset + (waiters-5)*2*time.Second
			if took := last.Sub(start); took > ideal+2*time.Second {
				t.Errorf("the last watch was admitted after %v, want about %v", took, ideal)
			}
			perWatch := float64(b.asks) / waiters
			t.Logf("%.2f asks per watch; the last admitted after %v (ideal %v)", perWatch, last.Sub(start), ideal)
			if perWatch > 2.1 {
				t.Errorf("%.2f asks per watch, want at most 2.1 (the first, and about one when its place comes)", perWatch)
			}
		})
	}
}

// A sync that ended after its next slot (its write took longer than an
// interval, say behind a slow API server) is due at once, and Synced says
// so with a wait a reconcile can be requeued after: never 0 or less, which
// controller-runtime takes as "do not requeue", leaving the watch unsynced
// until something else touches it (1,000 watches whose Events took 34 s to
// create: 300 never synced again).
func TestPacerSyncedAfterItsSlotStillRequeues(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	every := 30 * time.Second
	w := Watch[string]{Key: "w", Trigger: "t", Every: every}
	for _, took := range []time.Duration{every / 2, every, 34 * time.Second, 3 * every} {
		c := &testClock{wall: t0}
		p := newTestPacer(c)
		c.advance(took)
		if got := p.Synced(w, SyncRecord{Began: t0, Every: every, Level: Periodic, ReachedCloud: true}); got <= 0 {
			t.Errorf("a sync that took %v: Synced = %v, want a positive wait", took, got)
		}
		if wait := p.Due(w); wait > every {
			t.Errorf("a sync that took %v: due again in %v, more than an interval", took, wait)
		}
	}
}
