package tenancy_test

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/tenancy"
)

func TestDivide(t *testing.T) {
	const key = 10.0 / 11 // 10 calls per 10 s, with the 10 % margin
	for _, tc := range []struct {
		name     string
		capacity float64
		claims   []tenancy.Claim
		want     map[string]float64 // shares
	}{
		{"one namespace alone gets the whole key", key,
			[]tenancy.Claim{{Namespace: "big", Need: 5}},
			map[string]float64{"big": key}},
		{"equal weights: three busy namespaces get a third each", 0.9,
			[]tenancy.Claim{{Namespace: "a", Need: 1}, {Namespace: "b", Need: 2}, {Namespace: "c", Need: 3}},
			map[string]float64{"a": 0.3, "b": 0.3, "c": 0.3}},
		{"an idle namespace's share goes to the others", 0.9,
			[]tenancy.Claim{{Namespace: "idle", Need: 0}, {Namespace: "b", Need: 2}, {Namespace: "c", Need: 3}},
			map[string]float64{"idle": 0, "b": 0.45, "c": 0.45}},
		{"50, 5 and 1 watches: the small ones get what they need, the big one the rest", 0.9,
			[]tenancy.Claim{{Namespace: "n50", Need: 50.0 / 30}, {Namespace: "n5", Need: 5.0 / 30}, {Namespace: "n1", Need: 1.0 / 30}},
			map[string]float64{"n50": 0.9 - 6.0/30, "n5": 5.0 / 30, "n1": 1.0 / 30}},
		{"weights: 2 to 1", 0.9,
			[]tenancy.Claim{{Namespace: "heavy", Weight: 2, Need: 5}, {Namespace: "light", Weight: 1, Need: 5}},
			map[string]float64{"heavy": 0.6, "light": 0.3}},
		{"a heavy namespace that needs little leaves the rest", 0.9,
			[]tenancy.Claim{{Namespace: "heavy", Weight: 5, Need: 0.1}, {Namespace: "light", Weight: 1, Need: 5}},
			map[string]float64{"heavy": 0.1, "light": 0.8}},
		{"all fit: everyone gets what it needs", 0.9,
			[]tenancy.Claim{{Namespace: "a", Need: 0.2}, {Namespace: "b", Need: 0.3}},
			map[string]float64{"a": 0.2, "b": 0.3}},
		{"a weight of 0 or NaN counts as 1", 0.9,
			[]tenancy.Claim{{Namespace: "a", Weight: 0, Need: 5}, {Namespace: "b", Weight: math.NaN(), Need: 5}, {Namespace: "c", Weight: 1, Need: 5}},
			map[string]float64{"a": 0.3, "b": 0.3, "c": 0.3}},
		{"no limit: everyone gets what it needs", 0,
			[]tenancy.Claim{{Namespace: "a", Need: 7}},
			map[string]float64{"a": 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tenancy.Divide(tc.capacity, tc.claims)
			sum := 0.0
			for ns, want := range tc.want {
				if math.Abs(got[ns].Share-want) > 1e-9 {
					t.Errorf("%s's share = %v, want %v", ns, got[ns].Share, want)
				}
				sum += got[ns].Share
			}
			if tc.capacity > 0 && sum > tc.capacity+1e-9 {
				t.Errorf("shares add up to %v, more than the key's %v", sum, tc.capacity)
			}
		})
	}
}

// One namespace's many watches stretch its own interval, never another's
// beyond what that one's share allows.
func TestFactorStretchesOnlyTheNamespaceOverItsShare(t *testing.T) {
	shares := tenancy.Divide(1, []tenancy.Claim{
		{Namespace: "n500", Need: 500.0 / 30}, {Namespace: "n1", Need: 2.0 / 30}, {Namespace: "n5", Need: 0.2},
	})
	for ns, want := range map[string]float64{"n1": 1, "n5": 1, "n500": (500.0 / 30) / (1 - 2.0/30 - 0.2)} {
		if got := shares[ns].Factor(); math.Abs(got-want) > 1e-9 {
			t.Errorf("%s stretched by %v, want %v", ns, got, want)
		}
	}
	if got := (tenancy.Share{Need: 1}).Factor(); !math.IsInf(got, 1) {
		t.Errorf("no share for a need: factor %v, want +Inf", got)
	}
}

func TestUsable(t *testing.T) {
	for _, tc := range []struct {
		requests int
		reserved float64
		want     int
	}{
		{10, 0, 10},
		{10, 0.3, 7},
		{10, 0.25, 7}, // 7.5 rounds down: the manager keeps under the rest
		{10, 0.99, 1}, // never stopped
		{100, 0.5, 50},
		{0, 0.5, 0}, // no limit stays none
		{10, -1, 10},
	} {
		if got := tenancy.Usable(tc.requests, tc.reserved); got != tc.want {
			t.Errorf("Usable(%d, %v) = %d, want %d", tc.requests, tc.reserved, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, ok := range []float64{0, 0.2, 0.99} {
		if err := tenancy.ValidateReserve(ok); err != nil {
			t.Errorf("ValidateReserve(%v) = %v", ok, err)
		}
	}
	for _, bad := range []float64{-0.1, 1, 2, math.NaN()} {
		if err := tenancy.ValidateReserve(bad); err == nil {
			t.Errorf("ValidateReserve(%v) accepted", bad)
		}
	}
}

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestShares(t *testing.T) {
	const rate, burst = 100, 1000 // units per second, units
	type step struct {
		advance time.Duration
		charge  map[string]int64
		// wait is what each namespace is told after the step.
		wait map[string]time.Duration
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a namespace within its burst never waits", []step{
			{charge: map[string]int64{"a": 1000}, wait: map[string]time.Duration{"a": 0}},
		}},
		{"a namespace over its share waits until it has earned the work back", []step{
			{charge: map[string]int64{"hostile": 1500}, wait: map[string]time.Duration{"hostile": 5 * time.Second}},
			{advance: 2 * time.Second, wait: map[string]time.Duration{"hostile": 3 * time.Second}},
			{advance: 3 * time.Second, wait: map[string]time.Duration{"hostile": 0}},
		}},
		{"another namespace's work is not charged to a victim", []step{
			{charge: map[string]int64{"hostile": 5000, "victim": 10}, wait: map[string]time.Duration{"hostile": 40 * time.Second, "victim": 0}},
			{charge: map[string]int64{"hostile": 5000}, wait: map[string]time.Duration{"hostile": 90 * time.Second, "victim": 0}},
		}},
		{"earned work never exceeds the burst", []step{
			{advance: time.Hour, charge: map[string]int64{"a": 900}, wait: map[string]time.Duration{"a": 0}},
			{advance: time.Hour, charge: map[string]int64{"a": 1100}, wait: map[string]time.Duration{"a": time.Second}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
			s := tenancy.NewWorkShares(rate, burst, clock.now)
			for i, st := range tt.steps {
				clock.advance(st.advance)
				for ns, units := range st.charge {
					s.Charge(ns, units)
				}
				for ns, want := range st.wait {
					if got := s.Wait(ns); got != want {
						t.Errorf("step %d: Wait(%q) = %v, want %v", i, ns, got, want)
					}
				}
			}
		})
	}
}

// A namespace that has earned its burst back is forgotten: memory follows
// the namespaces that read recently.
func TestSharesForgetIdleNamespaces(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	s := tenancy.NewWorkShares(100, 1000, clock.now)
	s.Charge("a", 500)
	if s.Tracked() != 1 {
		t.Fatalf("tracked %d namespaces, want 1", s.Tracked())
	}
	clock.advance(5 * time.Second)
	if s.Wait("a") != 0 || s.Tracked() != 0 {
		t.Errorf("a full bucket is still tracked (%d)", s.Tracked())
	}
}

// nil WorkShares bound nothing, so that a reconciler built without them works.
func TestNilSharesNeverWait(t *testing.T) {
	var s *tenancy.WorkShares
	s.Charge("a", 1<<40)
	if s.Wait("a") != 0 {
		t.Error("nil WorkShares made a namespace wait")
	}
}

const kib = 1 << 10

type step struct {
	op       string // "write" (Room, then Kept of bytes), "room" (Room alone), "new", "stalled" (bytes watches found at start, 3.5 KiB each), "release"
	ns, name string
	bytes    int    // write: what the status keeps; new: what it kept
	want     int    // write, room: the grant, asking for 100 KiB
	wantWhy  string // write, room: a word the note must hold; "" none
	nsKept   int    // after the step: what ns keeps
	allKept  int    // and all watches
}

// The ledger's rules, step by step: first come keeps its room within a
// namespace, a watch's own booking never counts against it, a grant is
// booked until the write says what it keeps, a released watch frees its
// room, and the tighter budget bounds the grant and is the one named.
// Between namespaces each is guaranteed its part of the manager's budget
// (here min(150, 200/n) KiB for n namespaces): what one keeps, fixed parts
// included, never takes another's part.
func TestLedger(t *testing.T) {
	nsBudget := tenancy.StatusBudget{Bytes: 150 * kib, Setting: "--max-namespace-status-bytes"}
	allBudget := tenancy.StatusBudget{Bytes: 200 * kib, Setting: "--max-status-bytes"}
	for _, tt := range []struct {
		name  string
		steps []step
	}{
		{"one watch under both budgets", []step{
			{op: "write", ns: "a", name: "w1", bytes: 90 * kib, want: 100 * kib, nsKept: 90 * kib, allKept: 90 * kib},
			{op: "write", ns: "a", name: "w1", bytes: 100 * kib, want: 100 * kib, nsKept: 100 * kib, allKept: 100 * kib}, // its own is its own
		}},
		{"the later watches of a namespace get what is left", []step{
			{op: "write", ns: "a", name: "w1", bytes: 100 * kib, want: 100 * kib, nsKept: 100 * kib, allKept: 100 * kib},
			{op: "write", ns: "a", name: "w2", bytes: 50 * kib, want: 50 * kib, wantWhy: "namespace a keep 100 KiB of the 150 KiB", nsKept: 150 * kib, allKept: 150 * kib},
			// A watch cut to nothing still keeps its conditions and counts,
			// which count too: the first watch now has 98 KiB.
			{op: "write", ns: "a", name: "w3", bytes: 2 * kib, want: 1, wantWhy: "--max-namespace-status-bytes", nsKept: 152 * kib, allKept: 152 * kib},
			{op: "write", ns: "a", name: "w1", bytes: 98 * kib, want: 98 * kib, wantWhy: "keep 52 KiB", nsKept: 150 * kib, allKept: 150 * kib},
		}},
		{"a namespace past its part keeps no other namespace's part", []step{
			{op: "write", ns: "a", name: "w1", bytes: 100 * kib, want: 100 * kib, nsKept: 100 * kib, allKept: 100 * kib},
			{op: "write", ns: "a", name: "w2", bytes: 50 * kib, want: 50 * kib, wantWhy: "namespace a", nsKept: 150 * kib, allKept: 150 * kib},
			// b's part is 100 KiB of the 200, though a keeps 150 and the
			// manager has 50 left.
			{op: "write", ns: "b", name: "w1", bytes: 100 * kib, want: 100 * kib, nsKept: 100 * kib, allKept: 250 * kib},
			// a's watches are cut to a's part as they write again: its
			// own, never b's.
			{op: "write", ns: "a", name: "w1", bytes: 50 * kib, want: 50 * kib, wantWhy: "--max-status-bytes", nsKept: 100 * kib, allKept: 200 * kib},
			{op: "write", ns: "b", name: "w2", bytes: 1 * kib, want: 1, wantWhy: "--max-status-bytes", nsKept: 101 * kib, allKept: 201 * kib},
		}},
		{"stalled watches' fixed parts fill no other namespace's part", []step{
			// 60 stalled watches of 3.5 KiB each found at start: 210 KiB,
			// past both budgets.
			{op: "stalled", ns: "a", name: "s", bytes: 60, nsKept: 210 * kib, allKept: 210 * kib},
			{op: "write", ns: "a", name: "w1", bytes: 3 * kib, want: 1, wantWhy: "namespace a", nsKept: 213 * kib, allKept: 213 * kib},
			{op: "write", ns: "b", name: "w1", bytes: 100 * kib, want: 100 * kib, nsKept: 100 * kib, allKept: 313 * kib},
		}},
		{"a namespace that comes has its part at once; the others are cut to theirs as they write again", []step{
			{op: "write", ns: "a", name: "w1", bytes: 100 * kib, want: 100 * kib, nsKept: 100 * kib, allKept: 100 * kib},
			{op: "write", ns: "b", name: "w1", bytes: 90 * kib, want: 100 * kib, nsKept: 90 * kib, allKept: 190 * kib},
			// Three namespaces: a third of 200 KiB each.
			{op: "write", ns: "c", name: "w1", bytes: 60 * kib, want: 200 * kib / 3, wantWhy: "of its part of the room all statuses share (--max-status-bytes)", nsKept: 60 * kib, allKept: 250 * kib},
			{op: "write", ns: "a", name: "w1", bytes: 60 * kib, want: 200 * kib / 3, wantWhy: "namespace a keep 0 KiB of its part", nsKept: 60 * kib, allKept: 210 * kib},
			{op: "write", ns: "b", name: "w1", bytes: 60 * kib, want: 200 * kib / 3, wantWhy: "--max-status-bytes", nsKept: 60 * kib, allKept: 180 * kib},
			{op: "release", ns: "c", name: "w1", nsKept: 0, allKept: 120 * kib},
			{op: "write", ns: "a", name: "w1", bytes: 100 * kib, want: 100 * kib, nsKept: 100 * kib, allKept: 160 * kib},
		}},
		{"a grant is booked until the write says what it keeps", []step{
			{op: "room", ns: "a", name: "w1", want: 100 * kib, nsKept: 100 * kib, allKept: 100 * kib},
			{op: "room", ns: "a", name: "w2", want: 50 * kib, wantWhy: "namespace a", nsKept: 150 * kib, allKept: 150 * kib},
			{op: "write", ns: "a", name: "w1", bytes: 10 * kib, want: 100 * kib, nsKept: 60 * kib, allKept: 60 * kib},
		}},
		{"a released watch frees its room", []step{
			{op: "write", ns: "a", name: "w1", bytes: 100 * kib, want: 100 * kib, nsKept: 100 * kib, allKept: 100 * kib},
			{op: "write", ns: "a", name: "w2", bytes: 50 * kib, want: 50 * kib, wantWhy: "namespace a", nsKept: 150 * kib, allKept: 150 * kib},
			{op: "release", ns: "a", name: "w1", nsKept: 50 * kib, allKept: 50 * kib},
			{op: "write", ns: "a", name: "w2", bytes: 100 * kib, want: 100 * kib, nsKept: 100 * kib, allKept: 100 * kib},
		}},
		{"a watch found at start keeps its place, once", []step{
			{op: "new", ns: "a", name: "w1", bytes: 140 * kib, nsKept: 140 * kib, allKept: 140 * kib},
			{op: "new", ns: "a", name: "w1", bytes: 1 * kib, nsKept: 140 * kib, allKept: 140 * kib}, // booked already
			{op: "write", ns: "a", name: "w2", bytes: 10 * kib, want: 10 * kib, wantWhy: "namespace a", nsKept: 150 * kib, allKept: 150 * kib},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := tenancy.NewStatusLedger(nsBudget, allBudget)
			for i, s := range tt.steps {
				nsBefore, _ := l.Kept(s.ns)
				switch s.op {
				case "write", "room":
					g := l.Room(s.ns, s.name, 100*kib, true)
					note := ""
					if s.op == "write" {
						note = g.Kept(func() int { return s.bytes })
					}
					if g.Bytes != s.want || (s.op == "write" && ((s.wantWhy == "") != (note == "") || !strings.Contains(note, s.wantWhy))) {
						t.Fatalf("step %d: %s/%s granted %d (%q), want %d naming %q", i, s.ns, s.name, g.Bytes, note, s.want, s.wantWhy)
					}
					assertTellsOfItsNamespaceOnly(t, note, s.ns, nsBefore)
				case "new":
					l.HoldIfNew(s.ns, s.name, func() int { return s.bytes })
				case "stalled":
					for j := range s.bytes {
						l.HoldIfNew(s.ns, fmt.Sprintf("%s%d", s.name, j), func() int { return 3*kib + kib/2 })
					}
				case "release":
					l.Release(s.ns, s.name)
				}
				if ns, all := l.Kept(s.ns); ns != s.nsKept || all != s.allKept {
					t.Fatalf("step %d (%s %s/%s): kept %d in the namespace and %d in all, want %d and %d", i, s.op, s.ns, s.name, ns, all, s.nsKept, s.allKept)
				}
			}
		})
	}
}

// assertTellsOfItsNamespaceOnly fails the test when a note names another
// namespace than ns (the table's are single letters), or a figure larger
// than both TestLedger's namespace budget (150 KiB) and what ns keeps:
// what all watches or another namespace keep, or the manager's total.
func assertTellsOfItsNamespaceOnly(t *testing.T, note, ns string, nsKept int) {
	t.Helper()
	for _, m := range regexp.MustCompile(`namespace (\S+)`).FindAllStringSubmatch(note, -1) {
		if m[1] != ns {
			t.Errorf("the note to a watch of namespace %s names namespace %s: %q", ns, m[1], note)
		}
	}
	for _, m := range regexp.MustCompile(`(\d+) KiB`).FindAllStringSubmatch(note, -1) {
		if n, _ := strconv.Atoi(m[1]); n > max(150, nsKept>>10) {
			t.Errorf("the note to a watch of namespace %s gives %s KiB, more than its namespace may keep or keeps: %q", ns, m[1], note)
		}
	}
}

// However many watches ask at once, in whatever order, the grants booked
// never pass either budget once the namespaces are known (a namespace that
// comes later is guaranteed its part at once, and the others give back what
// they kept above theirs as they write again).
func TestLedgerNeverGrantsPastABudget(t *testing.T) {
	l := tenancy.NewStatusLedger(tenancy.StatusBudget{Bytes: 1000}, tenancy.StatusBudget{Bytes: 2500})
	namespaces := []string{"a", "b", "c", "d"}
	for _, n := range namespaces {
		l.HoldIfNew(n, "first", func() int { return 1 })
	}
	var grants []tenancy.StatusGrant
	for i := range 60 {
		grants = append(grants, l.Room(namespaces[i%4], string(rune('A'+i)), 300+i*7, true))
		for _, n := range namespaces {
			if kept, all := l.Kept(n); kept > 1000 || all > 2500 {
				t.Fatalf("after %d grants: %s keeps %d, all %d", i+1, n, kept, all)
			}
		}
	}
	for _, g := range grants {
		g.Kept(func() int { return g.Bytes / 2 })
	}
	if _, all := l.Kept("a"); all > 1250+4 {
		t.Errorf("after the writes, all keep %d, want at most half the grants", all)
	}
}

// A write that keeps the lists it has is not bounded again, and no
// budget (or no ledger) bounds nothing.
func TestWhatIsNotBounded(t *testing.T) {
	l := tenancy.NewStatusLedger(tenancy.StatusBudget{Bytes: 10}, tenancy.StatusBudget{})
	l.Hold("a", "w1", 10)
	g := l.Room("a", "w2", 100, false)
	if g.Bytes != 100 || g.Kept(func() int { t.Error("size asked of a grant for old lists"); return 0 }) != "" {
		t.Errorf("old lists: %+v", g)
	}
	for _, l := range []*tenancy.StatusLedger{tenancy.NewStatusLedger(tenancy.StatusBudget{}, tenancy.StatusBudget{}), nil} {
		l.Hold("a", "w1", 1<<30)
		if g := l.Room("a", "w2", 1<<30, true); g.Bytes != 1<<30 || g.Kept(func() int { return 1 }) != "" {
			t.Errorf("Room = %+v, want all of it", g)
		}
	}
}
