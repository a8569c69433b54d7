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
// namespaces whose work waits take turns: an item added to be served now is
// lowered by its place among its namespace's items waiting
// (pacing.FairQueue), up to the level's band, so another namespace's new
// watch is served before the rest of a namespace's burst of 1,500, not after
// it (issue 17). Across levels, no level starves the ones below it (issue
// 27): a namespace's Secret change puts at most SecretShare of its items at
// the Secret level (the rest wait at the periodic level, with their turn),
// and an item that has waited AgeAfter below the user's level is served at
// the user's level, with its namespace's turn; before, a namespace that
// rewrote a Secret or bumped requested-at without pause held every other
// namespace's periodic refreshes back for as long as it went on.
type fairQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	turns       *pacing.FairQueue[types.NamespacedName]
	rateLimiter workqueue.TypedRateLimiter[reconcile.Request]
	opts        Options

	// mu guards waiting: the items added and not yet taken, each with the
	// priority it waits at and when it is (or was) ready.
	mu      sync.Mutex
	waiting map[reconcile.Request]waitingItem
	stop    chan struct{}
	stopped sync.Once
}

// waitingItem is an item as the queue holds it: the highest priority it was
// added at and the earliest time it is ready, as priorityqueue keeps them.
type waitingItem struct {
	priority int
	readyAt  time.Time
}

// New returns the controller's queue (controller.Options.NewQueue) with the
// default Options.
func New(name string, rateLimiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return NewQueue(Options{})(name, rateLimiter)
}

// NewQueue returns the constructor of the controller's queue
// (controller.Options.NewQueue): controller-runtime's priority queue, with
// namespaces taking turns and items aging as o says.
func NewQueue(o Options) func(string, workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return func(name string, rateLimiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		q := newFairQueue(name, rateLimiter, o)
		if q.opts.AgeAfter > 0 {
			go q.ageEvery(max(q.opts.AgeAfter/10, 10*time.Millisecond))
		}
		return q
	}
}

// newFairQueue is the queue without the loop that ages its items (tests
// age them at the times they choose).
func newFairQueue(name string, rateLimiter workqueue.TypedRateLimiter[reconcile.Request], o Options) *fairQueue {
	if rateLimiter == nil {
		rateLimiter = workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]()
	}
	return &fairQueue{
		PriorityQueue: priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) { o.RateLimiter = rateLimiter }),
		turns:         pacing.NewFairQueue[types.NamespacedName](),
		rateLimiter:   rateLimiter,
		opts:          o.withDefaults(),
		waiting:       map[reconcile.Request]waitingItem{},
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

// AddWithOpts adds items with o. Those to be served now take their
// namespace's turn; items added for later (a requeue after a delay, a
// backoff) keep the priority they are given. The backoff is asked of the
// rate limiter here, as priorityqueue would, so that the queue knows when
// each item is ready and can age it.
func (q *fairQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	now := q.opts.Now()
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, item := range items {
		after := o.After
		if o.RateLimited {
			if backoff := q.rateLimiter.When(item); after <= 0 || backoff < after {
				after = backoff
			}
		}
		priority := ptr.Deref(o.Priority, 0)
		if after <= 0 {
			after, priority = 0, q.turnLocked(item, priority)
		}
		q.noteLocked(item, priority, now.Add(after))
		q.PriorityQueue.AddWithOpts(priorityqueue.AddOpts{After: after, Priority: &priority}, item)
	}
}

// turnLocked is the priority at which item, added at priority to be served
// now, waits: lowered by its place among its namespace's waiting items, and
// at the periodic level when it is of a Secret's change and its namespace
// has SecretShare items waiting already.
func (q *fairQueue) turnLocked(item reconcile.Request, priority int) int {
	place := q.turns.Queue(item.Namespace, item.NamespacedName)
	if priority == secretChangePriority && q.opts.SecretShare >= 0 && place >= q.opts.SecretShare {
		priority = PriorityOf(pacing.Periodic)
	}
	return priority - min(place, levelBand-1)
}

// noteLocked records item as priorityqueue keeps it: the highest priority
// and the earliest ready time of its adds.
func (q *fairQueue) noteLocked(item reconcile.Request, priority int, readyAt time.Time) {
	if w, ok := q.waiting[item]; ok {
		priority = max(priority, w.priority)
		if w.readyAt.Before(readyAt) {
			readyAt = w.readyAt
		}
	}
	q.waiting[item] = waitingItem{priority: priority, readyAt: readyAt}
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
		if w.priority <= secretChangePriority && !now.Before(w.readyAt.Add(q.opts.AgeAfter)) {
			aged = append(aged, item)
		}
	}
	slices.SortFunc(aged, func(a, b reconcile.Request) int { return q.waiting[a].readyAt.Compare(q.waiting[b].readyAt) })
	for _, item := range aged {
		priority := q.turnLocked(item, PriorityOf(pacing.User))
		q.waiting[item] = waitingItem{priority: priority, readyAt: q.waiting[item].readyAt}
		q.PriorityQueue.AddWithOpts(priorityqueue.AddOpts{Priority: &priority}, item)
	}
}

// ageEvery ages the items every period until the queue shuts down: an item
// is served at the user's level at most a period after it aged.
func (q *fairQueue) ageEvery(period time.Duration) {
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	for {
		select {
		case <-q.stop:
			return
		case <-ticker.C:
			q.age(q.opts.Now())
		}
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
	delete(q.waiting, item)
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
