package pacing

import (
	"math"
	"sync"
	"time"

	"github.com/servicewatch/servicewatch/internal/tenancy"
)

// demands knows, for each rate budget (an API key or token at one API host,
// named by the full digest of the credential and host, never by the short
// fingerprint the metrics show: two credentials whose fingerprints collide
// must not share a book entry), what the watches that use it ask of it, by
// namespace. Each namespace gets a fair share of the budget (tenancy.Divide:
// by weight, what an idle namespace leaves going to the others); when a
// namespace's watches ask for more calls than its share, each one's interval
// is stretched by the same factor, so that they share the namespace's part
// in proportion to what they asked, stay Ready, and the client never has to
// refuse a call. Before, every watch on the budget was stretched by the
// budget's one factor, and a namespace with many watches stretched
// another's single watch as much as its own.
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
	// namespaces are the asks of each namespace. A read two namespaces make
	// together counts in full for each: neither's share depends on the
	// other's watches.
	namespaces map[string]*namespaceUse[R]
}

// namespaceUse is what the watches of one namespace ask of one budget.
type namespaceUse[R comparable] struct {
	weight float64
	// asks counts the namespace's watches that make each ask.
	asks      map[sharedAsk[R]]int
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
	budget    string
	namespace string
	ask       sharedAsk[R]
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
	// Namespace is the watch's namespace, which shares the budget with the
	// others by Weight (<= 0: 1); see tenancy.Divide.
	Namespace string
	Weight    float64
}

// Ratio is the demand ratio shown under one metric label. Budgets whose
// labels collide show the highest of their ratios.
type Ratio struct {
	API   string
	Label string
	Ratio float64
	// Gone: no watch uses a budget of this label any more.
	Gone bool
	// Namespaces are the shares of the namespaces that use a budget of this
	// label, in calls per second (with colliding labels, the last budget's
	// wins).
	Namespaces map[string]tenancy.Share
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
// interval must be stretched by to fit its namespace's share of all of them
// (1 when they all fit).
func (b *demands[K, R]) Note(key K, every time.Duration, group uint64, demands []Demand[R]) float64 {
	factor, _ := b.NoteShare(key, every, group, demands)
	return factor
}

// NoteShare is Note, with the share of the budget that stretches the watch
// most.
func (b *demands[K, R]) NoteShare(key K, every time.Duration, group uint64, demands []Demand[R]) (float64, tenancy.Share) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removeLocked(key)
	factor, worst := 1.0, tenancy.Share{}
	for _, d := range demands {
		if len(d.Reads) == 0 || d.Allowed <= 0 {
			continue
		}
		use := b.budgets[d.Budget]
		if use == nil {
			use = &budgetUse[K, R]{asks: map[sharedAsk[R]]map[K]bool{}, api: d.API, label: d.Label, namespaces: map[string]*namespaceUse[R]{}}
			b.budgets[d.Budget] = use
			b.showLocked(d.Budget, use)
		}
		use.allowed = d.Allowed
		b.changed[use.labelKey()] = true
		ns := use.namespace(d.Namespace, d.Weight)
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
			ns.add(ask, 1)
			b.of[key] = append(b.of[key], heldAsk[R]{budget: d.Budget, namespace: d.Namespace, ask: ask})
		}
		share := use.shares()[d.Namespace]
		if f := share.Factor(); f > factor {
			factor, worst = f, share
		}
	}
	return factor, worst
}

// namespace returns the namespace's asks of the budget, creating them.
func (u *budgetUse[K, R]) namespace(name string, weight float64) *namespaceUse[R] {
	ns := u.namespaces[name]
	if ns == nil {
		ns = &namespaceUse[R]{asks: map[sharedAsk[R]]int{}}
		u.namespaces[name] = ns
	}
	ns.weight = weight
	return ns
}

// add counts n more (or, negative, fewer) of the namespace's watches that
// make ask.
func (ns *namespaceUse[R]) add(ask sharedAsk[R], n int) {
	before := ns.asks[ask]
	ns.asks[ask] = before + n
	switch {
	case before == 0 && n > 0:
		ns.perSecond += 1 / ask.every.Seconds()
	case before+n <= 0:
		delete(ns.asks, ask)
		ns.perSecond -= 1 / ask.every.Seconds()
	}
}

// shares divides the budget between its namespaces (tenancy.Divide).
func (u *budgetUse[K, R]) shares() map[string]tenancy.Share {
	claims := make([]tenancy.Claim, 0, len(u.namespaces))
	for name, ns := range u.namespaces {
		claims = append(claims, tenancy.Claim{Namespace: name, Weight: ns.weight, Need: max(0, ns.perSecond)})
	}
	return tenancy.Divide(u.allowed, claims)
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
			r.Namespaces = b.budgets[budget].shares()
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
		if ns := use.namespaces[held.namespace]; ns != nil {
			ns.add(held.ask, -1)
			if len(ns.asks) == 0 {
				delete(use.namespaces, held.namespace)
			}
		}
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

// Over is the namespaces over their share of the budget: those whose
// watches it stretches (their intervals ask more than their share), and
// those that spent more than their share of it in the last SpendWindow
// (spent, calls per namespace: see spending and spendLimit), whatever their
// intervals ask. nil when none is, or when one namespace alone uses the
// budget.
func (b *demands[K, R]) Over(budget string, spent map[string]Spending) map[string]bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	use := b.budgets[budget]
	if use == nil || len(use.namespaces) < 2 {
		return nil
	}
	var over map[string]bool
	for name, share := range use.shares() {
		if share.Factor() > 1 || use.spending(name, spent[name]).Over() {
			if over == nil {
				over = map[string]bool{}
			}
			over[name] = true
		}
	}
	return over
}

// SpendingOf is what namespace spent of the budget in the last SpendWindow
// (spent: its calls there, and whether it was over already) with the most
// it may spend there within its share: a Limit of 0 when it does not share
// the budget with another namespace.
func (b *demands[K, R]) SpendingOf(budget, namespace string, spent Spending) Spending {
	b.mu.Lock()
	defer b.mu.Unlock()
	use := b.budgets[budget]
	if use == nil || len(use.namespaces) < 2 {
		return Spending{Spent: spent.Spent}
	}
	return use.spending(namespace, spent)
}

// spending is spent, what namespace spent of the budget in the last
// SpendWindow, with the most it may spend there (spendLimit): its weight's
// part of what the budget allows, or what its watches ask at their
// intervals.
func (u *budgetUse[K, R]) spending(namespace string, spent Spending) Spending {
	ns := u.namespaces[namespace]
	if ns == nil || u.allowed <= 0 {
		return Spending{Spent: spent.Spent}
	}
	weights := 0.0
	for _, other := range u.namespaces {
		weights += Waiter{Weight: other.weight}.weight()
	}
	part := u.allowed * Waiter{Weight: ns.weight}.weight() / weights
	spent.Limit = spendLimit(part, max(0, ns.perSecond))
	spent.Schedule = max(0, ns.perSecond) * spendTolerance * SpendWindow.Seconds()
	spent.Slack = min(SpendSlack, part*SpendWindow.Seconds()/2)
	return spent
}

// budgetCalls is the calls one sync of a watch makes of one budget, and
// the calls per second the budget allows (0: no limit).
type budgetCalls struct {
	budget, namespace string
	calls             int
	rate              float64
}

// CallsOf is the calls one sync of the watch makes of each of its budgets,
// as it last asked (Note), one entry per budget in the order first asked.
// A budget may come in more than one demand (a management key serves the
// management API's alerts as well as pipes and endpoints): its calls add.
func (b *demands[K, R]) CallsOf(key K) []budgetCalls {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []budgetCalls
	at := map[string]int{} // budget → index in out
	for _, held := range b.of[key] {
		i, ok := at[held.budget]
		if !ok {
			i = len(out)
			at[held.budget] = i
			var rate float64
			if use := b.budgets[held.budget]; use != nil {
				rate = use.allowed
			}
			out = append(out, budgetCalls{budget: held.budget, namespace: held.namespace, rate: rate})
		}
		out[i].calls++
	}
	return out
}

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

// spendLimit is the most calls a namespace may spend of a budget in one
// SpendWindow and stay within its share: its weight's part of the budget
// (part, calls per second, what it gets however much the others ask) or
// what its watches ask at their intervals (need), whichever is more. A
// namespace within its share by its intervals keeps that share, and one
// whose intervals ask little gets its part for what it requests besides.
func spendLimit(part, need float64) float64 {
	return max(part, need*spendTolerance) * SpendWindow.Seconds()
}
