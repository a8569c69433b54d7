package fairqueue

import (
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/servicewatch/servicewatch/internal/pacing"
)

// Events handled WithPriority land in the workqueue at the priority given,
// and a priority the handler names itself (the initial list's low priority)
// is kept.
func TestWithPriority(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	watch := func(name string) client.Object {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	}
	at := func(p int) handler.EventHandler {
		return WithPriority(&handler.EnqueueRequestForObject{}, func(client.Object) int { return p })
	}
	ctx := t.Context()
	at(PriorityOf(pacing.Secret)).Generic(ctx, event.GenericEvent{Object: watch("secret")}, q)
	at(PriorityOf(pacing.Periodic)).Generic(ctx, event.GenericEvent{Object: watch("periodic")}, q)
	at(PriorityOf(pacing.User)).Create(ctx, event.CreateEvent{Object: watch("initial"), IsInInitialList: true}, q)
	at(PriorityOf(pacing.User)).Create(ctx, event.CreateEvent{Object: watch("new")}, q)
	// A key's event, as the end of a background read sends.
	WithPriority(EnqueueKey(), func(types.NamespacedName) int { return PriorityOf(pacing.Secret) }).
		Generic(ctx, event.TypedGenericEvent[types.NamespacedName]{Object: types.NamespacedName{Namespace: "ns", Name: "woken"}}, q)

	for _, want := range []struct {
		name     string
		priority int
	}{{"new", 0}, {"secret", secretChangePriority}, {"woken", secretChangePriority}, {"periodic", handler.LowPriority}, {"initial", handler.LowPriority}} {
		item, priority, _ := q.GetWithPriority()
		q.Done(item)
		if item.Name != want.name || priority != want.priority {
			t.Fatalf("got %s at priority %d, want %s at %d", item.Name, priority, want.name, want.priority)
		}
	}
}

// In the controller's queue the namespaces take turns within a level:
// another namespace's new watch, added after a namespace's burst, is served
// after the burst's first item, not after all of them; levels still come
// first (issue 17).
func TestFairQueueLetsNamespacesTakeTurns(t *testing.T) {
	q, ok := NewQueue(Options{})("test", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]()).(*fairQueue)
	if !ok {
		t.Fatal("the controller's queue is not the fair queue")
	}
	defer q.ShutDown()
	req := func(ns, name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
	}
	for i := range 5 {
		q.Add(req("busy", fmt.Sprintf("burst-%d", i)))
	}
	q.Add(req("other", "new"))
	periodic := PriorityOf(pacing.Periodic)
	q.AddWithOpts(priorityqueue.AddOpts{Priority: &periodic}, req("third", "periodic"))
	var got []string
	for range 7 {
		item, _, _ := q.GetWithPriority()
		q.Done(item)
		got = append(got, item.Name)
	}
	want := []string{"burst-0", "new", "burst-1", "burst-2", "burst-3", "burst-4", "periodic"}
	if !slices.Equal(got, want) {
		t.Errorf("served %v, want %v", got, want)
	}
}
