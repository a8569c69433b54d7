package cloudapi

import (
	"sync"
	"time"
)

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
// service's by a margin: with Per × 11/10, no window of Per at the service
// sees more than Requests calls as long as latency varies by less than a
// tenth of Per (1 s for the management API's 10 s).
const (
	marginNumerator   = 11
	marginDenominator = 10
)

// windowOf returns l.Per stretched by the margin.
func windowOf(l RateLimit) time.Duration {
	return l.Per * marginNumerator / marginDenominator
}

// pacer admits calls under a RateLimit. Two rules, both needed: a generic
// cell rate algorithm (GCRA) spaces admissions window/Requests apart and
// lets at most Burst go together, so that a backlog (a cold start, a flag
// change) is spread out instead of fired at once; and a log of the last
// window's admissions caps them at Requests, which GCRA alone does not (its
// burst comes on top of the rate).
type pacer struct {
	window   time.Duration
	interval time.Duration
	requests int
	burst    int
	tat      time.Time   // GCRA's theoretical arrival time
	log      []admission // admissions within the last window, oldest first
}

// admission is n calls admitted together.
type admission struct {
	at time.Time
	n  int
}

func newPacer(l RateLimit) *pacer {
	window := windowOf(l)
	burst := l.Burst
	if burst <= 0 || burst > l.Requests {
		burst = l.Requests
	}
	return &pacer{window: window, interval: window / time.Duration(l.Requests), requests: l.Requests, burst: burst}
}

// admit reserves n calls at now and returns 0 if both rules allow them all;
// otherwise it reserves nothing and returns how long to wait (> 0). A batch
// larger than Burst goes only when the budget is fully rested; a batch
// larger than Requests never goes, and the wait is one window.
func (p *pacer) admit(now time.Time, n int) time.Duration {
	if n > p.requests {
		return p.window
	}
	p.forget(now)
	tat := maxTime(p.tat, now).Add(time.Duration(n) * p.interval)
	wait := tat.Sub(now) - time.Duration(max(p.burst, n))*p.interval
	wait = max(wait, p.windowWait(now, n))
	if wait > 0 {
		return wait
	}
	p.tat = tat
	p.log = append(p.log, admission{at: now, n: n})
	return 0
}

// windowWait returns how long until n more calls fit in the window.
func (p *pacer) windowWait(now time.Time, n int) time.Duration {
	excess := n - p.requests
	for _, a := range p.log {
		excess += a.n
	}
	for _, a := range p.log {
		if excess <= 0 {
			break
		}
		if excess -= a.n; excess <= 0 {
			return a.at.Add(p.window).Sub(now)
		}
	}
	return 0
}

// forget drops the admissions that have left the window: a call admitted
// exactly one window ago no longer counts.
func (p *pacer) forget(now time.Time) {
	i := 0
	for i < len(p.log) && !p.log[i].at.Add(p.window).After(now) {
		i++
	}
	p.log = p.log[i:]
}

// rested reports whether the pacer is as good as new.
func (p *pacer) rested(now time.Time) bool {
	p.forget(now)
	return len(p.log) == 0 && !p.tat.After(now)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// budget is what the client remembers about one credential on one API host:
// its pacer and the hold of the last 429.
type budget struct {
	pacer     *pacer // nil when the limit is disabled
	holdUntil time.Time
}

// budgetStore maps budget keys to budgets and forgets those that are as good
// as new. One mutex guards it all: each operation is a few comparisons, and
// a single lock means a sweep can never drop a budget in use.
type budgetStore struct {
	mu        sync.Mutex
	budgets   map[credKey]*budget
	lastSweep time.Time
}

// sweepEvery is how often rested budgets are forgotten; forgetting one
// changes nothing, so this only bounds the work and the memory.
const sweepEvery = time.Minute

// get returns the budget for key, creating it with limit. Callers hold s.mu.
func (s *budgetStore) get(key credKey, limit RateLimit, now time.Time) *budget {
	if s.budgets == nil {
		s.budgets = map[credKey]*budget{}
	}
	if now.Sub(s.lastSweep) >= sweepEvery {
		s.sweep(now)
	}
	b, ok := s.budgets[key]
	if !ok {
		b = &budget{}
		if limit.enabled() {
			b.pacer = newPacer(limit)
		}
		s.budgets[key] = b
	}
	return b
}

// sweep forgets the budgets that are as good as new: no hold, and a rested
// pacer.
func (s *budgetStore) sweep(now time.Time) {
	s.lastSweep = now
	for k, b := range s.budgets {
		if !b.holdUntil.After(now) && (b.pacer == nil || b.pacer.rested(now)) {
			delete(s.budgets, k)
		}
	}
}

// admit reserves n calls of key's budget; see Client.Admit.
func (s *budgetStore) admit(key credKey, limit RateLimit, now time.Time, n int) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.get(key, limit, now)
	if wait := b.holdUntil.Sub(now); wait > 0 {
		return wait
	}
	if b.pacer == nil || n <= 0 {
		return 0
	}
	return b.pacer.admit(now, n)
}

// hold records that key's budget may not be used before until.
func (s *budgetStore) hold(key credKey, limit RateLimit, now, until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.get(key, limit, now)
	b.holdUntil = maxTime(b.holdUntil, until)
}

// heldUntil returns the end of key's hold, or the zero time when there is
// none at now.
func (s *budgetStore) heldUntil(key credKey, now time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.budgets[key]; ok && b.holdUntil.After(now) {
		return b.holdUntil
	}
	return time.Time{}
}

// len returns the number of budgets remembered; for tests.
func (s *budgetStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.budgets)
}

// MaxBatch is the most calls of api one Admit can reserve without waiting
// for the budget to rest whole: its Burst (Requests when Burst is unset); 0
// means unlimited. A caller with more calls to make splits them into batches
// of at most this many.
func (c *Client) MaxBatch(api string) int {
	l := c.limitOf(api)
	if !l.enabled() {
		return 0
	}
	if l.Burst <= 0 || l.Burst > l.Requests {
		return l.Requests
	}
	return l.Burst
}

// Allowance is how many calls per second the client admits on one budget of
// api (a key or token at one host), margin included; 0 means unlimited. The
// controller compares it with what the watches on a budget ask.
func (c *Client) Allowance(api string) float64 {
	l := c.limitOf(api)
	if !l.enabled() {
		return 0
	}
	return float64(l.Requests) / windowOf(l).Seconds()
}
