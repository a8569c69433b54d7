package tenancy_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/servicewatch/servicewatch/internal/tenancy"
)

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
