package controller

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/controller/reads"
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
func blockedRead(t *testing.T, s *reads.Shared[readKey], key readKey, fetch func(context.Context) (string, error)) (release func(), answer <-chan readAnswer) {
	t.Helper()
	gate := make(chan struct{})
	out := make(chan readAnswer, 1)
	go func() {
		v, err := reads.Do(context.Background(), s, key, false, func(ctx context.Context) (string, error) {
			<-gate
			return fetch(ctx)
		})
		out <- readAnswer{v, err}
	}()
	waitUntil(t, "the leader's call is under way", func() bool { return s.Covers(key) })
	return func() { close(gate) }, out
}

type readAnswer struct {
	value string
	err   error
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

// The reconciler's shared reads reuse the cloud's failures like results,
// but not a refused admission, which is the watch's own; a panic in a
// shared read reads as the cloud's invalid response.
func TestSharedReadsReuseOnlyTheCloudsAnswers(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		wantCalls int32
	}{
		{"the cloud's failure", &cloudapi.Error{Reason: cloudapi.ReasonServerError}, 1},
		{"a refused admission", &budgetRefusalError{api: "management", wait: time.Second}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSharedReads(sharedFreshness, newFakeClock().Now)
			var calls atomic.Int32
			_, _ = reads.Do(context.Background(), s, testReadKey, false, countingFetch(&calls, "first", tt.err))
			_, _ = reads.Do(context.Background(), s, testReadKey, false, countingFetch(&calls, "second", nil))
			if n := calls.Load(); n != tt.wantCalls {
				t.Errorf("%d calls, want %d", n, tt.wantCalls)
			}
		})
	}
	t.Run("a panic", func(t *testing.T) {
		s := newSharedReads(sharedFreshness, newFakeClock().Now)
		_, err := reads.Do(context.Background(), s, testReadKey, false, func(context.Context) (string, error) { panic("boom in a shared read") })
		if f := cloudFailure(err); f.reason != swv1.ReasonInvalidResponse || !strings.Contains(f.message, "boom in a shared read") {
			t.Errorf("the failure reads %s: %s, want InvalidResponse with the panic", f.reason, f.message)
		}
	})
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
			_, _ = reads.Do(context.Background(), s, base, false, countingFetch(&calls, "base", nil))
			other := base
			vary(&other)
			if s.Covers(other) {
				t.Error("admission would take the read as covered")
			}
			if got, _ := reads.Do(context.Background(), s, other, false, countingFetch(&calls, "other", nil)); got != "other" || calls.Load() != 2 {
				t.Errorf("got %q after %d calls: the read was shared", got, calls.Load())
			}
		})
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
