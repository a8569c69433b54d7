package pacing

import (
	"sync"
	"time"
)

// MinStep is the smallest change of the wall clock against the monotonic
// clock that counts as a step: an NTP slew, or the time between reading the
// two clocks, is far below it.
const MinStep = time.Second

// Clock tells when the wall clock was stepped (an NTP step, a VM resumed, an
// admin's date -s): periodic slots are wall-clock instants, on the phase
// grid every watch shares, so a slot planned before a step of -1h would be
// an hour late, and after a step of +1h every slot would be due at once.
// Clock measures the wall clock's advance against a monotonic one; each
// step is handed out once (Step), for the schedules to be moved by it.
type Clock struct {
	wall func() time.Time
	mono func() time.Duration

	mu sync.Mutex
	// wallAt and monoAt are the readings when the last step was handed out
	// (or the clock started).
	wallAt time.Time
	monoAt time.Duration
}

// NewClock returns a clock of wall readings (their own monotonic readings
// are ignored) and mono, a monotonic clock's elapsed time. A nil mono tells
// no step (a test's clock that only the test moves).
func NewClock(wall func() time.Time, mono func() time.Duration) *Clock {
	c := &Clock{wall: wall, mono: mono, wallAt: wall().Round(0)}
	if mono != nil {
		c.monoAt = mono()
	}
	return c
}

// SystemClock is the machine's clock: the wall clock, its steps told against
// the monotonic clock.
func SystemClock() *Clock {
	start := time.Now()
	return NewClock(time.Now, func() time.Duration { return time.Since(start) })
}

// Now reads the wall clock.
func (c *Clock) Now() time.Time { return c.wall() }

// Step returns how far the wall clock was stepped since the last step Step
// returned (or the clock started): its advance less the monotonic clock's,
// and 0 when that is under MinStep either way.
func (c *Clock) Step() time.Duration {
	if c.mono == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	wall, mono := c.wall().Round(0), c.mono()
	step := wall.Sub(c.wallAt) - (mono - c.monoAt)
	if step > -MinStep && step < MinStep {
		return 0
	}
	c.wallAt, c.monoAt = wall, mono
	return step
}

// Shift moves every watch's schedule by a step of the wall clock, so that
// each is due after the same time as before the step: a step of -1h does
// not hold the syncs back an hour, and one of +1h does not make them all
// due at once. Their slots stay on the watches' phases. It walks every
// entry, once per step.
func (b *schedules[K]) Shift(step time.Duration) {
	if step == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for key, e := range b.m {
		b.m[key] = e.shifted(step)
	}
}

// shifted is the entry moved by a step of the wall clock. Its instants
// lose their monotonic readings, which Go would otherwise prefer when
// comparing them with the clock's: after the shift they are wall instants of
// the stepped clock, like the ones planned after it.
func (e Entry) shifted(step time.Duration) Entry {
	move := func(t time.Time) time.Time {
		if t.IsZero() {
			return t
		}
		return t.Round(0).Add(step)
	}
	e.NextSync = move(e.NextSync)
	if e.Plan != nil {
		p := *e.Plan
		p.After, p.NotBefore = move(p.After), move(p.NotBefore)
		e.Plan = &p
	}
	return e
}
