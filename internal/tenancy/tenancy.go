package tenancy

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Claim is what one namespace asks of a key: Need calls per second, with
// Weight (<= 0 counts as 1).
type Claim struct {
	Namespace string
	Weight    float64
	Need      float64
}

// Share is what Divide gives one namespace of a key: Share calls per second
// of Need asked.
type Share struct {
	Share float64
	Need  float64
}

// Factor is how much the namespace's intervals must be stretched to keep
// within its share: 1 when its share covers what it needs.
func (s Share) Factor() float64 {
	if s.Need <= s.Share {
		return 1
	}
	if s.Share <= 0 {
		return math.Inf(1)
	}
	return s.Need / s.Share
}

// Divide shares capacity calls per second between the claims by weighted
// max-min fairness: a namespace that needs less than its weight's part of
// what is left gets what it needs, and the rest is divided again between
// the others, by weight, until every namespace either is served or gets
// its weight's part of the remainder. The shares never add up to more than
// capacity, and add up to all of it when the needs do. A capacity <= 0
// means unlimited: every namespace gets what it needs.
func Divide(capacity float64, claims []Claim) map[string]Share {
	shares := make(map[string]Share, len(claims))
	for _, c := range claims {
		shares[c.Namespace] = Share{Share: max(0, c.Need), Need: max(0, c.Need)}
	}
	if capacity <= 0 {
		return shares
	}
	// Water-filling: the claims by need per weight, least first; each is
	// served in full while its need is below its weight's part of what is
	// left, and from the first that is not, each gets its weight's part.
	order := slices.Clone(claims)
	slices.SortFunc(order, func(a, b Claim) int { return compare(perWeight(a), perWeight(b)) })
	left, weights := capacity, 0.0
	for _, c := range order {
		weights += weightOf(c)
	}
	for _, c := range order {
		part := left * weightOf(c) / weights
		s := shares[c.Namespace]
		s.Share = min(s.Need, part)
		shares[c.Namespace] = s
		left -= s.Share
		weights -= weightOf(c)
	}
	return shares
}

// weightOf is the claim's weight, 1 when it names none.
func weightOf(c Claim) float64 {
	if !(c.Weight > 0) { // NaN too
		return 1
	}
	return c.Weight
}

// perWeight is what the claim needs per unit of weight: the order in which
// water-filling serves the claims.
func perWeight(c Claim) float64 { return max(0, c.Need) / weightOf(c) }

func compare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Usable is the part of requests (a key's calls per window) the manager
// keeps to when reserved of it is left to callers outside the cluster: at
// least one call, so that a reserve near 1 slows the manager down rather
// than stopping it. reserved outside [0, 1) reserves nothing (ValidateReserve
// refuses it earlier).
func Usable(requests int, reserved float64) int {
	if requests <= 0 || !(reserved > 0 && reserved < 1) {
		return requests
	}
	return max(1, int(math.Floor(float64(requests)*(1-reserved))))
}

// ValidateReserve refuses a reserved share the manager cannot keep: it must be in
// [0, 1).
func ValidateReserve(reserved float64) error {
	if !(reserved >= 0 && reserved < 1) {
		return fmt.Errorf("the reserved share of a key's budget must be at least 0 and less than 1, not %v", reserved)
	}
	return nil
}

// Weights gives the weight of a namespace on a budget (a key at one host,
// named by its digest); nil weighs every namespace 1. The ServiceWatch
// controller uses a ClusterCloudAccount's spec.namespaceWeights for the
// budget of its key (accountcontroller.Accounts.WeightOf).
type Weights func(budget, namespace string) float64

// Of is the namespace's weight on budget: 1 when w is nil.
func (w Weights) Of(budget, namespace string) float64 {
	if w == nil {
		return 1
	}
	return w(budget, namespace)
}

// Defaults for NewWorkShares. A unit of work is about 10 ns of one core (see
// lenient.Work).
const (
	// DefaultWorkRate is the work each namespace earns per second: 10 Mi units,
	// about a tenth of a core. A namespace whose watches read two lists of
	// a thousand real pipes each (14 Mi units a list) every 30 s, the
	// shortest interval, uses a tenth of it; a hostile one, decoding the
	// worst answers back to back, would use ten times its share.
	DefaultWorkRate = 10 << 20
	// DefaultWorkBurst is the most work a namespace can use at once before it
	// waits: 768 Mi units, the default budget of two answers
	// (cloudapi.DefaultDecodeWorkPerByte at the default 16 MiB cap), so
	// that one sync of the largest real lists never waits.
	DefaultWorkBurst = 768 << 20
)

// WorkShares is a token bucket of decode work per namespace. The zero value and
// nil are unbounded: nobody waits. It is safe for concurrent use.
type WorkShares struct {
	rate, burst float64
	now         func() time.Time

	mu sync.Mutex
	// buckets are the namespaces that used work recently; a bucket that
	// has earned its burst back is forgotten, so that the map follows the
	// namespaces that read, not every namespace ever seen.
	buckets map[string]*bucket
}

// bucket is one namespace's work: level units available at at, negative
// when the namespace used more than it had.
type bucket struct {
	level float64
	at    time.Time
}

// NewWorkShares returns WorkShares where each namespace earns rate units of work per
// second, up to burst; now is the clock.
func NewWorkShares(rate, burst float64, now func() time.Time) *WorkShares {
	return &WorkShares{rate: rate, burst: burst, now: now, buckets: map[string]*bucket{}}
}

// Charge counts units of work a read of namespace did. A namespace may go
// into debt: a read's work is only known once it is done.
func (s *WorkShares) Charge(namespace string, units int64) {
	if s == nil || s.rate <= 0 || units <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.refilled(namespace)
	b.level -= float64(units)
	s.buckets[namespace] = b
}

// Wait is how long namespace's next reads must wait before it has earned
// back the work it used beyond its share; 0 when it may read now.
func (s *WorkShares) Wait(namespace string) time.Duration {
	if s == nil || s.rate <= 0 {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.buckets[namespace]; !ok {
		return 0
	}
	b := s.refilled(namespace)
	if b.level >= s.burst {
		delete(s.buckets, namespace) // back to full: nothing to remember
		return 0
	}
	s.buckets[namespace] = b
	if b.level >= 0 {
		return 0
	}
	return time.Duration(-b.level / s.rate * float64(time.Second))
}

// refilled is namespace's bucket with what it earned since it was last
// seen; a new namespace starts full.
func (s *WorkShares) refilled(namespace string) *bucket {
	now := s.now()
	b, ok := s.buckets[namespace]
	if !ok {
		return &bucket{level: s.burst, at: now}
	}
	if elapsed := now.Sub(b.at); elapsed > 0 {
		b.level = min(s.burst, b.level+elapsed.Seconds()*s.rate)
	}
	b.at = now
	return b
}

// Tracked counts the namespaces whose use of work is remembered.
func (s *WorkShares) Tracked() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.buckets)
}

// The default budgets, for the Deployment's 256 MiB memory limit (and
// GOMEMLIMIT=256MiB). By the project's own figures (docs/benchmarks.md,
// "Memory"), a watch whose answers are the worst for memory costs the
// manager about 3.6 MiB all told (memory-worst-60: 276 MiB for 60 such
// watches, 58 MiB for one alone), about 4.5 times the 800 KiB its status
// kept at the status size limit of that measure. DefaultManagerStatusBytes,
// 32 MiB, is 40 such statuses at 800 KiB: 58 + 40 × 3.6 = 202 MiB, some 54
// MiB under the limit. The budgets bound bytes, not watches: at the 1 MiB
// limit (issue 39) they are 32 full statuses, and memory-worst-60 measured
// 192 MiB, reads holding their items encoded until the write (244 MiB at
// 800 KiB with them decoded). DefaultNamespaceStatusBytes, 8 MiB, is a quarter of the manager's, so
// that it takes four namespaces at the worst case to fill the manager's
// budget; an ordinary watch's status keeps a few KiB, so a namespace holds
// well over a thousand of those.
const (
	DefaultNamespaceStatusBytes = 8 << 20
	DefaultManagerStatusBytes   = 32 << 20
)

// StatusBudget is one bound on the bytes statuses keep, and the setting a user
// changes it with, named in the messages that report it. Bytes <= 0: no
// bound.
type StatusBudget struct {
	Bytes   int
	Setting string
}

// StatusLedger books what each watch's status keeps, the fixed part (conditions,
// counts, room for messages) as well as the lists. Within a namespace, room
// is handed out first come, first kept: a watch keeps the room it holds as
// long as it exists, so that a new watch never takes the data of one its
// namespace already shows, and the same watches in the same order are always
// cut the same way. Between namespaces, the manager's budget is divided: each
// namespace with watches may keep an equal part of it (and no more than the
// namespace budget), whatever the others keep, so that the parts together
// never pass it. A namespace that comes has its part at once; one that kept
// more than its new part is cut to it as its watches write again. A watch
// cut to nothing still keeps its fixed part (a few KiB), which no budget can
// refuse and which is booked too: a namespace with very many watches passes
// its part by that much per watch, has its own lists cut to nothing, and
// takes nothing of another namespace's part. A nil StatusLedger bounds nothing and
// books nothing.
type StatusLedger struct {
	namespace, manager StatusBudget

	mu      sync.Mutex
	held    map[watchKey]int
	byNS    map[string]int
	inTotal int
}

type watchKey struct{ namespace, name string }

// NewStatusLedger returns a ledger with a budget per namespace and one for the manager.
func NewStatusLedger(namespace, manager StatusBudget) *StatusLedger {
	return &StatusLedger{namespace: namespace, manager: manager, held: map[watchKey]int{}, byNS: map[string]int{}}
}

// StatusGrant is the room a watch may keep for one status write.
type StatusGrant struct {
	// Bytes is the most the watch's status may keep: at least 1 (a status
	// size limit of 0 would bound nothing).
	Bytes int
	// why says which budget bounds Bytes below what the watch asked for;
	// "" when none does.
	why    string
	ledger *StatusLedger
	key    watchKey
}

// Room returns how many of want bytes the watch namespace/name may keep
// with the lists a sync read (newLists; a write that keeps the lists it has
// is not bounded again): what the namespace budget and the namespace's part
// of the manager's budget leave once the namespace's other watches are
// counted. The grant is booked for the watch at once, so that watches
// written at the same moment do not share the same room, until Kept books
// what the status keeps. Its reason names the watch's own namespace and the
// settings only: never what other namespaces keep, how many there are, nor
// what all watches keep.
func (l *StatusLedger) Room(namespace, name string, want int, newLists bool) StatusGrant {
	if l == nil || !newLists {
		return StatusGrant{Bytes: want}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	key := watchKey{namespace, name}
	siblings := l.byNS[namespace] - l.held[key] // the namespace's other watches
	g := StatusGrant{Bytes: want, ledger: l, key: key}
	if left, ok := leftOf(l.namespace, siblings); ok && left < g.Bytes {
		g.Bytes, g.why = left, fmt.Sprintf("the other watches of namespace %s keep %d KiB of the %d KiB its watches may keep together (%s)",
			namespace, siblings>>10, l.namespace.Bytes>>10, l.namespace.Setting)
	}
	if left, ok := l.managerRoomOf(namespace, siblings); ok && left < g.Bytes {
		g.Bytes, g.why = left, fmt.Sprintf("the other watches of namespace %s keep %d KiB of its part of the room all statuses share (%s)",
			namespace, siblings>>10, l.manager.Setting)
	}
	l.set(key, g.Bytes)
	g.Bytes = max(1, g.Bytes)
	return g
}

// managerRoomOf is what the manager's budget leaves a watch of namespace
// whose other watches keep siblings bytes, and whether that budget bounds
// anything: the namespace's part (partOf) less what its other watches keep.
// What other namespaces keep does not count: they are bounded by their own
// parts, so what one namespace keeps, however many watches it has, never
// takes another's part.
func (l *StatusLedger) managerRoomOf(namespace string, siblings int) (int, bool) {
	if l.manager.Bytes <= 0 {
		return 0, false
	}
	return max(0, l.partOf(namespace)-siblings), true
}

// partOf is the part of the manager's budget that each namespace with
// watches, namespace among them, may keep: an equal part, so that the parts
// together never pass the manager's budget.
func (l *StatusLedger) partOf(namespace string) int {
	n := len(l.byNS)
	if _, ok := l.byNS[namespace]; !ok {
		n++
	}
	return l.manager.Bytes / n
}

// leftOf is what b leaves once others bytes are kept, and whether b bounds
// anything.
func leftOf(b StatusBudget, others int) (int, bool) {
	if b.Bytes <= 0 {
		return 0, false
	}
	return max(0, b.Bytes-others), true
}

// Kept books size() as what the watch's status keeps, in place of the
// grant, and returns what its status says of the grant: why the lists were
// cut past what the status size limit asks ("; " and the reason), or ""
// when no budget bounded them. A grant from a nil ledger or for old lists
// books nothing and does not call size.
func (g StatusGrant) Kept(size func() int) string {
	if g.ledger == nil {
		return ""
	}
	g.ledger.Hold(g.key.namespace, g.key.name, size())
	if g.why == "" {
		return ""
	}
	return "; " + g.why
}

// Hold books bytes as what the watch namespace/name keeps now, in place of
// what it booked before.
func (l *StatusLedger) Hold(namespace, name string, bytes int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.set(watchKey{namespace, name}, bytes)
}

// HoldIfNew books what the watch keeps (size, asked only then) if it has
// booked nothing yet: a watch the manager finds at start keeps its place,
// counted before any other watch asks for room.
func (l *StatusLedger) HoldIfNew(namespace, name string, size func() int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	key := watchKey{namespace, name}
	if _, ok := l.held[key]; !ok {
		l.set(key, size())
	}
}

// Release forgets a watch that went away; its room is free for the others.
func (l *StatusLedger) Release(namespace, name string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	key := watchKey{namespace, name}
	l.set(key, 0)
	delete(l.held, key)
}

// Kept returns what the watches of namespace keep together, and what all
// watches keep.
func (l *StatusLedger) Kept(namespace string) (inNamespace, inTotal int) {
	if l == nil {
		return 0, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byNS[namespace], l.inTotal
}

func (l *StatusLedger) set(key watchKey, bytes int) {
	diff := bytes - l.held[key]
	l.held[key] = bytes
	l.byNS[key.namespace] += diff
	l.inTotal += diff
	if l.byNS[key.namespace] == 0 {
		delete(l.byNS, key.namespace)
	}
}
