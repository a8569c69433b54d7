package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/servicewatch/servicewatch/internal/pacing"
)

// A deleted watch's read is canceled at once, whether it is calling the
// cloud or still waiting for its slot: its goroutine and the Secret values it
// holds do not live on until the sync timeout (issue 17: 2,000 deleted
// watches kept 2,030 goroutines). Its end is not recorded nor woken.
func TestForgetCancelsTheReadUnderWay(t *testing.T) {
	f := newFetches(pacing.SlotLimits{All: 1, PerHost: 1, PerTenant: 1}, time.Hour, time.Now, func(pacing.Level, time.Duration) {})
	go func() { _ = f.Start(t.Context()) }()
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }
	inCall, ended := make(chan struct{}), make(chan error, 1)
	f.start(t.Context(), readRequest{scope: &syncScope{p: paced{Key: key("calling"), Trigger: "t"}, every: time.Minute, level: pacing.User},
		read: calling(testAPI, func(ctx context.Context) {
			close(inCall)
			<-ctx.Done() // a cloud that never answers
			ended <- ctx.Err()
		})})
	<-inCall // it holds the host's only slot
	began := make(chan struct{}, 1)
	f.start(t.Context(), readRequest{scope: &syncScope{p: paced{Key: key("waiting"), Trigger: "t"}, every: time.Minute, level: pacing.User},
		read: calling(testAPI, func(context.Context) { began <- struct{}{} })})
	waitUntil(t, "the second read to wait for the host's slot", func() bool {
		return f.slots.Waiting(pacing.User) == 1
	})

	f.forget(key("waiting"))
	f.forget(key("calling"))
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the read's context ended with %v, want %v", err, context.Canceled)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the deleted watch's read still runs 5s after it was forgotten (its timeout is 1h)")
	}
	waitUntil(t, "the waiting read to leave the slot's line", func() bool {
		return f.slots.Waiting(pacing.User) == 0
	})
	select {
	case <-began:
		t.Error("the forgotten waiting read began calling the cloud")
	case <-time.After(200 * time.Millisecond):
	}
	if f.busy(key("calling")) || f.busy(key("waiting")) {
		t.Error("a forgotten watch still reads as busy")
	}
	if _, ok := f.take(key("calling")); ok {
		t.Error("a forgotten read's end was recorded")
	}
	select {
	case ev := <-f.wake:
		t.Errorf("a forgotten read woke %s", ev.Object.GetName())
	default:
	}
}

// testAPI is the API the reads of these tests call.
const testAPI = "https://api.example.com"

// calling is a read that makes one call to baseURL, call, holding the
// host's slot as a cloud call does.
func calling(baseURL string, call func(context.Context)) func(context.Context, *syncSlots) []partResult {
	return func(ctx context.Context, slots *syncSlots) []partResult {
		release, err := slots.hold(ctx, baseURL)
		if err != nil {
			return nil
		}
		defer release()
		call(ctx)
		return nil
	}
}

// A sync holds a host's slot only while it calls that host: its calls to one
// host at once share one slot, and when they end the slot goes to another
// sync, though the first still waits on its call to another host (issue 17:
// watches whose alert API hung held the shared management host's slots for
// the whole sync).
func TestASyncHoldsAHostsSlotOnlyWhileCallingIt(t *testing.T) {
	f := newFetches(pacing.SlotLimits{All: 10, PerHost: 1, PerTenant: 10}, time.Hour, time.Now, func(pacing.Level, time.Duration) {})
	const shared, hanging = "https://shared.example.com", "https://alerts.example.com"
	s := &syncSlots{fetches: f, ask: pacing.SlotAsk{Tenant: "noisy", Level: pacing.Periodic}, hosts: map[string]*hostHold{}}
	pipes, err := s.hold(t.Context(), shared)
	if err != nil {
		t.Fatal(err)
	}
	endpoints, err := s.hold(t.Context(), shared+"/other/path") // the same host: the same slot
	if err != nil {
		t.Fatalf("a second call of the sync to the host it holds waited for another slot: %v", err)
	}
	alert, err := s.hold(t.Context(), hanging)
	if err != nil {
		t.Fatal(err)
	}
	other := &syncSlots{fetches: f, ask: pacing.SlotAsk{Tenant: "victim", Level: pacing.User}, hosts: map[string]*hostHold{}}
	short, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := other.hold(short, shared); err == nil {
		t.Fatal("another sync got the host's only slot while the first called it")
	}
	pipes()
	endpoints()
	victim, err := other.hold(t.Context(), shared)
	if err != nil {
		t.Fatalf("the host's slot did not come back when the sync's calls to it ended: %v", err)
	}
	victim()
	alert()
	if !s.wasGranted() {
		t.Error("the sync does not know it held a slot")
	}
}
