package fairqueue

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/servicewatch/servicewatch/internal/pacing"
)

// BenchmarkChurnVictimDelay measures issue 27's finding on the queue alone,
// before and after side by side: workers reconcile for a fixed time per
// item while one namespace re-queues its watches without pause (a Secret
// they reference rewritten, or requested-at bumped on each of them), and
// another namespace's periodic refresh becomes ready in the middle of it.
// victim-delay-ms is how long the refresh waited for a worker. The churn
// stops after churnFor, so the strict queue's figure is the rest of the
// churn plus the drain (the finding's 23 s); times are scaled down (a
// reconcile of 1 ms, aging after 100 ms) to keep the run short.
func BenchmarkChurnVictimDelay(b *testing.B) {
	const (
		workers  = 4
		syncTime = time.Millisecond
		watches  = 400
		every    = 50 * time.Millisecond // a round of 400 takes 100 ms: the queue never empties
		churnFor = time.Second
		ageAfter = 100 * time.Millisecond
	)
	queues := []struct {
		name string
		new  func() priorityqueue.PriorityQueue[reconcile.Request]
	}{
		{"strict(before)", func() priorityqueue.PriorityQueue[reconcile.Request] { return newStrictQueue() }},
		{"fair(after)", func() priorityqueue.PriorityQueue[reconcile.Request] {
			q, _ := NewQueue(Options{AgeAfter: ageAfter})("bench", nil).(priorityqueue.PriorityQueue[reconcile.Request])
			return q
		}},
	}
	for _, churn := range []pacing.Level{pacing.Secret, pacing.User} {
		for _, queue := range queues {
			b.Run(fmt.Sprintf("churn=%s/queue=%s", churn, queue.name), func(b *testing.B) {
				var total time.Duration
				for range b.N {
					total += victimDelay(queue.new(), churn, workers, syncTime, watches, every, churnFor)
				}
				b.ReportMetric(float64(total)/float64(time.Millisecond)/float64(b.N), "victim-delay-ms")
			})
		}
	}
}

// BenchmarkAgeScan is the cost of one look for items to age (every
// AgeAfter/10, 0.5 s by default) among 10,000 watches' periodic refreshes
// waiting for their time, none of them due.
func BenchmarkAgeScan(b *testing.B) {
	q := newFairQueue("bench", nil, Options{})
	defer q.ShutDown()
	periodic := PriorityOf(pacing.Periodic)
	for i := range 10_000 {
		q.AddWithOpts(priorityqueue.AddOpts{After: time.Hour, Priority: &periodic}, request(fmt.Sprintf("ns-%02d", i%50), fmt.Sprintf("w-%05d", i)))
	}
	now := time.Now()
	b.ResetTimer()
	for range b.N {
		q.age(now)
	}
}

// victimDelay runs one churn on q and returns how long the victim's
// refresh, ready a quarter of the way into it, waited for a worker.
func victimDelay(q priorityqueue.PriorityQueue[reconcile.Request], churn pacing.Level, workers int, syncTime time.Duration,
	watches int, every, churnFor time.Duration) time.Duration {
	victim := request("victim", "refresh")
	served := make(chan time.Time, 1)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				item, _, shutdown := q.GetWithPriority()
				if shutdown {
					return
				}
				if item == victim {
					served <- time.Now()
				}
				time.Sleep(syncTime)
				q.Done(item)
			}
		})
	}
	busy := make([]reconcile.Request, watches)
	for i := range busy {
		busy[i] = request("busy", fmt.Sprintf("w-%03d", i))
	}
	priority := PriorityOf(churn)
	start := time.Now()
	var readyAt time.Time
	for time.Since(start) < churnFor {
		q.AddWithOpts(priorityqueue.AddOpts{Priority: &priority}, busy...)
		if readyAt.IsZero() && time.Since(start) >= churnFor/4 {
			readyAt = time.Now()
			q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(PriorityOf(pacing.Periodic))}, victim)
		}
		time.Sleep(every)
	}
	got := <-served
	q.ShutDown()
	wg.Wait()
	return got.Sub(readyAt)
}

func request(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

// strictQueue is the controller's queue before issue 27 (commit cc8b72b),
// kept for the benchmark: namespaces take turns within a level, and the
// levels are strict.
type strictQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	turns *places[types.NamespacedName]
}

func newStrictQueue() strictQueue {
	return strictQueue{
		PriorityQueue: priorityqueue.New("strict", func(o *priorityqueue.Opts[reconcile.Request]) {
			o.RateLimiter = workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]()
		}),
		turns: newPlaces[types.NamespacedName](),
	}
}

func (q strictQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
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

func (q strictQueue) GetWithPriority() (reconcile.Request, int, bool) {
	item, priority, shutdown := q.PriorityQueue.GetWithPriority()
	q.turns.Taken(item.Namespace, item.NamespacedName)
	return item, priority, shutdown
}
