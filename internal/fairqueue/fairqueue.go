package fairqueue

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/servicewatch/servicewatch/internal/pacing"
)

// secretChangePriority is the workqueue priority of a watch whose Secret
// changed: between a user's own change (0, the default) and a periodic
// refresh (handler.LowPriority).
const secretChangePriority = handler.LowPriority / 2

// PriorityOf is the workqueue priority of work of level l: a user's work
// first, then a Secret's change, then periodic refreshes (see pacing.Level).
func PriorityOf(l pacing.Level) int {
	switch l {
	case pacing.User:
		return 0
	case pacing.Secret:
		return secretChangePriority
	default:
		return handler.LowPriority
	}
}

// WithPriority enqueues what h enqueues at the priority priorityOf gives for
// the event's object, unless h names one itself (as controller-runtime's
// handlers do for the initial list and resyncs, at low priority).
func WithPriority[T any](h handler.TypedEventHandler[T, reconcile.Request], priorityOf func(T) int) handler.TypedEventHandler[T, reconcile.Request] {
	return handler.TypedFuncs[T, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[T], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Create(ctx, e, atPriority(q, priorityOf(e.Object)))
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[T], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Update(ctx, e, atPriority(q, priorityOf(e.ObjectNew)))
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[T], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Delete(ctx, e, atPriority(q, priorityOf(e.Object)))
		},
		GenericFunc: func(ctx context.Context, e event.TypedGenericEvent[T], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			h.Generic(ctx, e, atPriority(q, priorityOf(e.Object)))
		},
	}
}

// EnqueueKey enqueues the request of the key a generic event carries: the
// end of a background read names its watch by key, having no object of it.
func EnqueueKey() handler.TypedEventHandler[types.NamespacedName, reconcile.Request] {
	return handler.TypedFuncs[types.NamespacedName, reconcile.Request]{
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[types.NamespacedName], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			q.Add(reconcile.Request{NamespacedName: e.Object})
		},
	}
}

// atPriority is q with priority as the default of what is added to it; q
// itself when it is not a priority queue.
func atPriority(q workqueue.TypedRateLimitingInterface[reconcile.Request], priority int) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
	if !ok {
		return q
	}
	return defaultPriorityQueue{PriorityQueue: pq, priority: &priority}
}

// defaultPriorityQueue adds at its priority what is added without one.
type defaultPriorityQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	priority *int
}

// Add adds item at the queue's priority.
func (q defaultPriorityQueue) Add(item reconcile.Request) {
	q.PriorityQueue.AddWithOpts(priorityqueue.AddOpts{Priority: q.priority}, item)
}

// AddAfter adds item at the queue's priority after a while.
func (q defaultPriorityQueue) AddAfter(item reconcile.Request, after time.Duration) {
	q.PriorityQueue.AddWithOpts(priorityqueue.AddOpts{Priority: q.priority, After: after}, item)
}

// AddRateLimited adds item at the queue's priority after its backoff.
func (q defaultPriorityQueue) AddRateLimited(item reconcile.Request) {
	q.PriorityQueue.AddWithOpts(priorityqueue.AddOpts{Priority: q.priority, RateLimited: true}, item)
}

// AddWithOpts adds items with o, at the queue's priority when o names none.
func (q defaultPriorityQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	if o.Priority == nil {
		o.Priority = q.priority
	}
	q.PriorityQueue.AddWithOpts(o, items...)
}

// levelBand is the room between two levels' priorities (see PriorityOf):
// a namespace's turn lowers an item's priority within its level's band,
// never into the level below.
const levelBand = secretChangePriority - handler.LowPriority

// fairQueue is the controller's priority queue, in which the namespaces
// whose work waits take turns within each level: an item added to be
// served now is lowered by its place among its namespace's items waiting
// (pacing.FairQueue), up to the level's band. Another namespace's new watch
// is then served before the rest of a namespace's burst of 1,500, not after
// it (issue 17). Items added for later (a requeue after a delay, a backoff)
// keep the priority they are given.
type fairQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	turns *pacing.FairQueue[types.NamespacedName]
}

// New returns the controller's queue (controller.Options.NewQueue):
// controller-runtime's priority queue, with namespaces taking turns.
func New(name string, rateLimiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return fairQueue{
		PriorityQueue: priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) { o.RateLimiter = rateLimiter }),
		turns:         pacing.NewFairQueue[types.NamespacedName](),
	}
}

// Add adds item to be served now.
func (q fairQueue) Add(item reconcile.Request) { q.AddWithOpts(priorityqueue.AddOpts{}, item) }

// AddAfter adds item to be served after a while.
func (q fairQueue) AddAfter(item reconcile.Request, after time.Duration) {
	q.AddWithOpts(priorityqueue.AddOpts{After: after}, item)
}

// AddRateLimited adds item after its backoff.
func (q fairQueue) AddRateLimited(item reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, item)
}

// AddWithOpts adds items with o; those to be served now take their
// namespace's turn.
func (q fairQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	if o.After > 0 || o.RateLimited {
		q.PriorityQueue.AddWithOpts(o, items...)
		return
	}
	for _, item := range items {
		place := q.turns.Queue(item.Namespace, item.NamespacedName)
		priority := ptr.Deref(o.Priority, 0) - min(place, levelBand-1)
		q.PriorityQueue.AddWithOpts(priorityqueue.AddOpts{Priority: &priority}, item)
	}
}

// Get takes the next item, which leaves its namespace's turn.
func (q fairQueue) Get() (reconcile.Request, bool) {
	item, shutdown := q.PriorityQueue.Get()
	q.turns.Taken(item.Namespace, item.NamespacedName)
	return item, shutdown
}

// GetWithPriority takes the next item with its priority, which leaves its
// namespace's turn.
func (q fairQueue) GetWithPriority() (reconcile.Request, int, bool) {
	item, priority, shutdown := q.PriorityQueue.GetWithPriority()
	q.turns.Taken(item.Namespace, item.NamespacedName)
	return item, priority, shutdown
}
