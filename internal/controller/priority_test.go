package controller

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clocktesting "k8s.io/utils/clock/testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
)

// A read slot freed while reads of every level wait goes to a user's work
// first, then to a Secret's change, then to a periodic refresh; within a
// level, in arrival order.
func TestSlotsServeHigherLevelsFirst(t *testing.T) {
	s := newSlots(1)
	ctx := t.Context()
	if err := s.acquire(ctx, periodicWork); err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 4)
	wait := func(name string, level workLevel) {
		s.mu.Lock()
		before := len(s.waiting[level])
		s.mu.Unlock()
		go func() {
			if err := s.acquire(ctx, level); err == nil {
				order <- name
			}
		}()
		waitForWaiters(t, s, level, before+1, name)
	}
	wait("periodic", periodicWork)
	wait("secret", secretWork)
	wait("user-1", userWork)
	wait("user-2", userWork)
	for _, want := range []string{"user-1", "user-2", "secret", "periodic"} {
		s.release()
		if got := <-order; got != want {
			t.Fatalf("slot went to %s, want %s", got, want)
		}
	}
}

// A new read does not overtake waiters of its own level or above, but does
// overtake lower ones when a slot is free.
func TestSlotsFastPathRespectsWaiters(t *testing.T) {
	s := newSlots(1)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := s.acquire(t.Context(), userWork); err != nil {
		t.Fatal(err)
	}
	if err := s.acquire(ctx, periodicWork); err == nil {
		t.Fatal("a periodic read took a slot none was free of")
	}
	s.release()
	if err := s.acquire(t.Context(), secretWork); err != nil {
		t.Fatalf("a free slot was refused: %v", err)
	}
}

// waitForWaiters waits until want reads wait at level.
func waitForWaiters(t *testing.T, s *slots, level workLevel, want int, name string) {
	t.Helper()
	waitFor(t, name+" to wait", func() bool { return s.waiters(level) >= want })
}

// waiters counts the reads waiting at level.
func (s *slots) waiters(level workLevel) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiting[level])
}

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
	at(secretWork.priority()).Generic(ctx, ctrlevent.GenericEvent{Object: watch("secret")}, q)
	at(periodicWork.priority()).Generic(ctx, ctrlevent.GenericEvent{Object: watch("periodic")}, q)
	at(userWork.priority()).Create(ctx, ctrlevent.CreateEvent{Object: watch("initial"), IsInInitialList: true}, q)
	at(userWork.priority()).Create(ctx, ctrlevent.CreateEvent{Object: watch("new")}, q)

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
	f := newFetches(1, 1, m.observeSlotWait)
	hosts := []string{"api.example.com"}
	watch := func(name string) *swv1.ServiceWatch {
		return &swv1.ServiceWatch{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	}
	unblock := make(chan struct{})
	f.start(t.Context(), time.Minute, watch("first"), "t", time.Minute, hosts, userWork, false, clock.Now,
		func(context.Context) ([]partResult, bool) { <-unblock; return nil, true })
	waitFor(t, "the first read to hold the only slot", func() bool {
		f.slots.all.mu.Lock()
		defer f.slots.all.mu.Unlock()
		return f.slots.all.free == 0
	})
	f.start(t.Context(), time.Minute, watch("second"), "t", time.Minute, hosts, periodicWork, false, clock.Now,
		func(context.Context) ([]partResult, bool) { return nil, true })
	waitFor(t, "the second read to wait for the host's slot", func() bool {
		f.slots.mu.Lock()
		e := f.slots.hosts["api.example.com"]
		f.slots.mu.Unlock()
		return e != nil && e.slots.waiters(periodicWork) == 1
	})
	clock.Step(3 * time.Second)
	close(unblock)
	for range 2 {
		<-f.wake
	}

	got := map[string][2]float64{} // work → count, sum
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range families {
		if fam.GetName() != "servicewatch_sync_slot_wait_seconds" {
			continue
		}
		for _, s := range fam.GetMetric() {
			h := s.GetHistogram()
			got[s.GetLabel()[0].GetValue()] = [2]float64{float64(h.GetSampleCount()), h.GetSampleSum()}
		}
	}
	if want := map[string][2]float64{"user": {1, 0}, "secret": {0, 0}, "periodic": {1, 3}}; !maps.Equal(got, want) {
		t.Errorf("slot waits (count, seconds) by work: %v, want %v", got, want)
	}
}

// waitFor polls cond for up to a second.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 1000 {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}
