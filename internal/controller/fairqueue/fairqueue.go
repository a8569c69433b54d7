package fairqueue

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
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
