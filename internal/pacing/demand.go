package pacing

import (
	"math"
	"sync"
	"time"
)

// demands knows, for each rate budget (an API key or token at one API host,
// named by the full digest of the credential and host, never by the short
// fingerprint the metrics show: two credentials whose fingerprints collide
// must not share a book entry), what the watches that use it ask of it. When they
// ask for more calls than the budget allows, each one's interval is
// stretched by the same factor, so that they share the budget in proportion
// to what they asked, stay Ready, and the client never has to refuse a call.
//
// A read that several watches make together is made once, so it is asked
// for once: ten watches of one service at 30 s ask two calls per 30 s of
// their key, not twenty. K names a watch, R a read.
//
// Noting and forgetting a watch cost in proportion to its own reads, never
// to the number of budgets or watches: the ratios the metrics show are
// handed out only for the labels that changed (TakeChanges).
type demands[K, R comparable] struct {
	mu      sync.Mutex
	budgets map[string]*budgetUse[K, R]
	of      map[K][]heldAsk[R]
	// labels holds the budgets shown under each metric label: one, but for
	// a fingerprint collision.
	labels map[labelKey]map[string]bool
	// changed are the labels whose ratio changed since TakeChanges.
	changed map[labelKey]bool
}

// labelKey is what names a budget's series in the metrics.
type labelKey struct{ api, label string }

// budgetUse is what the watches on one budget ask of it.
type budgetUse[K, R comparable] struct {
	// api is the API the budget is of, and label its fingerprint, for the
	// metrics.
	api, label string
	// allowed is the calls per second the budget allows.
	allowed float64
	// asks are the reads the watches make of the budget, each with the
	// watches that make it together.
	asks map[sharedAsk[R]]map[K]bool
	// perSecond is the calls per second the asks add up to, kept as they
	// come and go so that noting a watch costs no walk over the others.
	perSecond float64
}

// sharedAsk is one read made once per interval by every watch that makes it
// at the same moments: those of one phase group (the same interval and the
// same group sync together, see phases). Watches that make the same read at
// other moments make it again, so they ask for it again.
type sharedAsk[R comparable] struct {
	read  R
	every time.Duration
	group uint64
}

// heldAsk is an ask of one watch, to forget it.
type heldAsk[R comparable] struct {
	budget string
	ask    sharedAsk[R]
}

// Demand is a watch's share of one budget.
type Demand[R comparable] struct {
	// API is the API the budget is of, for the metrics.
	API string
	// Budget names the budget exactly: a full digest of the API, host and
	// credential, never the credential.
	Budget string
	// Label is the budget's short fingerprint, shown in the metrics only.
	Label string
	// Allowed is the calls per second the budget allows; 0 means unlimited.
	Allowed float64
	// Reads are the calls of this budget one sync makes.
	Reads []R
	// AcrossGroups: a read made by one watch is reused by every watch of
	// the same interval whatever its phase group (a list reused for most of
	// an interval), so it is asked for once per interval, not once per
	// group.
	AcrossGroups bool
}

// Ratio is the demand ratio shown under one metric label. Budgets whose
// labels collide show the highest of their ratios.
type Ratio struct {
	API   string
	Label string
	Ratio float64
	// Gone: no watch uses a budget of this label any more.
	Gone bool
}

// newDemands returns an empty book.
func newDemands[K, R comparable]() *demands[K, R] {
	return &demands[K, R]{
		budgets: map[string]*budgetUse[K, R]{},
		of:      map[K][]heldAsk[R]{},
		labels:  map[labelKey]map[string]bool{},
		changed: map[labelKey]bool{},
	}
}

// Note records what the watch, of phase group group, asks of its budgets at
// interval every, replacing what it asked before, and returns the factor its
// interval must be stretched by to fit all of them (1 when they all fit).
func (b *demands[K, R]) Note(key K, every time.Duration, group uint64, demands []Demand[R]) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removeLocked(key)
	factor := 1.0
	for _, d := range demands {
		if len(d.Reads) == 0 || d.Allowed <= 0 {
			continue
		}
		use := b.budgets[d.Budget]
		if use == nil {
			use = &budgetUse[K, R]{asks: map[sharedAsk[R]]map[K]bool{}, api: d.API, label: d.Label}
			b.budgets[d.Budget] = use
			b.showLocked(d.Budget, use)
		}
		use.allowed = d.Allowed
		b.changed[use.labelKey()] = true
		for _, read := range d.Reads {
			ask := sharedAsk[R]{read: read, every: every, group: group}
			if d.AcrossGroups {
				ask.group = 0
			}
			if use.asks[ask] == nil {
				use.asks[ask] = map[K]bool{}
				use.perSecond += 1 / every.Seconds()
			}
			use.asks[ask][key] = true
			b.of[key] = append(b.of[key], heldAsk[R]{budget: d.Budget, ask: ask})
		}
		factor = max(factor, use.ratio())
	}
	return factor
}

// ratio is the calls per second asked divided by those allowed.
func (u *budgetUse[K, R]) ratio() float64 {
	return max(0, u.perSecond) / u.allowed
}

func (u *budgetUse[K, R]) labelKey() labelKey { return labelKey{api: u.api, label: u.label} }

// showLocked files a new budget under its label.
func (b *demands[K, R]) showLocked(budget string, use *budgetUse[K, R]) {
	k := use.labelKey()
	if b.labels[k] == nil {
		b.labels[k] = map[string]bool{}
	}
	b.labels[k][budget] = true
}

// hideLocked takes a budget that went away out of its label.
func (b *demands[K, R]) hideLocked(budget string, use *budgetUse[K, R]) {
	k := use.labelKey()
	delete(b.labels[k], budget)
	if len(b.labels[k]) == 0 {
		delete(b.labels, k)
	}
	b.changed[k] = true
}

// TakeChanges returns the ratio of every label that changed since the last
// call, Gone for those no budget shows any more, and starts over: the
// metrics cost what changed, not what is.
func (b *demands[K, R]) TakeChanges() []Ratio {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Ratio, 0, len(b.changed))
	for k := range b.changed {
		r := Ratio{API: k.api, Label: k.label, Gone: true}
		for budget := range b.labels[k] {
			r.Gone = false
			r.Ratio = max(r.Ratio, b.budgets[budget].ratio())
		}
		out = append(out, r)
	}
	clear(b.changed)
	return out
}

// Forget removes a watch that went away from its budgets.
func (b *demands[K, R]) Forget(key K) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removeLocked(key)
}

func (b *demands[K, R]) removeLocked(key K) {
	for _, held := range b.of[key] {
		use := b.budgets[held.budget]
		if use == nil {
			continue
		}
		b.changed[use.labelKey()] = true
		if watches := use.asks[held.ask]; watches != nil {
			delete(watches, key)
			if len(watches) == 0 {
				delete(use.asks, held.ask)
				use.perSecond -= 1 / held.ask.every.Seconds()
			}
		}
		if len(use.asks) == 0 {
			delete(b.budgets, held.budget)
			b.hideLocked(held.budget, use)
		}
	}
	delete(b.of, key)
}

// MaxEffectiveInterval bounds how far a budget may stretch an interval: far
// past what any budget needs, far within the slot arithmetic (int64
// nanoseconds).
const MaxEffectiveInterval = 365 * 24 * time.Hour

// Stretched is the interval that fits the budget: every times factor,
// rounded up to a whole second so that small changes of demand do not change
// it, and at most MaxEffectiveInterval.
func Stretched(every time.Duration, factor float64) time.Duration {
	if factor <= 1 {
		return every
	}
	seconds := math.Ceil(every.Seconds() * factor)
	if !(seconds < MaxEffectiveInterval.Seconds()) { // NaN too
		return MaxEffectiveInterval
	}
	return time.Duration(seconds) * time.Second
}
