package reads

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/servicewatch/servicewatch/internal/pacing"
)

// testAPI is the API the reads of these tests call.
const testAPI = "https://api.example.com"

// result is what the reads of these tests end with.
type result struct {
	value string
	// reached tells that Read returned it.
	reached bool
}

func newRunner(limits SlotLimits, timeout time.Duration, now func() time.Time) *Runner[string, result] {
	return NewRunner[string, result](limits, timeout, now, func(pacing.Level, time.Duration) {})
}

// calling is a read that makes one call to baseURL, call, holding the
// host's slot as a cloud call does.
func calling(baseURL string, call func(context.Context)) func(context.Context, *Slots) result {
	return func(ctx context.Context, slots *Slots) result {
		release, err := slots.Hold(ctx, baseURL)
		if err != nil {
			return result{value: "no slot", reached: true}
		}
		defer release()
		call(ctx)
		return result{value: "called", reached: true}
	}
}

// waitForWaiting waits until n reads of level l wait for a slot, as the
// test's goroutines make them.
func waitForWaiting(t *testing.T, f *Runner[string, result], l pacing.Level, n int) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return f.Waiting(l) == n, nil
	})
	if err != nil {
		t.Fatalf("%d reads of level %v waiting for a slot: not within 5s (%v)", n, l, err)
	}
}

// A forgotten key's read is canceled at once, whether it is calling or
// still waiting for its slot: its goroutine and the values it holds do not
// live on until the timeout (issue 17: 2,000 deleted watches kept 2,030
// goroutines). Its end is not recorded nor woken.
func TestForgetCancelsTheReadUnderWay(t *testing.T) {
	f := newRunner(SlotLimits{All: 1, PerHost: 1, PerTenant: 1}, time.Hour, time.Now)
	go func() { _ = f.Start(t.Context()) }()
	inCall, ended := make(chan struct{}), make(chan error, 1)
	f.Run(t.Context(), Request[string, result]{Key: "calling", Tenant: "ns", Level: pacing.User,
		Read: calling(testAPI, func(ctx context.Context) {
			close(inCall)
			<-ctx.Done() // a source that never answers
			ended <- ctx.Err()
		})})
	<-inCall // it holds the host's only slot
	began := make(chan struct{}, 1)
	f.Run(t.Context(), Request[string, result]{Key: "waiting", Tenant: "ns", Level: pacing.User,
		Read: calling(testAPI, func(context.Context) { began <- struct{}{} })})
	waitForWaiting(t, f, pacing.User, 1) // the second read waits for the host's slot

	f.Forget("waiting")
	f.Forget("calling")
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the read's context ended with %v, want %v", err, context.Canceled)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the forgotten key's read still runs 5s after it was forgotten (its timeout is 1h)")
	}
	waitForWaiting(t, f, pacing.User, 0) // the waiting read left the slot's line
	select {
	case <-began:
		t.Error("the forgotten waiting read began calling")
	case <-time.After(200 * time.Millisecond):
	}
	if f.Busy("calling") || f.Busy("waiting") {
		t.Error("a forgotten key still reads as busy")
	}
	if _, ok := f.Take("calling"); ok {
		t.Error("a forgotten read's end was recorded")
	}
	select {
	case ev := <-f.Wake():
		t.Errorf("a forgotten read woke %s", ev.Object)
	default:
	}
}

// A read's end is recorded with its times and level and wakes its key; a
// read that panics, or whose context ends before it holds any slot, ends
// with the request's Interrupted.
func TestAReadEndsWithItsResultOrInterrupted(t *testing.T) {
	clock := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	f := newRunner(SlotLimits{All: 1, PerHost: 1, PerTenant: 1}, 50*time.Millisecond, func() time.Time { return clock })
	go func() { _ = f.Start(t.Context()) }()
	interrupted := result{value: "interrupted"}
	for _, req := range []Request[string, result]{
		{Key: "ok", Read: calling(testAPI, func(context.Context) {})},
		{Key: "panics", Read: func(context.Context, *Slots) result { panic("a bug in a read") }},
	} {
		req.Tenant, req.Level, req.Interrupted = "ns", pacing.Periodic, interrupted
		f.Run(t.Context(), req)
		if ev := <-f.Wake(); ev.Object != req.Key {
			t.Fatalf("woke %s, want %s", ev.Object, req.Key)
		}
	}
	for key, want := range map[string]string{"ok": "called", "panics": "interrupted"} {
		if l := f.Level(key); l != pacing.Periodic {
			t.Errorf("%s: level %v, want the request's", key, l)
		}
		got, ok := f.Take(key)
		if !ok || got.Result.value != want || !got.StartedAt.Equal(clock) || !got.EndedAt.Equal(clock) {
			t.Errorf("%s ended with %+v, %v; want %q at the clock's time", key, got, ok, want)
		}
	}
	if l := f.Level("none"); l != pacing.User {
		t.Errorf("a key without an ended read: level %v, want User", l)
	}
}

// A read whose context ends before it holds any slot ends interrupted.
func TestAReadWithoutASlotEndsInterrupted(t *testing.T) {
	f := newRunner(SlotLimits{All: 1, PerHost: 1, PerTenant: 1}, 50*time.Millisecond, time.Now)
	go func() { _ = f.Start(t.Context()) }()
	held, released := make(chan struct{}), make(chan struct{})
	f.Run(t.Context(), Request[string, result]{Key: "holder", Tenant: "ns", Level: pacing.User,
		Read: calling(testAPI, func(context.Context) { close(held); <-released })}) // a call that outlives its timeout
	<-held
	f.Run(t.Context(), Request[string, result]{Key: "starved", Tenant: "other", Level: pacing.User, Interrupted: result{value: "interrupted"},
		Read: calling(testAPI, func(context.Context) {})})
	if ev := <-f.Wake(); ev.Object != "starved" {
		t.Fatalf("woke %s first, want the read that waited for the slot until its timeout", ev.Object)
	}
	close(released)
	<-f.Wake()
	if got, _ := f.Take("starved"); got.Result.value != "interrupted" {
		t.Errorf("the read that never held a slot ended with %+v, want the request's Interrupted", got.Result)
	}
}

// A read holds a host's slot only while it calls that host: its calls to
// one host at once share one slot, and when they end the slot goes to
// another read, though the first still waits on its call to another host
// (issue 17: watches whose alert API hung held the shared management host's
// slots for the whole sync).
func TestAReadHoldsAHostsSlotOnlyWhileCallingIt(t *testing.T) {
	f := newRunner(SlotLimits{All: 10, PerHost: 1, PerTenant: 10}, time.Hour, time.Now)
	const shared, hanging = "https://shared.example.com", "https://alerts.example.com"
	s := f.pool.forRead(SlotAsk{Tenant: "noisy", Level: pacing.Periodic})
	pipes, err := s.Hold(t.Context(), shared)
	if err != nil {
		t.Fatal(err)
	}
	endpoints, err := s.Hold(t.Context(), shared+"/other/path") // the same host: the same slot
	if err != nil {
		t.Fatalf("a second call of the read to the host it holds waited for another slot: %v", err)
	}
	alert, err := s.Hold(t.Context(), hanging)
	if err != nil {
		t.Fatal(err)
	}
	other := f.pool.forRead(SlotAsk{Tenant: "victim", Level: pacing.User})
	short, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := other.Hold(short, shared); err == nil {
		t.Fatal("another read got the host's only slot while the first called it")
	}
	pipes()
	endpoints()
	victim, err := other.Hold(t.Context(), shared)
	if err != nil {
		t.Fatalf("the host's slot did not come back when the read's calls to it ended: %v", err)
	}
	victim()
	alert()
	if !s.wasGranted() {
		t.Error("the read does not know it held a slot")
	}
}

// A host's slots are counted by the host, however its URL spells it: a read
// of https://API.example.com:443/v1 waits behind one of https://api.example.com,
// as their budgets and the egress guard see one host (egress.HostKey).
func TestSlotsCountAHostHoweverItIsSpelled(t *testing.T) {
	f := newRunner(SlotLimits{All: 2, PerHost: 1, PerTenant: 2}, time.Hour, time.Now)
	go func() { _ = f.Start(t.Context()) }()
	inCall, unblock := make(chan struct{}), make(chan struct{})
	f.Run(t.Context(), Request[string, result]{Key: "first", Tenant: "a", Level: pacing.User,
		Read: calling(testAPI, func(context.Context) { close(inCall); <-unblock })})
	<-inCall
	f.Run(t.Context(), Request[string, result]{Key: "second", Tenant: "b", Level: pacing.User,
		Read: calling("https://API.example.com:443/v1", func(context.Context) {})})
	waitForWaiting(t, f, pacing.User, 1)
	close(unblock)
	waitForWaiting(t, f, pacing.User, 0)
}
