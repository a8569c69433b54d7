package pacing

import (
	"fmt"
	"testing"
	"time"
)

// fakeClocks are a wall clock and a monotonic one, moved by hand.
type fakeClocks struct {
	wall time.Time
	mono time.Duration
}

func (f *fakeClocks) pass(d time.Duration) { f.wall, f.mono = f.wall.Add(d), f.mono+d }

func (f *fakeClocks) clock() *Clock {
	return NewClock(func() time.Time { return f.wall }, func() time.Duration { return f.mono })
}

func TestClockStep(t *testing.T) {
	tests := []struct {
		name string
		move func(f *fakeClocks)
		want time.Duration
	}{
		{"time passes", func(f *fakeClocks) { f.pass(10 * time.Minute) }, 0},
		{"a slew under a second", func(f *fakeClocks) { f.pass(time.Minute); f.wall = f.wall.Add(-300 * time.Millisecond) }, 0},
		{"a step back of an hour", func(f *fakeClocks) { f.pass(time.Minute); f.wall = f.wall.Add(-time.Hour) }, -time.Hour},
		{"a step forward of an hour", func(f *fakeClocks) { f.wall = f.wall.Add(time.Hour); f.pass(time.Minute) }, time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeClocks{wall: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
			c := f.clock()
			tt.move(f)
			if got := c.Step(); got != tt.want {
				t.Fatalf("Step = %s, want %s", got, tt.want)
			}
			f.pass(time.Minute)
			if got := c.Step(); got != 0 {
				t.Errorf("the same step handed out again: %s", got)
			}
		})
	}
}

// After a step of the wall clock, a periodic sync is due after the time it
// had left before the step (on its phase), not an hour late, and the
// watches do not all fall due at once.
func TestScheduleShiftedByAClockStep(t *testing.T) {
	const every = 5 * time.Minute
	const watches = 10
	for _, step := range []time.Duration{-time.Hour, time.Hour} {
		t.Run(fmt.Sprint("step ", step), func(t *testing.T) {
			f := &fakeClocks{wall: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
			c := f.clock()
			b := newSchedules[int]()
			synced := f.wall
			began := func(i int) time.Time { return synced.Add(-time.Duration(i) * 10 * time.Second) }
			phase := func(i int) Phase {
				at := shareOf(began(i), every)
				return Phase{Known: true, At: at, Target: at}
			}
			waits := func() []time.Duration {
				out := make([]time.Duration, watches)
				for i := range out {
					e, _ := b.Get(i)
					out[i] = max(0, e.Plan.Due(phase(i)).Sub(c.Now()))
				}
				return out
			}
			for i := range watches { // synced one after another, on their phases
				next, plan := NextSync(Sync{Began: began(i), Ended: c.Now(), Every: every}, phase(i))
				b.Set(i, Entry{NextSync: next, Plan: plan})
			}
			f.pass(time.Minute)
			before := waits()
			f.wall = f.wall.Add(step)
			b.Shift(c.Step())
			after := waits()
			due := 0
			for i := range watches {
				if after[i] == 0 {
					due++
				}
				// The slot stays on the watch's phase: at most one interval
				// off what it had left.
				if diff := after[i] - before[i]; diff < -every || diff > every {
					t.Errorf("watch %d: due in %s after the step, %s before it", i, after[i], before[i])
				}
			}
			if due > 1 {
				t.Errorf("%d of %d watches due at once after the step: %v", due, watches, after)
			}
		})
	}
}
