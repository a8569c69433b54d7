package pacing

import (
	"fmt"
	"sync"
	"time"
)

// SpendWindow is how far back the calls a namespace spent of a budget count
// against its share: long enough to hold a few syncs of a namespace within
// its share, short enough that one that starts requesting syncs in a loop is
// over its share within seconds.
const SpendWindow = 20 * time.Second

// SpendSlack is how many calls past its share a namespace may spend in one
// SpendWindow before it is over its share by what it spent: two syncs of
// pipes and endpoints, so that a namespace whose syncs bunch up (a spec
// applied to all its watches at once, a retry) is not taken for one that
// asks in a loop. Once over, it stays over until it spends no more than
// its share (Spending.Over).
const SpendSlack = 4

// spendTolerance is how far past what its watches' intervals ask a
// namespace's calls may go within one SpendWindow before they count as
// spent past its share: the phases bunch a namespace's periodic syncs by up
// to a fourth.
const spendTolerance = 1.25

// spendBuckets is how many slices of SpendWindow the calls are counted in:
// the window slides by a tenth.
const spendBuckets = 10

// spending counts the calls each namespace was admitted on each budget in
// the last SpendWindow, whatever they were for: periodic refreshes,
// requested syncs, a Secret's change, retries. The shares of a budget
// (demands) are computed from what each namespace's watches ask at their
// intervals; a namespace whose watches sit at 24 h but request syncs in a
// loop asked for almost nothing and took the whole budget, and the other
// namespaces' periodic syncs waited behind it (issue 37). What it spent now
// counts: a namespace that spent more than its share (overBySpend) is over
// it, and leaves the others their reserved room (reservations), as one
// whose intervals ask too much does.
//
// It costs a fixed count per budget and namespace that spent in the last
// window; one that spent nothing in a window is dropped when next looked at.
type spending struct {
	mu      sync.Mutex
	budgets map[string]map[string]*callWindow
}

// callWindow is the calls of one namespace on one budget, per slice of
// SpendWindow: counts[i % spendBuckets] holds slice i, last is the latest
// slice counted.
type callWindow struct {
	counts [spendBuckets]int
	last   int64
	// over: the namespace was last found over its share by what it spent
	// (see Spending.Over).
	over bool
}

// newSpending returns an empty book.
func newSpending() *spending {
	return &spending{budgets: map[string]map[string]*callWindow{}}
}

// sliceOf is the slice of SpendWindow that at falls in.
func sliceOf(at time.Time) int64 {
	return at.UnixNano() / int64(SpendWindow/spendBuckets)
}

// Spent records that namespace was admitted n calls of budget at now.
func (s *spending) Spent(budget, namespace string, n int, now time.Time) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	of := s.budgets[budget]
	if of == nil {
		of = map[string]*callWindow{}
		s.budgets[budget] = of
	}
	w := of[namespace]
	if w == nil {
		w = &callWindow{last: sliceOf(now)}
		of[namespace] = w
	}
	w.slide(sliceOf(now))
	w.counts[w.last%spendBuckets] += n
}

// Of is what each namespace spent of budget in the SpendWindow up to now,
// and whether it was last found over its share (see Mark); nil when none
// spent anything. Namespaces that spent nothing in it are dropped.
func (s *spending) Of(budget string, now time.Time) map[string]Spending {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out map[string]Spending
	for name, w := range s.budgets[budget] {
		w.slide(sliceOf(now))
		n := w.sum()
		if n == 0 {
			delete(s.budgets[budget], name)
			continue
		}
		if out == nil {
			out = map[string]Spending{}
		}
		out[name] = Spending{Spent: n, WasOver: w.over}
	}
	if len(s.budgets[budget]) == 0 {
		delete(s.budgets, budget)
	}
	return out
}

// Mark records which namespaces that spent of budget are over their share
// by what they spent: one stays over until it spends no more than its
// share (see Spending.Over).
func (s *spending) Mark(budget string, over map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, w := range s.budgets[budget] {
		w.over = over[name]
	}
}

// slide moves the window on to slice at, emptying the slices it leaves
// behind. A clock that went back counts into the latest slice.
func (w *callWindow) slide(at int64) {
	if at <= w.last {
		return
	}
	for i := w.last + 1; i <= at && i <= w.last+spendBuckets; i++ {
		w.counts[i%spendBuckets] = 0
	}
	w.last = at
}

func (w *callWindow) sum() int {
	n := 0
	for _, c := range w.counts {
		n += c
	}
	return n
}

// Spending is what a namespace spent of a budget in the last SpendWindow,
// and the most it may spend there and stay within its share.
type Spending struct {
	// Spent is the calls it was admitted in the window.
	Spent int
	// Limit is the calls it may spend in the window within its share (see
	// spendLimit); 0 when the budget has no limit or no other namespace.
	Limit float64
	// Schedule is the calls its watches ask in the window at their
	// intervals (with the phases' tolerance).
	Schedule float64
	// Slack is the calls past Limit it may spend before it is over:
	// SpendSlack, or half its part of the window on a key too small for
	// that (4 calls per 10 s earn 7.3 calls in a window, and a namespace
	// could never spend its half and 4 more).
	Slack float64
	// WasOver: it was last found over its share by what it spent.
	WasOver bool
}

// Over tells whether the namespace spent more than its share: past Limit
// and Slack; once over, it stays over until it spends no more than its
// watches' intervals ask (Schedule) and half the slack (one sync). The
// slack lets a namespace's syncs bunch up now and then; without the
// hysteresis, a namespace held to its share while it requests in a loop,
// which then spends what the others leave, about its part, would be let
// go, and take their room again.
func (s Spending) Over() bool {
	if s.Limit <= 0 {
		return false
	}
	if s.WasOver {
		return float64(s.Spent) > s.Schedule+s.Slack/2
	}
	return float64(s.Spent) > s.Limit+s.Slack
}

// Message says, for work a user asked for that waits while its namespace
// is over its share of key (the key's name: "management API key"), what
// the namespace spent and its share, and what it waits for. It tells
// nothing else of the other namespaces.
func (s Spending) Message(key string) string {
	return fmt.Sprintf("the requested sync waits: this namespace made %d calls with the %s in the last %v, more than its share (%.0f); "+
		"while it is over its share, its requested syncs wait for the room the other namespaces' syncs on the key leave",
		s.Spent, key, SpendWindow, s.Limit)
}

// spendLimit is the most calls a namespace may spend of a budget in one
// SpendWindow and stay within its share: its weight's part of the budget
// (part, calls per second, what it gets however much the others ask) or
// what its watches ask at their intervals (need), whichever is more. A
// namespace within its share by its intervals keeps that share, and one
// whose intervals ask little gets its part for what it requests besides.
func spendLimit(part, need float64) float64 {
	return max(part, need*spendTolerance) * SpendWindow.Seconds()
}
