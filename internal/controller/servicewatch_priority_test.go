package controller

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clocktesting "k8s.io/utils/clock/testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/pacing"
)

// Events handled withPriority land in the workqueue at the priority given,
// and a priority the handler names itself (the initial list's low priority)
// is kept.
func TestWithPriority(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	watch := func(name string) client.Object {
		return &swv1.ServiceWatch{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	}
	at := func(p int) handler.EventHandler {
		return withPriority(&handler.EnqueueRequestForObject{}, func(client.Object) int { return p })
	}
	ctx := t.Context()
	at(priorityOf(pacing.Secret)).Generic(ctx, ctrlevent.GenericEvent{Object: watch("secret")}, q)
	at(priorityOf(pacing.Periodic)).Generic(ctx, ctrlevent.GenericEvent{Object: watch("periodic")}, q)
	at(priorityOf(pacing.User)).Create(ctx, ctrlevent.CreateEvent{Object: watch("initial"), IsInInitialList: true}, q)
	at(priorityOf(pacing.User)).Create(ctx, ctrlevent.CreateEvent{Object: watch("new")}, q)

	for _, want := range []struct {
		name     string
		priority int
	}{{"new", 0}, {"secret", secretChangePriority}, {"periodic", handler.LowPriority}, {"initial", handler.LowPriority}} {
		item, priority, _ := q.GetWithPriority()
		q.Done(item)
		if item.Name != want.name || priority != want.priority {
			t.Fatalf("got %s at priority %d, want %s at %d", item.Name, priority, want.name, want.priority)
		}
	}
}

// servicewatch_sync_slot_wait_seconds tells how long each sync waited for its
// read slot, by the work it was for: the signal that the slots, not the
// cloud's budget, hold syncs back.
func TestSlotWaitIsExportedByWork(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	clock := clocktesting.NewFakeClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	f := newFetches(pacing.SlotLimits{All: 1, PerHost: 1, PerTenant: 1}, time.Minute, clock.Now, m.observeSlotWait)
	go func() { _ = f.Start(t.Context()) }()
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }
	unblock, holding := make(chan struct{}), make(chan struct{})
	f.start(t.Context(), readRequest{scope: &syncScope{p: paced{Key: key("first"), Trigger: "t"}, every: time.Minute, level: pacing.User},
		read: calling(testAPI, func(context.Context) { close(holding); <-unblock })})
	<-holding // the first read holds the only slot
	f.start(t.Context(), readRequest{scope: &syncScope{p: paced{Key: key("second"), Trigger: "t"}, every: time.Minute, level: pacing.Periodic},
		read: calling(testAPI, func(context.Context) {})})
	waitUntil(t, "the second read to wait for the host's slot", func() bool {
		return f.slots.Waiting(pacing.Periodic) == 1
	})
	clock.Step(3 * time.Second)
	close(unblock)
	for range 2 {
		<-f.wake
	}

	got := map[string][2]float64{} // work → count, sum
	for _, s := range GatheredSeries(t, reg, "servicewatch_sync_slot_wait_seconds") {
		h := s.GetHistogram()
		got[s.GetLabel()[0].GetValue()] = [2]float64{float64(h.GetSampleCount()), h.GetSampleSum()}
	}
	if want := map[string][2]float64{"user": {1, 0}, "secret": {0, 0}, "periodic": {1, 3}}; !maps.Equal(got, want) {
		t.Errorf("slot waits (count, seconds) by work: %v, want %v", got, want)
	}
}

// In the controller's queue the namespaces take turns within a level:
// another namespace's new watch, added after a namespace's burst, is served
// after the burst's first item, not after all of them; levels still come
// first (issue 17).
func TestFairQueueLetsNamespacesTakeTurns(t *testing.T) {
	q, ok := newFairQueue("test", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]()).(fairQueue)
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
	periodic := priorityOf(pacing.Periodic)
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
