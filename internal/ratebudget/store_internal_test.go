package ratebudget

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

var epoch = time.Unix(1_700_000_000, 0)

// The two APIs of the cloud client, and their default limits, as the
// cloud client configures its budgets (cloudapi.NewBudgets).
const (
	apiManagement = "management"
	apiAlert      = "alert"
)

func defaultManagementRate() RateLimit {
	return RateLimit{Requests: 10, Per: 10 * time.Second, Burst: 2}
}

func defaultAlertRate() RateLimit { return RateLimit{Requests: 100, Per: time.Minute, Burst: 10} }

// clientAt returns a store whose clock is clock, with the given limits.
func clientAt(clock *clocktesting.FakeClock, mgmt, alert RateLimit) *Store {
	c := NewStore(map[string]RateLimit{apiManagement: mgmt, apiAlert: alert})
	c.now = clock.Now
	return c
}

// testCred is a credential known by its digest alone, as the store knows
// every credential.
type testCred string

func (c testCred) Digest() [sha256.Size]byte { return sha256.Sum256([]byte(c)) }

func basicCreds(keyID, keySecret string) testCred {
	return testCred("basic:" + keyID + ":" + keySecret)
}

func bearerToken(token string) testCred { return testCred("bearer:" + token) }

// admitStep is an Admit at a time since the start, and the wait it must say.
type admitStep struct {
	at   time.Duration
	n    int
	wait time.Duration
}

func TestAdmissionPacesEvenlyWithABurst(t *testing.T) {
	mgmt := defaultManagementRate() // 10 per 10 s, bursts of 2: window 11 s, spacing 1.1 s
	tests := []struct {
		name  string
		steps []admitStep
	}{
		{name: "a sync's two calls go together, the next pair 2.2 s later", steps: []admitStep{
			{0, 2, 0},
			{0, 1, 1100 * time.Millisecond},
			{time.Second, 2, 1200 * time.Millisecond},
			{2200 * time.Millisecond, 2, 0},
		}},
		{name: "a cold start's backlog is spread out, not burst", steps: []admitStep{
			{0, 1, 0},
			{0, 1, 0}, // the burst of 2
			{0, 1, 1100 * time.Millisecond},
			{1100 * time.Millisecond, 1, 0},
			{1100 * time.Millisecond, 1, 1100 * time.Millisecond},
			{2200 * time.Millisecond, 1, 0},
		}},
		{name: "a rested budget takes its burst again", steps: []admitStep{
			{0, 2, 0},
			{time.Hour, 2, 0},
		}},
		{name: "more than the burst waits until the budget is rested", steps: []admitStep{
			{0, 1, 0},
			{0, 5, 1100 * time.Millisecond},
			{1100 * time.Millisecond, 5, 0},
			{1100 * time.Millisecond, 1, 4400 * time.Millisecond},
		}},
		{name: "more than Requests never goes", steps: []admitStep{
			{time.Hour, 11, 11 * time.Second},
			{time.Hour, 10, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := clocktesting.NewFakeClock(epoch)
			c := clientAt(clock, mgmt, RateLimit{Requests: -1})
			for i, s := range tt.steps {
				clock.SetTime(epoch.Add(s.at))
				if got := c.Admit(apiManagement, "https://api.example.com", testKey, s.n); got != s.wait {
					t.Fatalf("step %d: Admit(%d) at +%v = %v, want %v", i, s.n, s.at, got, s.wait)
				}
			}
		})
	}
}

var testKey = basicCreds("key", "secret")

// The margin: the service's 10 per 10 s is kept over 11 s, so that an unknown
// phase and a second of latency jitter cannot push 11 calls into one of its
// windows.
func TestAdmissionKeepsToTheLimitOverAStretchedWindow(t *testing.T) {
	limit := RateLimit{Requests: 10, Per: 10 * time.Second, Burst: 10}
	clock := clocktesting.NewFakeClock(epoch)
	c := clientAt(clock, limit, RateLimit{Requests: -1})
	if wait := c.Admit(apiManagement, "https://h", testKey, 10); wait != 0 {
		t.Fatalf("first 10: wait %v", wait)
	}
	clock.Step(10 * time.Second) // a new window at a service whose phase is ours
	if wait := c.Admit(apiManagement, "https://h", testKey, 1); wait != time.Second {
		t.Errorf("after 10 s: wait %v, want 1 s more (the margin)", wait)
	}
	clock.Step(time.Second)
	if wait := c.Admit(apiManagement, "https://h", testKey, 1); wait != 0 {
		t.Errorf("after 11 s: wait %v, want 0", wait)
	}
}

// A waiting watch is told when its budget will have room, and its reconcile
// comes back a few milliseconds after that (a timer, a work queue). A batch
// that late keeps its slot: were the budget's grid to move by each lateness,
// every later waiter, told the grid as it was, would come back early, be
// refused and ask once more.
func TestABatchALittleLateKeepsItsSlot(t *testing.T) {
	mgmt := defaultManagementRate() // a batch of 2 every 2.2 s
	const batches = 100
	for _, late := range []time.Duration{0, time.Millisecond, 20 * time.Millisecond, 100 * time.Millisecond} {
		t.Run(late.String(), func(t *testing.T) {
			clock := clocktesting.NewFakeClock(epoch)
			c := clientAt(clock, mgmt, RateLimit{Requests: -1})
			rng := rand.New(rand.NewPCG(1, 2))
			refused := 0
			for k := range batches {
				// The first batch sets the grid; the k-th waiter was told the
				// k-th slot, comes back up to late after it, and asks until
				// it is admitted.
				at := epoch.Add(time.Duration(k) * 2200 * time.Millisecond)
				if k > 0 {
					at = at.Add(time.Duration(rng.Int64N(int64(late) + 1)))
				}
				clock.SetTime(at)
				for c.Admit(apiManagement, "https://api.example.com", testKey, 2) > 0 {
					refused++
					if refused > 2*batches {
						t.Fatal("never admitted")
					}
					clock.Step(c.Admit(apiManagement, "https://api.example.com", testKey, 2))
				}
			}
			t.Logf("%d of %d batches refused once", refused, batches)
			if refused != 0 {
				t.Errorf("%d of %d batches arriving up to %v late were refused, want 0", refused, batches, late)
			}
		})
	}
}

// Whatever the sequence of requests, admissions never put more than Requests
// calls into any window of Per × 1.1 less a tenth of a spacing (so none into
// any window of Per, at any phase), every refusal says a wait > 0, and waiting that long is enough.
func TestAdmissionNeverExceedsTheLimitInAnyWindow(t *testing.T) {
	limits := []RateLimit{
		defaultManagementRate(), defaultAlertRate(),
		{Requests: 10, Per: 10 * time.Second, Burst: 10},
		{Requests: 3, Per: time.Second, Burst: 1},
		{Requests: 7, Per: 3 * time.Second, Burst: 0},
	}
	for _, limit := range limits {
		for seed := range uint64(50) {
			t.Run(fmt.Sprintf("%d/%v/%d seed %d", limit.Requests, limit.Per, limit.Burst, seed), func(t *testing.T) {
				checkAdmissions(t, limit, rand.New(rand.NewPCG(seed, 7)))
			})
		}
	}
}

func checkAdmissions(t *testing.T, limit RateLimit, rng *rand.Rand) {
	p := newRateLimiter(limit, epoch, rng.Float64())
	now := epoch
	var admitted []time.Time // one entry per call
	for range 400 {
		// Callers arrive at random: bunched, spread, or after long pauses.
		switch rng.IntN(4) {
		case 0:
		case 1:
			now = now.Add(time.Duration(rng.Int64N(int64(limit.Per / 10))))
		case 2:
			now = now.Add(time.Duration(rng.Int64N(int64(limit.Per))))
		default:
			now = now.Add(time.Duration(rng.Int64N(int64(3 * limit.Per))))
		}
		n := 1 + rng.IntN(min(limit.Requests, 4))
		before := p.clone()
		wait := p.admit(now, n)
		if wait < 0 {
			t.Fatalf("negative wait %v", wait)
		}
		if wait == 0 {
			for range n {
				admitted = append(admitted, now)
			}
			continue
		}
		before.forget(now) // what left the window may go; nothing else changes
		if !slices.Equal(before.log, p.log) || !before.tat.Equal(p.tat) {
			t.Fatalf("a refused admission changed the budget")
		}
		if again := before.admit(now.Add(wait), n); again != 0 {
			t.Fatalf("Admit(%d) said wait %v, but then it says wait %v more", n, wait, again)
		}
	}
	// A batch a little late counts in its slot (slotOf): the window less
	// that slack is what admission keeps to, still longer than Per.
	window := windowOf(limit) - windowOf(limit)/time.Duration(limit.Requests)/lateSlots
	if window <= limit.Per {
		t.Fatalf("window %v leaves no margin over %v", window, limit.Per)
	}
	for i, first := range admitted {
		// Calls at or after first and before first+window.
		j, _ := slices.BinarySearchFunc(admitted, first.Add(window), func(a, b time.Time) int { return a.Compare(b) })
		if count := j - i; count > limit.Requests {
			t.Fatalf("%d calls within %v of %v, want at most %d", count, window, first.Sub(epoch), limit.Requests)
		}
	}
	if len(admitted) < 100 {
		t.Fatalf("only %d calls admitted: the test exercises too little", len(admitted))
	}
}

// clone returns an independent copy, for trying an admission.
func (rl *rateLimiter) clone() *rateLimiter {
	c := *rl
	c.log = slices.Clone(rl.log)
	return &c
}

func TestHoldIsHonouredByAdmissionAndCalls(t *testing.T) {
	clock := clocktesting.NewFakeClock(epoch)
	c := clientAt(clock, defaultManagementRate(), RateLimit{Requests: -1})
	for _, api := range []string{apiManagement, apiAlert} { // a disabled limit is held too
		c.Hold(api, "https://h", testKey, epoch.Add(30*time.Second))
		if wait := c.Admit(api, "https://h", testKey, 1); wait != 30*time.Second {
			t.Errorf("%s: wait %v, want 30s", api, wait)
		}
	}
	clock.Step(30 * time.Second)
	for _, api := range []string{apiManagement, apiAlert} {
		if wait := c.Admit(api, "https://h", testKey, 2); wait != 0 {
			t.Errorf("%s at the end of the hold: wait %v, want 0", api, wait)
		}
	}
}

func TestRestedBudgetsAreForgotten(t *testing.T) {
	clock := clocktesting.NewFakeClock(epoch)
	c := clientAt(clock, defaultManagementRate(), defaultAlertRate())
	rotated := basicCreds("old", "rotated-away")
	c.Admit(apiManagement, "https://h", rotated, 2)
	c.Hold(apiManagement, "https://h", basicCreds("held", "s"), epoch.Add(3*time.Hour))
	c.Admit(apiAlert, "https://h", bearerToken("busy"), 10)
	if n := c.len(); n != 3 {
		t.Fatalf("%d budgets, want 3", n)
	}

	// Eleven seconds on, the management budget is rested; the alert one
	// (10 calls of 100 per 66 s) is not.
	clock.Step(sweepEvery)
	c.Admit(apiManagement, "https://h", basicCreds("new", "s"), 1)
	if _, ok := c.budgets[budgetKeyOf(apiManagement, "https://h", rotated)]; ok {
		t.Error("a rested budget was kept")
	}
	if n := c.len(); n != 3 {
		t.Errorf("%d budgets, want 3: held, busy alert and new", n)
	}
	// Forgetting changes nothing: the rotated key starts with a full burst.
	if wait := c.Admit(apiManagement, "https://h", rotated, 2); wait != 0 {
		t.Errorf("forgotten budget: wait %v, want 0", wait)
	}
	clock.Step(4 * time.Hour)
	c.Admit(apiManagement, "https://h", testKey, 1)
	if n := c.len(); n != 1 {
		t.Errorf("%d budgets after the hold ended, want 1", n)
	}
	for k := range c.budgets {
		if string(k[:]) == "rotated-away" {
			t.Error("credential kept in clear")
		}
	}
}

// Admission is shared by every worker: under contention, a frozen clock
// admits exactly the burst, however many ask at once.
func TestAdmissionIsSafeForConcurrentUse(t *testing.T) {
	clock := clocktesting.NewFakeClock(epoch)
	c := clientAt(clock, RateLimit{Requests: 100, Per: time.Minute, Burst: 10}, RateLimit{Requests: -1})
	var mu sync.Mutex
	admitted := 0
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			for range 20 {
				if c.Admit(apiManagement, "https://h", testKey, 1) == 0 {
					mu.Lock()
					admitted++
					mu.Unlock()
				}
				c.Hold(apiManagement, "https://other", testKey, epoch)
			}
		})
	}
	wg.Wait()
	if admitted != 10 {
		t.Errorf("%d admitted, want the burst of 10", admitted)
	}
}

// len returns the number of budgets remembered; for tests.
func (s *Store) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.budgets)
}

// A cold start: 20 keys, each with a backlog of 10 syncs of two calls, ask
// together at the default management limit, each again when told. The first
// budget starts rested; the others, created behind it once it is exhausted,
// start offset by phases of their own: their calls do not come on one
// refill grid (all 20 keys at once every 2.2 s, as before), each key's calls
// are still 2.2 s apart, the keys come in the same order every round, and
// the offset costs a key at most one spacing.
func TestBudgetsCreatedTogetherRefillOnGridsOfTheirOwn(t *testing.T) {
	const keys, syncs = 20, 10
	spacing := 2200 * time.Millisecond
	clock := clocktesting.NewFakeClock(epoch)
	c := clientAt(clock, defaultManagementRate(), RateLimit{Requests: -1})
	creds := make([]CredentialID, keys)
	for k := range creds {
		creds[k] = basicCreds(fmt.Sprintf("key-%d", k), "secret")
	}
	admitted := make([][]time.Duration, keys)
	next := make([]time.Duration, keys) // when each key asks again
	for step := time.Duration(0); step < time.Minute; step += 10 * time.Millisecond {
		clock.SetTime(epoch.Add(step))
		for k := range keys {
			if len(admitted[k]) == syncs || next[k] > step {
				continue
			}
			wait := c.Admit(apiManagement, "https://api.example.com", creds[k], 2)
			if wait == 0 {
				admitted[k] = append(admitted[k], step)
			}
			next[k] = step + wait
		}
	}
	if admitted[0][0] != 0 {
		t.Errorf("the first budget waited %v: a budget created alone starts rested", admitted[0][0])
	}
	firsts := make([]time.Duration, keys)
	for k, at := range admitted {
		if len(at) != syncs {
			t.Fatalf("key %d: %d syncs admitted in a minute, want %d", k, len(at), syncs)
		}
		firsts[k] = at[0]
		for j := 1; j < syncs; j++ {
			if gap := at[j] - at[j-1]; gap < spacing || gap > spacing+10*time.Millisecond {
				t.Errorf("key %d: syncs %d and %d %v apart, want the spacing %v", k, j-1, j, gap, spacing)
			}
		}
		if last := at[syncs-1]; last > (syncs-1)*spacing+spacing {
			t.Errorf("key %d: last sync at %v, more than one spacing after %v", k, last, (syncs-1)*spacing)
		}
	}
	// In the same order every round: a key's offset within the spacing is
	// that of its first sync.
	for k := range keys {
		for j := range syncs {
			if off := admitted[k][j] - time.Duration(j)*spacing; off != firsts[k] {
				t.Fatalf("key %d: sync %d at %v, off its grid at %v", k, j, admitted[k][j], firsts[k])
			}
		}
	}
	// Spread over the spacing: at most a quarter of the keys within any
	// tenth of it (all 20 at once on one grid).
	slices.Sort(firsts)
	for i := range firsts {
		j := i
		for j < keys && firsts[j]-firsts[i] < spacing/10 {
			j++
		}
		if j-i > keys/4 {
			t.Errorf("%d of %d keys first admitted within %v of %v: %v", j-i, keys, spacing/10, firsts[i], firsts)
		}
	}

	// A key whose budget is created later, on its own, starts rested.
	clock.SetTime(epoch.Add(2 * time.Minute))
	if wait := c.Admit(apiManagement, "https://api.example.com", basicCreds("late", "secret"), 2); wait != 0 {
		t.Errorf("a budget created alone waits %v", wait)
	}
}
