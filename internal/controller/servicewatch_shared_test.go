package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/pacing"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// newFakeClock is a clock the test moves.
func newFakeClock() *clocktesting.FakeClock {
	return clocktesting.NewFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
}

// countingFetch counts its calls and answers value, err.
func countingFetch(calls *atomic.Int32, value string, err error) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		calls.Add(1)
		return value, err
	}
}

var testReadKey = readKey{kind: pipesReadKind, url: "https://api.example.com", credential: cloudapi.DigestOf(cloudapi.NewBasicCredentials("k", "s")),
	organizationID: "org", serviceID: "svc", keepBytes: 1000}

// blockedRead starts a read of key that leads a call and blocks in it until
// the returned release is called; its answer arrives on the channel.
func blockedRead(t *testing.T, s *sharedReads, key readKey, fetch func(context.Context) (string, error)) (release func(), answer <-chan readAnswer) {
	t.Helper()
	gate := make(chan struct{})
	out := make(chan readAnswer, 1)
	go func() {
		v, err := shareRead(context.Background(), s, key, false, func(ctx context.Context) (string, error) {
			<-gate
			return fetch(ctx)
		})
		out <- readAnswer{v, err}
	}()
	waitUntil(t, "the leader's call is under way", func() bool { return s.joinedUnderWay(key) == 0 })
	return func() { close(gate) }, out
}

type readAnswer struct {
	value string
	err   error
}

// followers start n reads of key that must join the call under way, and
// wait until they have.
func followers(t *testing.T, s *sharedReads, key readKey, n int, fresh bool, calls *atomic.Int32) <-chan readAnswer {
	t.Helper()
	out := make(chan readAnswer, n)
	for range n {
		go func() {
			v, err := shareRead(context.Background(), s, key, fresh, countingFetch(calls, "follower's own call", nil))
			out <- readAnswer{v, err}
		}()
	}
	waitUntil(t, fmt.Sprintf("%d reads joined the call", n), func() bool { return s.joinedUnderWay(key) == n })
	return out
}

// waitUntil polls cond, which goroutines of the test make true.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestSharedReadJoinsTheCallUnderWay(t *testing.T) {
	for _, fresh := range []bool{false, true} {
		t.Run(fmt.Sprintf("fresh=%v", fresh), func(t *testing.T) {
			clock := newFakeClock()
			s := newSharedReads(sharedFreshness, clock.Now)
			var calls atomic.Int32
			release, leader := blockedRead(t, s, testReadKey, countingFetch(&calls, "pipes", nil))
			joined := followers(t, s, testReadKey, 9, fresh, &calls)
			release()
			for i, a := range append([]readAnswer{<-leader}, collect(joined, 9)...) {
				if a.value != "pipes" || a.err != nil {
					t.Errorf("read %d got %q, %v; want the leader's answer", i, a.value, a.err)
				}
			}
			if n := calls.Load(); n != 1 {
				t.Errorf("%d calls for 10 reads, want 1", n)
			}
		})
	}
}

func collect(ch <-chan readAnswer, n int) []readAnswer {
	out := make([]readAnswer, n)
	for i := range out {
		out[i] = <-ch
	}
	return out
}

// A finished read is reused within the window, unless the read must be
// fresh; failures that are the cloud's answer are reused like results, those
// of the leader's own making are not.
func TestSharedReadReuseWindow(t *testing.T) {
	cloudErr := &cloudapi.Error{Reason: cloudapi.ReasonServerError}
	tests := []struct {
		name      string
		err       error
		after     time.Duration
		fresh     bool
		wantCalls int32
	}{
		{"a result, just after", nil, 0, false, 1},
		{"a result, at the end of the window", nil, sharedFreshness - time.Millisecond, false, 1},
		{"a result, once the window is over", nil, sharedFreshness, false, 2},
		{"a result, for a read that must be fresh", nil, 0, true, 2},
		{"the cloud's failure, within the window", cloudErr, time.Second, false, 1},
		{"the cloud's failure, for a read that must be fresh", cloudErr, time.Second, true, 2},
		{"the leader's ctx ended", fmt.Errorf("calling: %w", context.Canceled), 0, false, 2},
		{"a refused admission", &budgetRefusalError{api: "management", wait: time.Second}, 0, false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			s := newSharedReads(sharedFreshness, clock.Now)
			var calls atomic.Int32
			ctx := context.Background()
			if errors.Is(tt.err, context.Canceled) {
				canceled, cancel := context.WithCancel(ctx)
				cancel()
				_, _ = shareRead(canceled, s, testReadKey, false, countingFetch(&calls, "first", tt.err))
			} else {
				_, _ = shareRead(ctx, s, testReadKey, false, countingFetch(&calls, "first", tt.err))
			}
			clock.Step(tt.after)
			got, err := shareRead(ctx, s, testReadKey, tt.fresh, countingFetch(&calls, "second", nil))
			if n := calls.Load(); n != tt.wantCalls {
				t.Fatalf("%d calls, want %d", n, tt.wantCalls)
			}
			switch {
			case tt.wantCalls == 2 && (got != "second" || err != nil):
				t.Errorf("got %q, %v; want the second call's answer", got, err)
			case tt.wantCalls == 1 && tt.err == nil && got != "first":
				t.Errorf("got %q; want the first call's answer", got)
			case tt.wantCalls == 1 && tt.err != nil && !errors.Is(err, tt.err):
				t.Errorf("got error %v; want the first call's %v", err, tt.err)
			}
		})
	}
}

// A panic in the shared call fails every read that waited for it, and is
// not reused.
func TestSharedReadPanicFailsEveryWaiter(t *testing.T) {
	clock := newFakeClock()
	s := newSharedReads(sharedFreshness, clock.Now)
	var calls atomic.Int32
	release, leader := blockedRead(t, s, testReadKey, func(context.Context) (string, error) { panic("boom in a shared read") })
	joined := followers(t, s, testReadKey, 4, false, &calls)
	release()
	for i, a := range append([]readAnswer{<-leader}, collect(joined, 4)...) {
		if _, ok := errors.AsType[*readPanicError](a.err); !ok || !strings.Contains(a.err.Error(), "boom in a shared read") {
			t.Errorf("read %d got %q, %v; want the panic as an error", i, a.value, a.err)
		}
		if f := cloudFailure(a.err); f.reason != swv1.ReasonInvalidResponse {
			t.Errorf("read %d's failure reads %s, want InvalidResponse", i, f.reason)
		}
	}
	if got, err := shareRead(context.Background(), s, testReadKey, false, countingFetch(&calls, "again", nil)); got != "again" || err != nil {
		t.Errorf("the read after a panic got %q, %v; want a call of its own", got, err)
	}
}

// A read that waits for another's call stops waiting when its own ctx ends.
func TestSharedReadWaiterHonoursItsContext(t *testing.T) {
	s := newSharedReads(sharedFreshness, newFakeClock().Now)
	var calls atomic.Int32
	release, leader := blockedRead(t, s, testReadKey, countingFetch(&calls, "late", nil))
	defer func() { release(); <-leader }()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := shareRead(ctx, s, testReadKey, false, countingFetch(&calls, "own", nil)); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want the waiter's own context error", err)
	}
}

// Reads share only when every input of the call is equal.
func TestSharedReadKeysAreExact(t *testing.T) {
	base := testReadKey
	variants := map[string]func(k *readKey){
		"another credential":   func(k *readKey) { k.credential = cloudapi.DigestOf(cloudapi.NewBasicCredentials("k", "other")) },
		"another URL":          func(k *readKey) { k.url = "https://api.example.com/" },
		"another organization": func(k *readKey) { k.organizationID = "org2" },
		"another service":      func(k *readKey) { k.serviceID = "svc2" },
		"another size bound":   func(k *readKey) { k.keepBytes = 2000 },
		"another kind":         func(k *readKey) { k.kind = endpointsReadKind },
		"an alert ID":          func(k *readKey) { k.alertID = "a1" },
	}
	for name, vary := range variants {
		t.Run(name, func(t *testing.T) {
			s := newSharedReads(sharedFreshness, newFakeClock().Now)
			var calls atomic.Int32
			_, _ = shareRead(context.Background(), s, base, false, countingFetch(&calls, "base", nil))
			other := base
			vary(&other)
			if s.covers(other) {
				t.Error("admission would take the read as covered")
			}
			if got, _ := shareRead(context.Background(), s, other, false, countingFetch(&calls, "other", nil)); got != "other" || calls.Load() != 2 {
				t.Errorf("got %q after %d calls: the read was shared", got, calls.Load())
			}
		})
	}
}

// Finished reads are forgotten once they can no longer be reused, so the
// map holds only the last few seconds' reads.
func TestSharedReadsEvictExpiredCalls(t *testing.T) {
	clock := newFakeClock()
	s := newSharedReads(sharedFreshness, clock.Now)
	var calls atomic.Int32
	for i := range 100 {
		key := testReadKey
		key.serviceID = fmt.Sprint(i)
		_, _ = shareRead(context.Background(), s, key, false, countingFetch(&calls, "v", nil))
	}
	first := testReadKey
	first.serviceID = "0"
	if !s.covers(first) {
		t.Fatal("a read just made is not covered")
	}
	if n := s.size(); n != 100 {
		t.Fatalf("%d calls remembered, want the 100 just made", n)
	}
	clock.Step(sharedFreshness)
	_, _ = shareRead(context.Background(), s, testReadKey, false, countingFetch(&calls, "v", nil))
	if n := s.size(); n != 1 {
		t.Errorf("%d calls remembered after the window, want only the new one", n)
	}
}

// Admission skips a read that a shared read answers, and a read that
// skipped it asks the budget at call time when it finds nothing to share.
func TestUnreservedReadsAskTheBudgetAtCallTime(t *testing.T) {
	w := testWatch()
	in := &syncScope{watch: w, management: newManagementAccess("https://api.example.com", cloudapi.NewBasicCredentials("k", "s")),
		shared: newSharedReads(sharedFreshness, newFakeClock().Now)}
	in.unreserved = map[readKey]bool{in.listRead(pipesReadKind): true}
	cloud := &budgetCloud{refuse: true}
	in.budgets = cloud
	res := readPipes(context.Background(), cloud, in)
	if res.deferred == nil || res.deferred.reason != swv1.ReasonRateLimited || res.apply != nil {
		t.Errorf("pipes: %+v, want deferred for the budget", res)
	}
	if cloud.admits != 1 || cloud.lists != 0 {
		t.Errorf("%d admissions and %d calls, want 1 refused admission and no call", cloud.admits, cloud.lists)
	}
	// The refusal is not reused: with room, the next read calls.
	cloud.refuse = false
	if res := readPipes(context.Background(), cloud, in); res.failure != nil || res.deferred != nil || cloud.lists != 1 {
		t.Errorf("pipes: %+v after %d calls, want one call that synced", res, cloud.lists)
	}
	// A reserved read never asks again.
	if res := readEndpoints(context.Background(), cloud, in); res.failure != nil || cloud.admits != 2 {
		t.Errorf("endpoints: %+v, %d admissions; want no admission at call time", res, cloud.admits)
	}
}

// budgetCloud counts admissions and calls.
type budgetCloud struct {
	stubCloud
	refuse bool
	admits int
	lists  int
}

func (c *budgetCloud) Admit(string, string, ratebudget.CredentialID, int) time.Duration {
	c.admits++
	if c.refuse {
		return 5 * time.Second
	}
	return 0
}

func (c *budgetCloud) ListPipes(ctx context.Context, url string, creds cloudapi.BasicCredentials, org, svc string, opts cloudapi.ListOptions[swv1.Pipe]) (cloudapi.List[swv1.Pipe], error) {
	c.lists++
	return c.stubCloud.ListPipes(ctx, url, creds, org, svc, opts)
}

// Watches that share a read get their own copy of it: what one watch's
// status does to its lists never reaches another's.
func TestSharedResultsAreCopiedIntoEachStatus(t *testing.T) {
	pipes := []swv1.Pipe{pipe("p0", "Running"), pipe("p1", "Stopped")}
	in := &syncScope{management: managementAccess{apiAccess: apiAccess{url: "https://api.example.com"}}, shared: newSharedReads(sharedFreshness, newFakeClock().Now)}
	a, b := testWatch(), testWatch()
	in.watch = a
	resA := readPipes(context.Background(), stubCloud{pipes: pipes, keep: 2}, in)
	in.watch = b
	resB := readPipes(context.Background(), stubCloud{panics: true}, in) // shared: never called
	applyResults(a, syncParts(), []partResult{resA, endpointsOK(0), alertsFetched(nil)}, DefaultStatusSizeLimit)
	applyResults(b, syncParts(), []partResult{resB, endpointsOK(0), alertsFetched(nil)}, DefaultStatusSizeLimit)

	*a.Status.Pipes[0].State = "Mutated"
	a.Status.Pipes[1] = swv1.Pipe{}
	a.Status.Summary.PipesByState["Running"] = 99
	if got := *b.Status.Pipes[0].State; got != "Running" || b.Status.Pipes[1].ID == nil || b.Status.Summary.PipesByState["Running"] != 1 {
		t.Errorf("changing one watch's status changed the other's: %+v", b.Status)
	}
}

// Work the user asked for with the annotation or a Secret reads anew; a new
// watch, a new spec and a periodic refresh may reuse a read just made.
func TestFresh(t *testing.T) {
	synced := func() *swv1.ServiceWatch {
		w := testWatch()
		w.Status.ObservedGeneration = w.Generation
		return w
	}
	tests := []struct {
		name  string
		watch func() *swv1.ServiceWatch
		// known is the trigger of the last sync; "" when none is known.
		known   string
		current func(w *swv1.ServiceWatch) string
		want    bool
	}{
		{"a periodic refresh", synced, "same", func(*swv1.ServiceWatch) string { return "same" }, false},
		{"a periodic refresh after a restart", synced, "", func(*swv1.ServiceWatch) string { return "t" }, false},
		{"a new watch", func() *swv1.ServiceWatch { w := testWatch(); w.Status.ObservedGeneration = -1; return w }, "", func(*swv1.ServiceWatch) string { return "t" }, false},
		{"a new generation", func() *swv1.ServiceWatch { w := synced(); w.Generation++; return w }, "old", func(*swv1.ServiceWatch) string { return "new" }, false},
		{"a changed Secret", synced, "old", func(*swv1.ServiceWatch) string { return "new" }, true},
		{"a requested sync", func() *swv1.ServiceWatch {
			w := synced()
			w.Annotations = map[string]string{swv1.RequestedAtAnnotation: "now"}
			return w
		}, "old", func(*swv1.ServiceWatch) string { return "new" }, true},
		{"a requested sync already handled", func() *swv1.ServiceWatch {
			w := synced()
			w.Annotations = map[string]string{swv1.RequestedAtAnnotation: "then"}
			w.Status.LastHandledRequestedAt = "then"
			return w
		}, "same", func(*swv1.ServiceWatch) string { return "same" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pacer := testPacer(time.Now)
			w := tt.watch()
			p := pacedOf(w, nil, "")
			if tt.known != "" {
				last := p
				last.Trigger = tt.known
				pacer.Synced(last, pacing.SyncRecord{Every: last.Every})
			}
			p.Trigger = tt.current(w)
			if got := pacer.Fresh(p); got != tt.want {
				t.Errorf("Fresh = %v, want %v", got, tt.want)
			}
		})
	}
}

// size is how many calls are remembered.
func (s *sharedReads) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

// joinedUnderWay is how many reads joined the call of key under way.
func (s *sharedReads) joinedUnderWay(key readKey) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.calls[key]; c != nil && !c.ended {
		return c.joined
	}
	return -1
}
