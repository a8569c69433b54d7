package reads

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"
)

// freshness is the reuse window of these tests.
const freshness = 3 * time.Second

// testKey names one read, as a caller's key does.
type testKey struct {
	service string
}

var key = testKey{service: "svc"}

// refusedError is a failure of the caller's own making, not the source's
// answer.
type refusedError struct{}

func (refusedError) Error() string { return "refused" }

func newReads(now func() time.Time) *Shared[testKey] {
	return NewShared[testKey](freshness, now, func(err error) bool { return !errors.As(err, new(refusedError)) })
}

// countingFetch counts its calls and answers value, err.
func countingFetch(calls *atomic.Int32, value string, err error) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		calls.Add(1)
		return value, err
	}
}

// blockedRead starts a read of key that leads a call and blocks in it until
// the returned release is called; its answer arrives on the channel.
func blockedRead(t *testing.T, s *Shared[testKey], key testKey, fetch func(context.Context) (string, error)) (release func(), answer <-chan readAnswer) {
	t.Helper()
	gate := make(chan struct{})
	out := make(chan readAnswer, 1)
	go func() {
		v, err := Do(context.Background(), s, key, false, func(ctx context.Context) (string, error) {
			<-gate
			return fetch(ctx)
		})
		out <- readAnswer{v, err}
	}()
	waitForJoined(t, s, key, 0) // the leader's call is under way
	return func() { close(gate) }, out
}

type readAnswer struct {
	value string
	err   error
}

// followers start n reads of key that must join the call under way, and
// wait until they have.
func followers(t *testing.T, s *Shared[testKey], key testKey, n int, fresh bool, calls *atomic.Int32) <-chan readAnswer {
	t.Helper()
	out := make(chan readAnswer, n)
	for range n {
		go func() {
			v, err := Do(context.Background(), s, key, fresh, countingFetch(calls, "follower's own call", nil))
			out <- readAnswer{v, err}
		}()
	}
	waitForJoined(t, s, key, n)
	return out
}

// waitForJoined waits until n reads joined the call of key under way (0:
// the call is under way), as the test's goroutines make them.
func waitForJoined(t *testing.T, s *Shared[testKey], key testKey, n int) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return s.joinedUnderWay(key) == n, nil
	})
	if err != nil {
		t.Fatalf("%d reads joined the call: not within 5s (%v)", n, err)
	}
}

func collect(ch <-chan readAnswer, n int) []readAnswer {
	out := make([]readAnswer, n)
	for i := range out {
		out[i] = <-ch
	}
	return out
}

func TestSharedReadJoinsTheCallUnderWay(t *testing.T) {
	for _, fresh := range []bool{false, true} {
		t.Run(fmt.Sprintf("fresh=%v", fresh), func(t *testing.T) {
			clock := clocktesting.NewFakeClock(time.Time{})
			s := newReads(clock.Now)
			var calls atomic.Int32
			release, leader := blockedRead(t, s, key, countingFetch(&calls, "pipes", nil))
			joined := followers(t, s, key, 9, fresh, &calls)
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

// A finished read is reused within the window, unless the read must be
// fresh; failures that are the source's answer are reused like results,
// those of the leader's own making are not.
func TestSharedReadReuseWindow(t *testing.T) {
	sourceErr := errors.New("the server failed")
	tests := []struct {
		name      string
		err       error
		after     time.Duration
		fresh     bool
		wantCalls int32
	}{
		{"a result, just after", nil, 0, false, 1},
		{"a result, at the end of the window", nil, freshness - time.Millisecond, false, 1},
		{"a result, once the window is over", nil, freshness, false, 2},
		{"a result, for a read that must be fresh", nil, 0, true, 2},
		{"the source's failure, within the window", sourceErr, time.Second, false, 1},
		{"the source's failure, for a read that must be fresh", sourceErr, time.Second, true, 2},
		{"the leader's ctx ended", fmt.Errorf("calling: %w", context.Canceled), 0, false, 2},
		{"a failure of the caller's own making", fmt.Errorf("admission: %w", refusedError{}), 0, false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := clocktesting.NewFakeClock(time.Time{})
			s := newReads(clock.Now)
			var calls atomic.Int32
			ctx := context.Background()
			if errors.Is(tt.err, context.Canceled) {
				canceled, cancel := context.WithCancel(ctx)
				cancel()
				_, _ = Do(canceled, s, key, false, countingFetch(&calls, "first", tt.err))
			} else {
				_, _ = Do(ctx, s, key, false, countingFetch(&calls, "first", tt.err))
			}
			clock.Step(tt.after)
			got, err := Do(ctx, s, key, tt.fresh, countingFetch(&calls, "second", nil))
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
	clock := clocktesting.NewFakeClock(time.Time{})
	s := newReads(clock.Now)
	var calls atomic.Int32
	release, leader := blockedRead(t, s, key, func(context.Context) (string, error) { panic("boom in a shared read") })
	joined := followers(t, s, key, 4, false, &calls)
	release()
	for i, a := range append([]readAnswer{<-leader}, collect(joined, 4)...) {
		if _, ok := errors.AsType[*PanicError](a.err); !ok || !strings.Contains(a.err.Error(), "boom in a shared read") {
			t.Errorf("read %d got %q, %v; want the panic as an error", i, a.value, a.err)
		}
	}
	if got, err := Do(context.Background(), s, key, false, countingFetch(&calls, "again", nil)); got != "again" || err != nil {
		t.Errorf("the read after a panic got %q, %v; want a call of its own", got, err)
	}
}

// A read that waits for another's call stops waiting when its own ctx ends.
func TestSharedReadWaiterHonoursItsContext(t *testing.T) {
	s := newReads(clocktesting.NewFakeClock(time.Time{}).Now)
	var calls atomic.Int32
	release, leader := blockedRead(t, s, key, countingFetch(&calls, "late", nil))
	defer func() { release(); <-leader }()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Do(ctx, s, key, false, countingFetch(&calls, "own", nil)); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want the waiter's own context error", err)
	}
}

// Finished reads are forgotten once they can no longer be reused, so the
// map holds only the last few seconds' reads.
func TestSharedReadsEvictExpiredCalls(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Time{})
	s := newReads(clock.Now)
	var calls atomic.Int32
	for i := range 100 {
		k := key
		k.service = fmt.Sprint(i)
		_, _ = Do(context.Background(), s, k, false, countingFetch(&calls, "v", nil))
	}
	first := key
	first.service = "0"
	if !s.Covers(first) {
		t.Fatal("a read just made is not covered")
	}
	if n := s.size(); n != 100 {
		t.Fatalf("%d calls remembered, want the 100 just made", n)
	}
	clock.Step(freshness)
	_, _ = Do(context.Background(), s, key, false, countingFetch(&calls, "v", nil))
	if n := s.size(); n != 1 {
		t.Errorf("%d calls remembered after the window, want only the new one", n)
	}
}

// An expected read holds the others back for ExpectFor at most, and no
// longer once it begins.
func TestExpecting(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Time{})
	s := newReads(clock.Now)
	s.Expect(key)
	if !s.Expecting(key) || s.Covers(key) {
		t.Fatal("a read just admitted is not expected, or already covered")
	}
	clock.Step(ExpectFor)
	if s.Expecting(key) {
		t.Errorf("a read admitted %s ago and never begun is still expected", ExpectFor)
	}
	s.Expect(key)
	_, _ = Do(context.Background(), s, key, false, func(context.Context) (string, error) {
		if s.Expecting(key) {
			t.Error("a read that began is still expected")
		}
		return "", nil
	})
}

// A nil *Shared shares nothing: every read calls.
func TestNilReadsShareNothing(t *testing.T) {
	var s *Shared[testKey]
	var calls atomic.Int32
	for range 2 {
		if got, err := Do(context.Background(), s, key, false, countingFetch(&calls, "own", nil)); got != "own" || err != nil {
			t.Fatalf("got %q, %v", got, err)
		}
	}
	s.Expect(key)
	if n := calls.Load(); n != 2 || s.Covers(key) || s.Expecting(key) {
		t.Errorf("%d calls for 2 reads, or something covered or expected", n)
	}
}

// size is how many calls are remembered.
func (s *Shared[K]) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

// joinedUnderWay is how many reads joined the call of key under way; -1
// when none is under way.
func (s *Shared[K]) joinedUnderWay(key K) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.calls[key]; c != nil && !c.ended {
		return c.joined
	}
	return -1
}

// A read with a longer reuse window (a watch's interval) reuses a finished
// call while it is younger than that window, also past the freshness
// window; a read that asks for the freshness window alone, or fresh, calls
// again; the sweep keeps the call as long as its longest window.
func TestSharedReadWithinAWatchsInterval(t *testing.T) {
	for _, tt := range []struct {
		name   string
		age    time.Duration
		maxAge time.Duration
		calls  int32
	}{
		{"younger than its interval", 20 * time.Second, 30 * time.Second, 1},
		{"as old as its interval", 30 * time.Second, 30 * time.Second, 2},
		{"past the freshness window, no interval", 5 * time.Second, 0, 2},
		{"within the freshness window, no interval", time.Second, 0, 1},
		{"fresh", time.Second, -1, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock := clocktesting.NewFakeClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
			s := newReads(clock.Now)
			var calls atomic.Int32
			if _, err := DoWithin(context.Background(), s, key, 30*time.Second, countingFetch(&calls, "v", nil)); err != nil {
				t.Fatal(err)
			}
			clock.Step(tt.age)
			if covers := s.CoversWithin(key, tt.maxAge); covers != (tt.calls == 1) && tt.maxAge >= 0 {
				t.Errorf("CoversWithin(%s) after %s = %v", tt.maxAge, tt.age, covers)
			}
			if _, err := DoWithin(context.Background(), s, key, tt.maxAge, countingFetch(&calls, "v", nil)); err != nil {
				t.Fatal(err)
			}
			if got := calls.Load(); got != tt.calls {
				t.Errorf("%d calls, want %d", got, tt.calls)
			}
		})
	}
}

// A failure the source answered is reused for the freshness window only,
// however long the reader's window: its retry calls again.
func TestSharedReadReusesAFailureForTheFreshnessWindowOnly(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	s := newReads(clock.Now)
	var calls atomic.Int32
	failing := countingFetch(&calls, "", errors.New("503"))
	_, _ = DoWithin(context.Background(), s, key, time.Minute, failing)
	clock.Step(time.Second)
	_, _ = DoWithin(context.Background(), s, key, time.Minute, failing)
	clock.Step(freshness)
	_, _ = DoWithin(context.Background(), s, key, time.Minute, failing)
	if got := calls.Load(); got != 2 {
		t.Errorf("%d calls, want 2: the failure reused within %s, not after", got, freshness)
	}
}
