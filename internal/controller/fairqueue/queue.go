package fairqueue

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/servicewatch/servicewatch/internal/pacing"
)

// levelBand is the room between two levels' priorities (see PriorityOf):
// a namespace's turn lowers an item's priority within its level's band,
// never into the level below.
const levelBand = secretChangePriority - handler.LowPriority

// The defaults of Options.
const (
	// DefaultAgeAfter is how long an item may wait below the user's level
	// before it is served as the user's work is: long enough that the levels
	// still order a burst (a Secret's rotation is served before the periodic
	// refreshes due meanwhile), short beside the shortest interval (30 s),
	// so that a periodic refresh is late by seconds, not by however long
	// another namespace keeps making work.
	DefaultAgeAfter = 5 * time.Second
	// DefaultSecretShare is how many of a namespace's waiting items may
	// wait at the Secret level: as many as the namespace may read at once
	// (the controller's DefaultMaxSyncsPerNamespace), since more of its
	// syncs ahead of the others' would only wait for its read slots.
	DefaultSecretShare = 3
)

// Options tune the controller's queue; a field left zero takes its default.
type Options struct {
	// AgeAfter is how long an item may wait, ready, below the user's level
	// before it is served at the user's level with its namespace's turn;
	// negative: never (strict levels). Default DefaultAgeAfter.
	AgeAfter time.Duration
	// SecretShare is how many of a namespace's waiting items may wait at
	// the Secret level: an item of a Secret's change that finds that many
	// of its namespace's items waiting waits at the periodic level, with
	// its turn, until it ages. Negative: no limit. Default
	// DefaultSecretShare.
	SecretShare int
	// Now reads the clock; default time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.AgeAfter == 0 {
		o.AgeAfter = DefaultAgeAfter
	}
	if o.SecretShare == 0 {
		o.SecretShare = DefaultSecretShare
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// fairQueue is the controller's priority queue. Within each level the
// namespaces whose work waits take turns: an item is lowered by its place
// among its namespace's items waiting (places), up to the level's
// band, so another namespace's new watch is served before the rest of a
// namespace's burst of 1,500, not after it (issue 17). Across levels, no
// level starves the ones below it (issue 27): a namespace's Secret change
// puts at most SecretShare of its items at the Secret level (the rest wait
// at the periodic level, with their turn), and an item that has waited
// AgeAfter below the user's level is served at the user's level, with its
// namespace's turn; before, a namespace that rewrote a Secret or bumped
// requested-at without pause held every other namespace's periodic
// refreshes back for as long as it went on.
//
// The bound: with W workers whose reconciles take at most S, and n
// namespaces with work waiting, an item that is the only one of its
// namespace waiting gets a worker within AgeAfter + AgeAfter/10 + ⌈n/W⌉·S
// of being ready, however much work the other namespaces add. Once aged it
// waits at the top priority at the head of its namespace's turn: ahead of
// it are at most the head of each other namespace's turn, added before it
// (a namespace's later items take places behind its head, and another
// namespace's head added later comes after it).
//
// An item added for later (a requeue after a delay, a backoff) is parked in
// priorityqueue at the lowest priority until its time, then added again at
// its level with its turn: it takes its turn when it is ready, as every
// other item does, and does not keep the priority it was last served at (a
// namespace's requeues at the head of its turn would otherwise pile up at
// the top, ahead of the aged items, with no turn).
type fairQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	turns       *places[types.NamespacedName]
	rateLimiter workqueue.TypedRateLimiter[reconcile.Request]
	opts        Options

	// mu guards waiting, the items added and not yet taken, and parked,
	// the times at which parked items are due (stale entries are skipped).
	mu      sync.Mutex
	waiting map[reconcile.Request]waitingItem
	parked  parkedTimes
	// unparked is told when an item is parked that is due before the
	// others.
	unparked chan struct{}
	stop     chan struct{}
	stopped  sync.Once
}

// waitingItem is an item as the queue holds it.
type waitingItem struct {
	// level is the top of its level's band (PriorityOf), priority the
	// priority it waits at in priorityqueue.
	level, priority int
	// readyAt is when it is (or was) ready; parked: not yet added at its
	// level.
	readyAt time.Time
	parked  bool
}

// parkingPriority is the priority of an item that waits for its time: below
// every level's band.
const parkingPriority = handler.LowPriority - levelBand

// NewQueue returns the constructor of the controller's queue
// (controller.Options.NewQueue): controller-runtime's priority queue, with
// namespaces taking turns and items aging as o says.
func NewQueue(o Options) func(string, workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return func(name string, rateLimiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		q := newFairQueue(name, rateLimiter, o)
		go q.run()
		return q
	}
}

// newFairQueue is the queue without the loop that unparks and ages its
// items (tests do that at the times they choose).
func newFairQueue(name string, rateLimiter workqueue.TypedRateLimiter[reconcile.Request], o Options) *fairQueue {
	if rateLimiter == nil {
		rateLimiter = workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]()
	}
	return &fairQueue{
		PriorityQueue: priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) { o.RateLimiter = rateLimiter }),
		turns:         newPlaces[types.NamespacedName](),
		rateLimiter:   rateLimiter,
		opts:          o.withDefaults(),
		waiting:       map[reconcile.Request]waitingItem{},
		unparked:      make(chan struct{}, 1),
		stop:          make(chan struct{}),
	}
}

// Add adds item to be served now.
func (q *fairQueue) Add(item reconcile.Request) { q.AddWithOpts(priorityqueue.AddOpts{}, item) }

// AddAfter adds item to be served after a while.
func (q *fairQueue) AddAfter(item reconcile.Request, after time.Duration) {
	q.AddWithOpts(priorityqueue.AddOpts{After: after}, item)
}

// AddRateLimited adds item after its backoff.
func (q *fairQueue) AddRateLimited(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, item)
}

// AddWithOpts adds items with o: those to be served now at their level
// with their namespace's turn, the others parked until their time. The
// backoff is asked of the rate limiter here, as priorityqueue would, so
// that the queue knows when each item is ready.
func (q *fairQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	now := q.opts.Now()
	level := levelOf(ptr.Deref(o.Priority, 0))
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, item := range items {
		after := o.After
		if o.RateLimited {
			if backoff := q.rateLimiter.When(item); after <= 0 || backoff < after {
				after = backoff
			}
		}
		w, known := q.waiting[item]
		switch {
		case after <= 0 && known:
			q.enqueueLocked(item, max(level, w.level), now)
		case after <= 0:
			q.enqueueLocked(item, level, now)
		case known && !w.parked:
			// Ready already: priorityqueue keeps it ready, at the higher
			// of the two priorities.
			if level > w.level {
				q.enqueueLocked(item, level, w.readyAt)
			}
		default:
			q.parkLocked(item, level, now.Add(after), now)
		}
	}
}

// levelOf is the top of the band of the level priority is in: an item
// served at a priority its turn lowered comes back at its level.
func levelOf(priority int) int {
	for _, l := range []pacing.Level{pacing.User, pacing.Secret} {
		if priority > PriorityOf(l)-levelBand {
			return PriorityOf(l)
		}
	}
	return PriorityOf(pacing.Periodic)
}

// enqueueLocked adds item to be served now at level with its namespace's
// turn; readyAt is when it became ready.
func (q *fairQueue) enqueueLocked(item reconcile.Request, level int, readyAt time.Time) {
	priority := q.turnLocked(item, level)
	if w, ok := q.waiting[item]; ok && !w.parked {
		// priorityqueue keeps the earlier time and never lowers a priority.
		priority, level = max(priority, w.priority), max(level, w.level)
		if w.readyAt.Before(readyAt) {
			readyAt = w.readyAt
		}
	}
	q.parked.remove(item)
	q.waiting[item] = waitingItem{level: level, priority: priority, readyAt: readyAt}
	q.PriorityQueue.AddWithOpts(priorityqueue.AddOpts{Priority: &priority}, item)
}

// parkLocked parks item until readyAt, to be added then at level; an item
// parked already is due at the earlier time, at the higher level.
func (q *fairQueue) parkLocked(item reconcile.Request, level int, readyAt, now time.Time) {
	if w, ok := q.waiting[item]; ok {
		level = max(level, w.level)
		if w.readyAt.Before(readyAt) {
			readyAt = w.readyAt
		}
	}
	q.waiting[item] = waitingItem{level: level, priority: parkingPriority, readyAt: readyAt, parked: true}
	if q.parked.set(item, readyAt) {
		select {
		case q.unparked <- struct{}{}:
		default:
		}
	}
	q.PriorityQueue.AddWithOpts(priorityqueue.AddOpts{After: readyAt.Sub(now), Priority: ptr.To(parkingPriority)}, item)
}

// turnLocked is the priority at which item, added at level to be served
// now, waits: lowered by its place among its namespace's waiting items, and
// at the periodic level when it is of a Secret's change and its namespace
// has SecretShare items waiting already.
func (q *fairQueue) turnLocked(item reconcile.Request, level int) int {
	place := q.turns.Queue(item.Namespace, item.NamespacedName)
	if level == secretChangePriority && q.opts.SecretShare >= 0 && place >= q.opts.SecretShare {
		level = PriorityOf(pacing.Periodic)
	}
	return level - min(place, levelBand-1)
}

// unpark adds at their level, with their turn, the parked items due by
// now, and says when the next one is due (false: none is parked).
func (q *fairQueue) unpark(now time.Time) (next time.Time, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		item, at, parked := q.parked.first()
		if !parked {
			return time.Time{}, false
		}
		if at.After(now) {
			return at, true
		}
		q.parked.remove(item)
		w := q.waiting[item]
		delete(q.waiting, item) // its turn starts now
		q.enqueueLocked(item, w.level, w.readyAt)
	}
}

// age serves at the user's level, with their namespace's turn, the items
// that have been ready since AgeAfter before now below it, the longest
// ready first. An item handed out at the instant it ages is added again:
// its reconcile, once more, finds nothing due and requeues it.
func (q *fairQueue) age(now time.Time) {
	if q.opts.AgeAfter < 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	var aged []reconcile.Request
	for item, w := range q.waiting {
		if !w.parked && w.priority <= secretChangePriority && !now.Before(w.readyAt.Add(q.opts.AgeAfter)) {
			aged = append(aged, item)
		}
	}
	slices.SortFunc(aged, func(a, b reconcile.Request) int { return q.waiting[a].readyAt.Compare(q.waiting[b].readyAt) })
	for _, item := range aged {
		q.enqueueLocked(item, PriorityOf(pacing.User), q.waiting[item].readyAt)
	}
}

// run unparks the items at their time and ages them every AgeAfter/10
// until the queue shuts down: an item is served at the user's level at
// most AgeAfter/10 after it aged.
func (q *fairQueue) run() {
	var ageTicks <-chan time.Time
	if q.opts.AgeAfter > 0 {
		ticker := time.NewTicker(max(q.opts.AgeAfter/10, 10*time.Millisecond))
		defer ticker.Stop()
		ageTicks = ticker.C
	}
	due := time.NewTimer(time.Hour)
	defer due.Stop()
	for {
		select {
		case <-q.stop:
			return
		case <-ageTicks:
			q.age(q.opts.Now())
		case <-due.C:
		case <-q.unparked:
		}
		wait := time.Hour
		if next, ok := q.unpark(q.opts.Now()); ok {
			wait = max(time.Until(next), time.Millisecond)
		}
		due.Reset(wait)
	}
}

// Get takes the next item, which leaves its namespace's turn.
func (q *fairQueue) Get() (reconcile.Request, bool) {
	item, _, shutdown := q.GetWithPriority()
	return item, shutdown
}

// GetWithPriority takes the next item with its priority, which leaves its
// namespace's turn.
func (q *fairQueue) GetWithPriority() (reconcile.Request, int, bool) {
	item, priority, shutdown := q.PriorityQueue.GetWithPriority()
	q.mu.Lock()
	if w, ok := q.waiting[item]; ok && w.parked {
		// Handed out at its time, before it was unparked (a worker was
		// idle): it was served at its level.
		priority = w.level
	}
	delete(q.waiting, item)
	q.parked.remove(item)
	q.mu.Unlock()
	q.turns.Taken(item.Namespace, item.NamespacedName)
	return item, priority, shutdown
}

// ShutDown stops the queue and its aging; once (priorityqueue's own panics
// when shut down twice).
func (q *fairQueue) ShutDown() {
	q.stopped.Do(func() {
		close(q.stop)
		q.PriorityQueue.ShutDown()
	})
}

// ShutDownWithDrain stops the queue and its aging (priorityqueue does not
// drain).
func (q *fairQueue) ShutDownWithDrain() { q.ShutDown() }
