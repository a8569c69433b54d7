package pacing

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/servicewatch/servicewatch/internal/tenancy"
)

// Pacer is the one front of the pacing books of a reconciler: when each
// watch syncs next, its phase, what it asks of its budgets, its claims on
// them, its place in their lines and its turn of reads. The controller asks
// it one question per event of a sync (Due, Level, Fresh, ReadsList, Demand,
// Ask, AlertBatch/Took, Admitted, Synced), each with the watch as one Watch built
// in one place, and tells it of a watch that goes away once (Forget). K names
// a watch, R a read.
type Pacer[K, R comparable] struct {
	clock  *Clock
	jitter func(limit time.Duration) time.Duration

	schedules *schedules[K]
	phases    *phases[K]
	demands   *demands[K, R]
	claims    *claims[K]
	queue     *queue[K]
	turns     *turns[K]
	lists     *listGroups[K]
	reserved  *reservations[K]
	spent     *spending
}

// New returns a Pacer with empty books, reading time (and the wall clock's
// steps, by which it moves the schedules) from clock. jitter draws the
// random term of a periodic sync, at most limit; nil draws it uniformly.
func New[K, R comparable](clock *Clock, jitter func(limit time.Duration) time.Duration) *Pacer[K, R] {
	if jitter == nil {
		jitter = func(limit time.Duration) time.Duration { return time.Duration(rand.Int64N(int64(limit) + 1)) }
	}
	return &Pacer[K, R]{clock: clock, jitter: jitter,
		schedules: newSchedules[K](), phases: newPhases[K](), demands: newDemands[K, R](),
		claims: newClaims[K](), queue: newQueue[K](), turns: newTurns[K](), lists: newListGroups[K](),
		reserved: newReservations[K](), spent: newSpending()}
}

// Watch is a watch as the Pacer sees it, built from the watch in one place
// when a reconcile begins, so that every question put to the Pacer is asked
// with the same key, trigger, interval and group.
type Watch[K comparable] struct {
	Key K
	// Trigger fingerprints what the user may change to ask for a sync now
	// (the generation, a requested-at value, the referenced Secrets'
	// versions): a trigger other than the last sync's makes the watch due.
	Trigger string
	// Every is the watch's own interval, before any budget stretches it.
	Every time.Duration
	// Group identifies what the watch reads of its service: watches of one
	// group share a phase (see phases), unless the watch reads an alert
	// list shared beyond its service, whose group it joins (ReadsList).
	Group uint64
	// NewSpec: the spec changed since the last sync (a new generation).
	NewSpec bool
	// Requested: the user asked for a sync that has not been made (a new
	// requested-at value).
	Requested bool

	// What the watch's status tells of its last sync, for its first sight
	// after a start (or a change of leader): when it ended (zero: never),
	// whether the watch was Ready, and the wait the cloud asked for.
	LastSync       time.Time
	Ready          bool
	RetryNotBefore time.Time
}

// Asked tells whether a sync is owed to the user now: a new spec or a
// requested sync.
func (w Watch[K]) Asked() bool { return w.NewSpec || w.Requested }

// Due is how long a reconcile of the watch waits before it looks again, 0
// when a sync is due now (see untilDue). A step of the wall clock first
// moves every schedule and phase by it. A watch first seen with a wait
// (after a start) keeps its slot, so that a Secret touched meanwhile still
// triggers; a periodic slot is rechecked so that one placed again as the
// phases settle is seen in time (RecheckWithin).
func (p *Pacer[K, R]) Due(w Watch[K]) time.Duration {
	if step := p.clock.Step(); step != 0 {
		p.schedules.Shift(step)
		p.phases.Shift(step)
	}
	var known *Entry
	if s, ok := p.schedules.Get(w.Key); ok {
		known = &s
	}
	now := p.clock.Now()
	wait := untilDue(now, w, known, p.phases.PhaseOf(w.Key, p.lists.groupOf(w), w.Every))
	p.reserved.Move(w.Key, now.Add(wait)) // the slot as placed now
	if known == nil && wait > 0 {
		known = &Entry{Trigger: w.Trigger, NextSync: now.Add(wait)}
		if !w.RetryNotBefore.After(now) {
			// A periodic slot: placed again as the phases settle while the
			// watches are first seen after a start.
			known.Plan = restartPlan(w)
		}
		p.schedules.Set(w.Key, *known)
	}
	if known != nil && known.Plan != nil {
		return RecheckWithin(wait, known.Plan.Jitter, known.Plan.Every)
	}
	return wait
}

// untilDue returns how long until the watch's next sync, 0 when it is due.
// known is the watch's schedule, if the Pacer has one; phase its group's.
func untilDue[K comparable](now time.Time, w Watch[K], known *Entry, phase Phase) time.Duration {
	if known == nil && w.RetryNotBefore.After(now) {
		// First sight, after a restart or a change of leader: the wait the
		// cloud asked for still holds, whatever else is owed.
		return w.RetryNotBefore.Sub(now)
	}
	if w.Asked() {
		return 0
	}
	if known != nil {
		if known.Trigger != w.Trigger {
			return 0
		}
		if known.Plan != nil {
			return max(0, known.Plan.Due(phase).Sub(now))
		}
		return max(0, known.NextSync.Sub(now))
	}
	// First sight since the manager started: a healthy watch synced recently
	// waits for its next periodic sync, so a restart does not call the cloud
	// for every watch at once.
	if w.LastSync.IsZero() || !w.Ready {
		return 0
	}
	return max(0, restartPlan(w).Due(phase).Sub(now))
}

// restartPlan places the next periodic sync of a watch first seen after a
// start: one interval after its last sync (only its end is known), as if
// the manager had never stopped.
func restartPlan[K comparable](w Watch[K]) *Plan {
	return &Plan{After: w.LastSync, Every: w.Every}
}

// Level tells work a user asked for (a new spec, a requested sync) from a
// Secret's change (a trigger other than the last sync's) and from a
// periodic refresh.
func (p *Pacer[K, R]) Level(w Watch[K]) Level {
	if w.Asked() {
		return User
	}
	if p.triggered(w) {
		return Secret
	}
	return Periodic
}

// Fresh tells a sync that must not reuse what another watch read a moment
// ago: one the user requested, or after a change to a referenced Secret
// (touching a Secret is how tools force a refresh, and a key the cloud just
// re-authorized must not be answered with the 401 it gave a second ago). A
// new watch or spec may reuse: it has no data yet, and a change of what it
// reads changes the reads.
func (p *Pacer[K, R]) Fresh(w Watch[K]) bool {
	return w.Requested || (!w.NewSpec && p.triggered(w))
}

// triggered tells whether the watch's trigger differs from its last sync's.
func (p *Pacer[K, R]) triggered(w Watch[K]) bool {
	known, ok := p.schedules.Get(w.Key)
	return ok && known.Trigger != w.Trigger
}

// Demand records what the watch asks of its budgets at its interval,
// replacing what it asked before, and returns the interval the budgets allow
// it: its own when its namespace's shares of them fit, else stretched (see
// demands, Stretched).
func (p *Pacer[K, R]) Demand(w Watch[K], demands []Demand[R]) time.Duration {
	return p.Allow(w, demands).Every
}

// Allow is Demand with the share of the budget that stretches the watch
// most, for its IntervalMet condition.
func (p *Pacer[K, R]) Allow(w Watch[K], demands []Demand[R]) Allowance {
	factor, share := p.demands.NoteShare(w.Key, w.Every, p.lists.groupOf(w), demands)
	return Allowance{Every: Stretched(w.Every, factor), Share: share}
}

// TakeDemandChanges returns the demand ratios that changed since the last
// call, for the metrics (see demands.TakeChanges).
func (p *Pacer[K, R]) TakeDemandChanges() []Ratio { return p.demands.TakeChanges() }

// Budget is one rate budget, as the Pacer asks it for calls.
type Budget struct {
	// ID names the budget exactly (never by the credential itself).
	ID string
	// Rate is the calls per second it allows; 0 means unlimited.
	Rate float64
	// Admit reserves n calls of it now and returns 0, or says how long to
	// wait before it has room for them.
	Admit func(n int) time.Duration
	// Waiter is the asking watch's namespace, which takes turns with the
	// others in the budget's line (see queue).
	Waiter Waiter
}

// Ask asks the budget for the n calls of the watch's work at level, and
// returns 0 when they were reserved, else how long to wait. Work of a higher
// level of the watch's namespace that was told to wait for this budget goes
// first (see claims; another namespace's work takes turns, below); work
// told to wait claims the budget for its level until it comes back, and
// comes back when its place in the budget's line comes (queue), so that
// waiting costs about one ask per watch however many wait. The watch's
// claims stand until Admitted.
//
// A namespace over its share of the budget, by what its watches' intervals
// ask or by what it spent in the last SpendWindow (requested syncs, a
// Secret's changes and retries count as much as periodic refreshes: see
// spending), leaves the room reserved for the syncs of the namespaces
// within theirs (see reservations), and its waiters do not come before
// theirs in the line: a namespace that asks no more than its share gets its
// calls when they come due, whatever another requests. The calls admitted
// count as the namespace's spent.
func (p *Pacer[K, R]) Ask(key K, level Level, b Budget, n int) time.Duration {
	now := p.clock.Now()
	ns := b.Waiter.Namespace
	// Claims are per namespace: 50 new watches of one namespace do not push
	// another namespace's periodic refreshes back.
	scope := b.ID + "\x00" + ns
	over := p.over(b.ID, now)
	wait, held := p.claims.HeldFor(scope, key, level, now)
	if !held {
		wait = p.take(key, level, b, n, now, over)
	}
	if wait > 0 {
		p.queue.Due(b.ID, key, level, now.Add(wait))
		p.claims.Claim(scope, key, level, now.Add(wait))
		if len(over) > 0 && !over[ns] {
			p.reserved.Reserve(b.ID, key, ns, n, now.Add(wait)) // it comes back for its room
		}
	}
	return wait
}

// take takes the budget's room for the watch's n calls when its turn in
// the budget's line has come, and returns 0, else how long to wait for its
// turn. over are the namespaces over their share of the budget: one of
// them waits while its taking the room would leave a reserved sync of
// another namespace without it; a namespace within its share does not wait
// for their waiters.
func (p *Pacer[K, R]) take(key K, level Level, b Budget, n int, now time.Time, over map[string]bool) time.Duration {
	spacing := spacingOf(b.Rate)
	skip := over
	if over[b.Waiter.Namespace] {
		skip = nil
		if hold := p.reserved.HoldFor(b.ID, b.Waiter.Namespace, over, now, b.Rate); hold > 0 {
			return p.queue.Wait(b.ID, key, b.Waiter, level, n, b.Rate, hold, skip)
		}
	}
	if mine, first := p.queue.Turn(b.ID, key, b.Waiter, level, n, now, spacing, skip); !mine {
		// Another waiter, whose turn comes first, comes back for this room
		// after first.
		return p.queue.Wait(b.ID, key, b.Waiter, level, n, b.Rate, first, skip)
	}
	if wait := b.Admit(n); wait > 0 {
		return p.queue.Wait(b.ID, key, b.Waiter, level, n, b.Rate, wait, skip)
	}
	p.queue.Served(b.ID, key, b.Waiter, level, n)
	p.reserved.Drop(b.ID, key)
	p.spent.Spent(b.ID, b.Waiter.Namespace, n, now)
	return 0
}

// Spent counts n calls of budget that namespace was admitted outside Ask
// (a further page of a list, an alert read alone after its list: the
// budget admitted them as they came) as spent, so that every call a
// namespace makes counts against its share.
func (p *Pacer[K, R]) Spent(budget, namespace string, n int) {
	p.spent.Spent(budget, namespace, n, p.clock.Now())
}

// over is the namespaces over their share of the budget at now: by what
// their watches' intervals ask, or by what they spent (see demands.Over).
func (p *Pacer[K, R]) over(budget string, now time.Time) map[string]bool {
	over := p.demands.Over(budget, p.spent.Of(budget, now))
	p.spent.Mark(budget, over)
	return over
}

// Spending tells what namespace spent of the budget in the last
// SpendWindow, whatever the calls were for, and the most it may spend there
// within its share (see spendLimit). While it spends more (Over), its work,
// requested syncs included, leaves the other namespaces the room reserved
// for their syncs, and its waiters come after theirs.
func (p *Pacer[K, R]) Spending(budget, namespace string) Spending {
	return p.demands.SpendingOf(budget, namespace, p.spent.Of(budget, p.clock.Now())[namespace])
}

// spacingOf is the time between two calls at rate calls per second; 0 for
// no limit.
func spacingOf(rate float64) time.Duration {
	if rate <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / rate)
}

// Admitted drops the watch's claims and reservations: every budget it asked
// let it go.
func (p *Pacer[K, R]) Admitted(key K) {
	p.claims.Release(key)
	p.reserved.Release(key)
}

// AlertBatch returns the reads of one budget that the watch's sync makes:
// all of them when the budget admits size calls at once (0: no limit),
// else the next size of them in turn (see turns). A batch larger than the
// budget would never be admitted, and its standing claim would hold back
// every other watch's reads of the budget. It does not move the turn (see
// Took).
func (p *Pacer[K, R]) AlertBatch(key K, reads []R, size int) []R {
	if size <= 0 || len(reads) <= size {
		return reads
	}
	batch := make([]R, 0, size)
	for _, i := range p.turns.Next(key, len(reads), size) {
		batch = append(batch, reads[i])
	}
	return batch
}

// Took records that the watch's sync made the batch AlertBatch gave.
func (p *Pacer[K, R]) Took(key K, n, size int) { p.turns.Took(key, n, size) }

// SyncRecord is what the Pacer needs to know of a sync that ended.
type SyncRecord struct {
	// Began is when its calls began.
	Began time.Time
	// Every is the watch's interval as its budgets allowed it when the sync
	// began.
	Every time.Duration
	// Level is the level of the work the sync was for.
	Level Level
	// ReachedCloud: the sync got as far as calling the cloud.
	ReachedCloud bool
	Outcome      Outcome
}

// Synced remembers when the watch is next due after the sync s ended now,
// and returns how long a reconcile waits before it looks again (see Due). A
// sync that reached the cloud tells the phases where the watch's group
// syncs.
func (p *Pacer[K, R]) Synced(w Watch[K], s SyncRecord) time.Duration {
	failures := 0
	if s.Outcome.Failed {
		prev, _ := p.schedules.Get(w.Key)
		failures = prev.Failures + 1
	}
	now, group := p.clock.Now(), p.lists.groupOf(w)
	if s.ReachedCloud {
		p.phases.Synced(w.Key, group, w.Every, s.Began, s.Every, s.Level == Periodic)
	}
	reserved := p.reservedOn(w.Key, now)
	next, plan := NextSync(Sync{
		Began: s.Began, Ended: now, Every: s.Every, Failures: failures, Outcome: s.Outcome,
		Jitter: p.jitter(JitterOf(s.Every)), Stretch: stretchBeside(reserved, s.Every),
	}, p.phases.PhaseOf(w.Key, group, w.Every))
	p.schedules.Set(w.Key, Entry{Trigger: w.Trigger, NextSync: next, Failures: failures, Plan: plan})
	for _, c := range reserved {
		p.reserved.Reserve(c.budget, w.Key, c.namespace, c.calls, next)
	}
	wait := next.Sub(now)
	if plan != nil {
		wait = RecheckWithin(wait, plan.Jitter, s.Every)
	}
	return max(wait, MinRecheck)
}

// MinRecheck is the shortest wait Synced returns. A sync that ended after
// its next slot (its write took longer than its interval, behind a slow API
// server) is due at once; a wait of 0 would tell the controller not to
// requeue the watch at all, which would then never sync again.
const MinRecheck = time.Millisecond

// ReadsList tells that the watch reads its alerts from a list shared beyond
// its service, named by list (GroupOf its API, host and credential); 0:
// none (no alerts, a list per service, or one alert at a time). From then
// on the watch syncs with the list's phase group instead of its service's
// (see listGroups), so that every watch of the list syncs just after the
// one read of it that they share, and a change made before that read is in
// each of their statuses at their next sync. The controller learns the list
// when a sync learns its credentials, after Due was asked with the watch's
// service group: the Pacer remembers it for the next Due.
func (p *Pacer[K, R]) ReadsList(key K, list uint64) { p.lists.set(key, list) }

// reservedOn is the budgets on which the watch's next sync has its calls
// held (see reservations): those of which its namespace asks no more than
// its share while another asks more. On a budget no namespace overruns,
// nothing is held back and nothing need be reserved.
func (p *Pacer[K, R]) reservedOn(key K, now time.Time) []budgetCalls {
	var out []budgetCalls
	for _, c := range p.demands.CallsOf(key) {
		if over := p.over(c.budget, now); len(over) > 0 && !over[c.namespace] {
			out = append(out, c)
		}
	}
	return out
}

// stretchBeside is the most the phases may stretch a period of interval
// every of a watch whose sync is reserved on the budgets: MaxMove less the
// spacing of the slowest. A reserved sync may get its calls up to a call's
// spacing after its slot (the slack that keeps the budget busy, see
// reservations); stretched by MaxMove besides, and a busy manager's
// latency on top, the period of a namespace within its share went past a
// tenth of its interval (33.5 s of 30). 0 (MaxMove) when none is reserved.
func stretchBeside(reserved []budgetCalls, every time.Duration) time.Duration {
	var late time.Duration
	for _, c := range reserved {
		if c.rate > 0 {
			late = max(late, slack(c.rate))
		}
	}
	if late == 0 {
		return 0
	}
	return max(MaxMove(every)-late, time.Millisecond)
}

// Forget drops everything the books hold of a watch that went away (or is
// suspended: it makes no call, so it no longer stretches the others).
func (p *Pacer[K, R]) Forget(key K) {
	p.schedules.Forget(key)
	p.phases.Forget(key)
	p.demands.Forget(key)
	p.claims.Release(key)
	p.queue.Forget(key)
	p.turns.Forget(key)
	p.lists.set(key, 0)
	p.reserved.Release(key)
}

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

// GroupOf names a phase group by what its watches read: a hash of the
// parts (a service's API, organization and ID; or an alert list's API,
// host and credential digest), each ended by a zero byte so that no two
// lists of parts run together.
func GroupOf(parts ...string) uint64 {
	h := fnv.New64a()
	for _, part := range parts {
		_, _ = h.Write([]byte(part))
		_, _ = h.Write([]byte{0})
	}
	return h.Sum64()
}

// listGroups remembers, for each watch that reads an alert list shared
// beyond its service, the phase group of that list (see Pacer.ReadsList).
//
// Which group wins when a watch's service group and its list group differ:
// the list's. A list of an alert host is one read for every watch on the
// host and credential, whatever their services, while a service group's
// shared reads (pipes, endpoints) serve only the watches of one service;
// those that read the same list stay together in the list's group, so only
// watches of one service that read different lists (or none) part, and
// each part makes the service's reads once more per interval, which the
// demand book counts (its asks are per group) so that the budgets pace it.
// A group keyed by both would split the list's watches by service, and the
// list would be read by the first of them while the others synced later
// with a read made before a change. Phases are per interval (see phases),
// so the watches of one list at different intervals align per interval.
type listGroups[K comparable] struct {
	mu sync.Mutex
	of map[K]uint64
}

func newListGroups[K comparable]() *listGroups[K] { return &listGroups[K]{of: map[K]uint64{}} }

// set records the watch's list group; 0 forgets it.
func (g *listGroups[K]) set(key K, list uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if list == 0 {
		delete(g.of, key)
		return
	}
	g.of[key] = list
}

// groupOf is the phase group the watch syncs with: its list's when it
// reads one, else its own (its service's).
func (g *listGroups[K]) groupOf(w Watch[K]) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if list, ok := g.of[w.Key]; ok {
		return list
	}
	return w.Group
}

// The values the Pacer answers with about a watch's budgets (the books
// behind them are demand.go's).

// Allowance is what a watch's budgets allow it: its interval (stretched
// when its namespace asks more than its share of a budget) and, when it is
// stretched, the share of the budget that stretches it most.
type Allowance struct {
	Every time.Duration
	Share tenancy.Share
}

// Stretched tells whether the budgets stretch the watch's interval every;
// Share then says by how much (the controller's IntervalMet condition puts
// it in words).
func (a Allowance) Stretched(every time.Duration) bool {
	return a.Every > every
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
