package ratebudget

import "time"

// RateLimit is a client-side limit on the calls made with one credential to
// one API host: at most Requests calls in any window of Per stretched by
// the margin (see windowOf), paced evenly, Per/Requests apart (stretched
// likewise), with at most Burst calls back to back. Requests <= 0 disables
// the limit.
type RateLimit struct {
	Requests int
	Per      time.Duration
	Burst    int
}

func (l RateLimit) enabled() bool { return l.Requests > 0 && l.Per > 0 }

// The service counts calls in windows of its own, whose phase we do not know,
// and a call reaches it some latency after it was admitted, a latency that
// varies. So admission keeps to the limit over a window longer than the
// service's by a margin: with Per × 11/10, less the tenth of a spacing a
// late batch may keep of its slot (see slotOf), no window of Per at the
// service sees more than Requests calls as long as latency varies by less
// than 0.89 s for the management API's 10 s.
const (
	marginNumerator   = 11
	marginDenominator = 10
)

// windowOf returns l.Per stretched by the margin.
func windowOf(l RateLimit) time.Duration {
	return l.Per * marginNumerator / marginDenominator
}

// rateLimiter admits calls under a RateLimit. Two rules, both needed: a generic
// cell rate algorithm (GCRA) spaces admissions window/Requests apart and
// lets at most Burst go together, so that a backlog (a cold start, a flag
// change) is spread out instead of fired at once; and a log of the last
// window's admissions caps them at Requests, which GCRA alone does not (its
// burst comes on top of the rate).
type rateLimiter struct {
	window   time.Duration
	interval time.Duration
	requests int
	burst    int
	tat      time.Time // GCRA's theoretical arrival time
	log      []grant   // grants within the last window, oldest first
}

// grant is n calls admitted together.
type grant struct {
	at time.Time
	n  int
}

// newRateLimiter returns the rate limiter of a budget first used at now. A
// phase in (0, 1) offsets its refills by that share of its burst's spacing:
// it starts as if that share of a burst had just been admitted (see
// Store.phaseFor); 0 starts it rested.
func newRateLimiter(l RateLimit, now time.Time, phase float64) *rateLimiter {
	window := windowOf(l)
	burst := l.Burst
	if burst <= 0 || burst > l.Requests {
		burst = l.Requests
	}
	interval := window / time.Duration(l.Requests)
	return &rateLimiter{window: window, interval: interval, requests: l.Requests, burst: burst,
		tat: now.Add(time.Duration(phase * float64(time.Duration(burst)*interval)))}
}

// retuned is rl keeping to l from now on, with what it admitted still
// counted: a budget whose reserve changes does not start afresh, and
// sends no more in the window under way than the new limit allows
// (l.Per must be rl's).
func (rl *rateLimiter) retuned(l RateLimit, now time.Time) *rateLimiter {
	n := newRateLimiter(l, now, 0)
	n.tat, n.log = maxTime(rl.tat, now), rl.log
	return n
}

// admit reserves n calls at now and returns 0 if both rules allow them all;
// otherwise it reserves nothing and returns how long to wait (> 0). A batch
// larger than Burst goes only when the budget is fully rested; a batch
// larger than Requests never goes, and the wait is one window.
func (rl *rateLimiter) admit(now time.Time, n int) time.Duration {
	if n > rl.requests {
		return rl.window
	}
	rl.forget(now)
	at := rl.slotOf(now)
	tat := maxTime(rl.tat, at).Add(time.Duration(n) * rl.interval)
	wait := tat.Sub(now) - time.Duration(max(rl.burst, n))*rl.interval
	wait = max(wait, rl.windowWait(now, n))
	if wait > 0 {
		return wait
	}
	rl.tat = tat
	rl.log = append(rl.log, grant{at: at, n: n})
	return 0
}

// lateSlots is the share of the spacing, 1/lateSlots, by which a batch may
// come after its slot and still count as admitted in it.
const lateSlots = 10

// slotOf is when calls admitted at now count as admitted: at the budget's
// next slot (GCRA's theoretical arrival time) when they come at most a
// tenth of a spacing after it, else now. A caller told to wait for a slot
// comes back a little after it (a timer, a work queue); were the grid to
// move by each such lateness, every caller told the grid as it was would come
// back early, be refused and ask again. The cost is a tenth of a spacing
// taken from the margin: no window of windowOf(l) less that tenth holds
// more than Requests calls (10.89 s for the management API's 10 s).
func (rl *rateLimiter) slotOf(now time.Time) time.Time {
	if late := now.Sub(rl.tat); late > 0 && late <= rl.interval/lateSlots {
		return rl.tat
	}
	return now
}

// windowWait returns how long until n more calls fit in the window.
func (rl *rateLimiter) windowWait(now time.Time, n int) time.Duration {
	excess := n - rl.requests
	for _, a := range rl.log {
		excess += a.n
	}
	for _, a := range rl.log {
		if excess <= 0 {
			break
		}
		if excess -= a.n; excess <= 0 {
			return a.at.Add(rl.window).Sub(now)
		}
	}
	return 0
}

// forget drops the grants that have left the window: a call admitted
// exactly one window ago no longer counts.
func (rl *rateLimiter) forget(now time.Time) {
	i := 0
	for i < len(rl.log) && !rl.log[i].at.Add(rl.window).After(now) {
		i++
	}
	rl.log = rl.log[i:]
}

// admittedSince counts the calls admitted after since that the log still
// holds (a window's worth).
func (rl *rateLimiter) admittedSince(since time.Time) int {
	n := 0
	for _, g := range rl.log {
		if g.at.After(since) {
			n += g.n
		}
	}
	return n
}

// exhausted reports whether one more call would have to wait: the budget is
// pacing its calls.
func (rl *rateLimiter) exhausted(now time.Time) bool {
	return rl.tat.Sub(now) > time.Duration(rl.burst-1)*rl.interval
}

// burstSpacing is how long the rate limiter takes to earn a whole burst.
func (rl *rateLimiter) burstSpacing() time.Duration {
	return time.Duration(rl.burst) * rl.interval
}

// rested reports whether the rate limiter is as good as new.
func (rl *rateLimiter) rested(now time.Time) bool {
	rl.forget(now)
	return len(rl.log) == 0 && !rl.tat.After(now)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
