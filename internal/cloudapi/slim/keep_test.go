package slim

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
)

// testItem is a list item whose encoded size a test chooses by its padding.
type testItem struct {
	ID  string `json:"id,omitempty"`
	Pad string `json:"pad,omitempty"`
}

func testItemID(i *testItem) string { return i.ID }

// item returns an item with id whose share of a list (encoding plus comma)
// is size bytes.
func item(t testing.TB, id string, size int) testItem {
	t.Helper()
	it := testItem{ID: id}
	if size == encodedShare(t, it) {
		return it
	}
	it.Pad = "x"
	it.Pad = strings.Repeat("x", max(1, 1+size-encodedShare(t, it)))
	if got := encodedShare(t, it); got != size {
		t.Fatalf("item %q of size %d cannot be built (got %d)", id, size, got)
	}
	return it
}

func encodedShare(t testing.TB, it testItem) int {
	t.Helper()
	b, _ := json.Marshal(it) // strings and ints only: it cannot fail
	return len(b) + 1
}

// keepAll runs items through a keeper with budget and returns what it kept,
// what it counted, and the ids Each saw.
func keepAll(t testing.TB, items []testItem, budget int) (kept []testItem, total int, each []string) {
	t.Helper()
	k := NewKeeper(testItemID, budget, nil, func(it *testItem) { each = append(each, it.ID) })
	for _, it := range items {
		if err := k.Add(&it, lenient.Report{}); err != nil {
			t.Fatal(err)
		}
		// Dropped encodings are let go: the arena stays within twice what
		// is kept, plus some slack.
		if len(k.arena) > 2*k.used+4096 {
			t.Fatalf("arena holds %d bytes for %d bytes kept", len(k.arena), k.used)
		}
	}
	kept, err := k.Items()
	if err != nil {
		t.Fatal(err)
	}
	return kept, k.total, each
}

// sortThenCut is the plain statement of what a keeper keeps: the distinct
// items (of those sharing an id, the one whose encoding sorts first, counting
// the largest share of them; items without an id are all distinct), ordered
// by id with those without one first by a hash of their encoding, cut to the
// longest prefix that fits budget.
func sortThenCut(t testing.TB, items []testItem, budget int) []testItem {
	t.Helper()
	type distinctItem struct {
		item    testItem
		enc     string
		content uint64
		share   int
	}
	byID := map[string]int{}
	distinct := []distinctItem{}
	for _, it := range items {
		b, _ := json.Marshal(it) // strings only: it cannot fail
		d := distinctItem{item: it, enc: string(b), share: encodedShare(t, it)}
		i, seen := byID[it.ID]
		if it.ID == "" || !seen {
			d.content = contentHash(append(b, '\n'))
			byID[it.ID] = len(distinct)
			distinct = append(distinct, d)
			continue
		}
		d.share = max(d.share, distinct[i].share)
		if d.enc < distinct[i].enc {
			distinct[i].item, distinct[i].enc = d.item, d.enc
		}
		distinct[i].share = d.share
	}
	slices.SortStableFunc(distinct, func(a, b distinctItem) int {
		return cmp.Or(cmp.Compare(a.item.ID, b.item.ID), cmp.Compare(a.content, b.content))
	})
	used := 0
	out := []testItem{}
	for _, d := range distinct {
		if used += max(d.share, MinItemCharge); budget > 0 && used > budget {
			break
		}
		out = append(out, d.item)
	}
	return out
}

func ids(items []testItem) string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = cmp.Or(it.ID, "-")
	}
	return strings.Join(out, " ")
}

func TestKeeperKeepsTheLongestFittingPrefixByID(t *testing.T) {
	tests := []struct {
		name   string
		items  func(t *testing.T) []testItem
		budget int
		want   string // kept ids in order, "-" for no id
		total  int
	}{
		// Sizes are at least MinItemCharge, so each item counts its size.
		{"everything when the budget is zero", func(t *testing.T) []testItem {
			return []testItem{item(t, "c", 120), item(t, "a", 120), item(t, "b", 120)}
		}, 0, "a b c", 3},
		{"ordered by id, cut at the first that does not fit", func(t *testing.T) []testItem {
			return []testItem{item(t, "c", 120), item(t, "a", 120), item(t, "b", 120)}
		}, 260, "a b", 3},
		{"a smaller item after one that did not fit stays out", func(t *testing.T) []testItem {
			// a and b do not fit together; c would fit beside a, but the
			// prefix a, b, c has no place for it without b.
			return []testItem{item(t, "a", 120), item(t, "b", 240), item(t, "c", 88)}
		}, 320, "a", 3},
		{"an item larger than the budget ends the prefix", func(t *testing.T) []testItem {
			return []testItem{item(t, "b", 600), item(t, "a", 120), item(t, "c", 120)}
		}, 320, "a", 3},
		{"an exact fit is kept", func(t *testing.T) []testItem {
			return []testItem{item(t, "b", 100), item(t, "a", 100)}
		}, 200, "a b", 2},
		{"items without an id lead, ordered by content, and never merge", func(t *testing.T) []testItem {
			return []testItem{item(t, "b", 120), {Pad: "1"}, item(t, "a", 120), {Pad: "2"}, {Pad: "1"}}
		}, 0, "- - - a b", 5},
		{"of a duplicated id, the encoding that sorts first wins and counts once", func(t *testing.T) []testItem {
			return []testItem{item(t, "a", 160), item(t, "b", 120), item(t, "a", 120)}
		}, 0, "a b", 2},
		{"a duplicated id counts its largest occurrence", func(t *testing.T) []testItem {
			// a of 88 bytes would fit beside b; a of 240 does not.
			return []testItem{item(t, "a", 88), item(t, "b", 120), item(t, "a", 240)}
		}, 320, "a", 2},
		{"a duplicate of a dropped item stays dropped", func(t *testing.T) []testItem {
			return []testItem{item(t, "a", 120), item(t, "b", 240), item(t, "b", 88)}
		}, 320, "a", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items := tt.items(t)
			kept, total, _ := keepAll(t, items, tt.budget)
			if got := ids(kept); got != tt.want || total != tt.total {
				t.Errorf("kept %q of %d, want %q of %d", got, total, tt.want, tt.total)
			}
			if want := sortThenCut(t, items, tt.budget); !reflect.DeepEqual(kept, want) {
				t.Errorf("kept %q, sort-then-cut keeps %q", ids(kept), ids(want))
			}
		})
	}
}

// The keeper streams; sorting everything and cutting is the reference. On
// random lists with duplicates, items without an id and random sizes, both
// must keep the same items in the same order, and so must the same list
// shuffled: what is kept depends on the items, not on their order.
func TestKeeperMatchesSortThenCut(t *testing.T) {
	for seed := range uint64(500) {
		rng := rand.New(rand.NewPCG(seed, 1))
		n := rng.IntN(40)
		if seed%5 == 0 {
			n *= 100 // enough drops to compact the arena
		}
		items := make([]testItem, n)
		whole := 0
		for i := range items {
			id := ""
			if rng.IntN(5) > 0 {
				id = fmt.Sprintf("id-%04d", rng.IntN(max(30, n)))
			}
			items[i] = item(t, id, 30+rng.IntN(60))
			items[i].Pad += fmt.Sprint(i % 10) // tells duplicates apart
			whole += encodedShare(t, items[i])
		}
		budget := rng.IntN(whole + 2)
		if seed%5 == 0 {
			budget /= 10 // many pushes that displace kept items
		}
		kept, total, each := keepAll(t, items, budget)
		want := sortThenCut(t, items, budget)
		if !reflect.DeepEqual(kept, want) {
			t.Fatalf("seed %d, budget %d: kept %q, want %q", seed, budget, ids(kept), ids(want))
		}
		if all := sortThenCut(t, items, 0); total != len(all) || len(each) != total {
			t.Fatalf("seed %d: Total %d and %d calls of Each, want %d distinct items", seed, total, len(each), len(all))
		}
		rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
		if shuffled, _, _ := keepAll(t, items, budget); !reflect.DeepEqual(shuffled, kept) {
			t.Fatalf("seed %d, budget %d: shuffled, kept %q, in response order %q", seed, budget, ids(shuffled), ids(kept))
		}
	}
}

// The same items in another order keep the same list: a cloud that returns
// them in any order makes no change to the status, and no write.
func TestKeeperDuplicatesAreChosenByContentNotOrder(t *testing.T) {
	first, second := testItem{ID: "a", Pad: "running"}, testItem{ID: "a", Pad: "stopped"}
	for _, budget := range []int{0, 200} {
		forward, _, _ := keepAll(t, []testItem{first, item(t, "b", 100), second, {Pad: "x"}, {Pad: "y"}}, budget)
		backward, _, _ := keepAll(t, []testItem{{Pad: "y"}, second, item(t, "b", 100), first, {Pad: "x"}}, budget)
		if !reflect.DeepEqual(forward, backward) {
			t.Errorf("budget %d: kept %+v in one order, %+v in the other", budget, forward, backward)
		}
		if len(forward) < 3 || forward[2] != first {
			t.Errorf("budget %d: kept %+v, want the no-id items, then %+v (its encoding sorts first)", budget, forward, first)
		}
	}
}

// Each sees every distinct item once, in response order, kept or not.
func TestKeeperEachSeesEveryDistinctItemInResponseOrder(t *testing.T) {
	items := []testItem{item(t, "c", 30), item(t, "a", 90), {}, item(t, "c", 30), item(t, "b", 30)}
	_, _, each := keepAll(t, items, 45)
	if got, want := strings.Join(each, ","), "c,a,,b"; got != want {
		t.Errorf("Each saw %q, want %q", got, want)
	}
}

func BenchmarkKeeperTinyItems(b *testing.B) {
	items := make([]testItem, 100_000)
	for i := range items {
		items[i] = testItem{ID: fmt.Sprintf("%08x", uint32(i)*2654435761)}
	}
	b.ReportAllocs()
	for b.Loop() {
		keepAll(b, items, 800<<10)
	}
}

// contentHash is FNV-1a, as hash/fnv computes it: the order of items
// without an id does not change with the way it is computed.
func TestContentHashIsFNV1a(t *testing.T) {
	for _, enc := range []string{"", "{}\n", `{"name":"p","state":"Running"}` + "\n"} {
		h := fnv.New64a()
		h.Write([]byte(enc))
		if got, want := contentHash([]byte(enc)), h.Sum64(); got != want {
			t.Errorf("contentHash(%q) = %x, want %x", enc, got, want)
		}
	}
}

// A keeper with a rank keeps the lowest rank first: of items that do not
// all fit, those that need attention (rank 0) are kept before any other,
// each group by id, and what is kept is listed by id, whatever the rank
// and whatever order the items came in.
func TestKeeperKeepsTheLowestRankFirst(t *testing.T) {
	const size = 100
	tests := map[string]struct {
		ids     []string
		failing string // ids of rank 0, as one string of letters
		fit     int    // items the budget holds (and half of one more)
		want    string
	}{
		"everything fits":            {ids: strings.Split("abcdef", ""), failing: "ef", fit: 6, want: "abcdef"},
		"no failing: the id prefix":  {ids: strings.Split("abcdef", ""), fit: 3, want: "abc"},
		"failing last in id order":   {ids: strings.Split("abcdef", ""), failing: "ef", fit: 3, want: "aef"},
		"failing scattered":          {ids: strings.Split("abcdef", ""), failing: "bdf", fit: 4, want: "abdf"},
		"more failing than fit":      {ids: strings.Split("abcdef", ""), failing: "cdef", fit: 2, want: "cd"},
		"only failing fit, exactly":  {ids: strings.Split("abcdef", ""), failing: "ace", fit: 3, want: "ace"},
		"everything failing":         {ids: strings.Split("abcdef", ""), failing: "abcdef", fit: 2, want: "ab"},
		"nothing fits":               {ids: strings.Split("abcdef", ""), failing: "f", fit: 0, want: ""},
		"a duplicate ranks as first": {ids: strings.Split("abcdefa", ""), failing: "f", fit: 2, want: "af"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			rank := func(it *testItem) int {
				if strings.Contains(tt.failing, it.ID) {
					return 0
				}
				return 1
			}
			items := make([]testItem, len(tt.ids))
			for i, id := range tt.ids {
				items[i] = item(t, id, size)
			}
			rng := rand.New(rand.NewPCG(7, uint64(len(name))))
			for round := range 6 {
				k := NewKeeper(testItemID, tt.fit*size+size/2, nil, nil).WithRank(rank)
				for _, it := range items {
					if err := k.Add(&it, lenient.Report{}); err != nil {
						t.Fatal(err)
					}
				}
				kept, err := k.Items()
				if err != nil {
					t.Fatal(err)
				}
				got := ""
				for _, it := range kept {
					got += it.ID
				}
				if got != tt.want {
					t.Fatalf("round %d (items in order %v): kept %q, want %q", round, tt.ids, got, tt.want)
				}
				if !strings.Contains(name, "duplicate") { // a duplicate ranks as its first occurrence: order matters
					rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
				}
			}
		})
	}
}

// keepSlimmed runs pipes through a slimming keeper of budget, as the
// client builds it, and returns what it keeps, as JSON.
func keepSlimmed(t *testing.T, pipes []swv1.Pipe, budget int) string {
	t.Helper()
	raw, err := json.Marshal(keepSlimmedItems(t, pipes, budget))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func keepSlimmedItems(t *testing.T, pipes []swv1.Pipe, budget int) []swv1.Pipe {
	t.Helper()
	s := New[swv1.Pipe](Pipes)
	k := NewKeeper(func(p *swv1.Pipe) string { return *p.ID }, budget, bound.GoSize[swv1.Pipe], nil).
		WithSlim(s.Item, nil).WithIdentities(s.BareCharge, s.IdentityCharge, s.Identity)
	for i := range pipes {
		if err := k.Add(&pipes[i], lenient.Report{}); err != nil {
			t.Fatal(err)
		}
	}
	items, err := k.Items()
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// The same pipes in any order keep the same, slimmed the same: the cap is
// set by the items, not by the order they came in, so an unchanged cloud
// that reorders its answer does not change status.
func TestSlimmedKeepIsTheSameInAnyOrder(t *testing.T) {
	pipes := benchPipes(60)
	for i, mappings := range map[int]int{7: 4000, 30: 900, 44: 60} {
		for m := range mappings {
			pipes[i].Source.Postgres.TableMappings = append(pipes[i].Source.Postgres.TableMappings, swv1.PostgresTableMapping{
				SourceTable: ptr.To(fmt.Sprintf("events_partition_%06d", m))})
		}
	}
	for _, budget := range []int{800 << 10, 300 << 10, 100 << 10} {
		want := keepSlimmed(t, pipes, budget)
		rng := rand.New(rand.NewPCG(1, uint64(budget)))
		for range 8 {
			shuffled := append([]swv1.Pipe(nil), pipes...)
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			if got := keepSlimmed(t, shuffled, budget); got != want {
				t.Fatalf("budget %d: another order kept %d bytes, the first %d", budget, len(got), len(want))
			}
		}
	}
}

// mediumPipes are n Postgres pipes of about 1.5 kB of JSON each (22 table
// mappings, about 4 kB decoded), in reverse id order: far over the 1 KiB
// floor, about 500 bytes each cut to its identity.
func mediumPipes(n int) []swv1.Pipe {
	pipes := make([]swv1.Pipe, n)
	for i := range pipes {
		p := swv1.Pipe{ID: ptr.To(fmt.Sprintf("p-%05d", n-i)), Name: ptr.To(fmt.Sprintf("orders %d", i)), State: ptr.To("Running"),
			SourceKind: ptr.To("postgres"), Source: &swv1.PipeSource{Postgres: &swv1.PostgresSource{}}}
		for m := range 22 {
			p.Source.Postgres.TableMappings = append(p.Source.Postgres.TableMappings, swv1.PostgresTableMapping{
				SourceTable: ptr.To(fmt.Sprintf("table_%05d", m)), TargetTable: ptr.To(fmt.Sprintf("public_table_%05d", m))})
		}
		pipes[i] = p
	}
	return pipes
}

// A list of many medium pipes that does not fit at the 1 KiB floor keeps
// every pipe, by identity, when the identities fit: no whole pipe goes,
// whatever the order. When they do not fit either, whole pipes go from the
// end of the id order only until the identities of the rest fit (issue 39:
// it used to keep a prefix at 1 KiB, none by identity, half as many).
func TestKeeperCutsToIdentitiesBeforeWholeItemsGo(t *testing.T) {
	pipes := mediumPipes(3000)
	tests := map[string]struct {
		budget int
		// identities: every pipe is kept, some cut to their identity.
		identities bool
	}{
		"identities fit: all 3000 kept":                {budget: 2 << 20, identities: true},
		"identities do not fit: a prefix, by identity": {budget: 512 << 10},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			kept := keepSlimmedItems(t, pipes, tt.budget)
			bare, used := 0, 0
			for i, p := range kept {
				used += max(bound.GoSize(&p), MinItemCharge)
				if p.Source == nil {
					bare++
				}
				if want := fmt.Sprintf("p-%05d", i+1); *p.ID != want || p.Name == nil || *p.State != "Running" || *p.SourceKind != "postgres" {
					t.Fatalf("item %d: %+v; want %s with its identity", i, p, want)
				}
			}
			if used > tt.budget {
				t.Errorf("kept %d pipes charged %d, over the budget %d", len(kept), used, tt.budget)
			}
			switch {
			case tt.identities && (len(kept) != len(pipes) || bare == 0):
				t.Errorf("kept %d of %d pipes, %d cut to their identity; want all, by identity", len(kept), len(pipes), bare)
			case !tt.identities && (bare == 0 || len(kept) == len(pipes) || len(kept) <= tt.budget/(1<<10)):
				t.Errorf("kept %d of %d pipes, %d cut to their identity; want a prefix of more pipes than fit at 1 KiB, by identity", len(kept), len(pipes), bare)
			}
			rng := rand.New(rand.NewPCG(2, uint64(tt.budget)))
			want := keepSlimmed(t, pipes, tt.budget)
			for range 2 {
				shuffled := slices.Clone(pipes)
				rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
				if got := keepSlimmed(t, shuffled, tt.budget); got != want {
					t.Fatalf("another order kept %d bytes, the first %d", len(got), len(want))
				}
			}
		})
	}
}

// A list whose pipes do not fit even by identity keeps every failing pipe
// (ranked first) and as many pipes as fit by identity: far more than fit
// at the 1 KiB floor, listed by id.
func TestSlimmedKeepPacksIdentitiesFailingFirst(t *testing.T) {
	const n, budget = 6000, 800 << 10
	pipes := make([]swv1.Pipe, n)
	failing := 0
	for i := range pipes {
		state := "Running"
		if i >= n-1000 { // the last in id order
			state, failing = "Failed", failing+1
		}
		p := swv1.Pipe{ID: ptr.To(fmt.Sprintf("p-%05d", i)), Name: ptr.To(fmt.Sprintf("orders %d", i)), State: ptr.To(state),
			SourceKind: ptr.To("postgres"), Source: &swv1.PipeSource{Postgres: &swv1.PostgresSource{}}}
		for m := range 22 {
			p.Source.Postgres.TableMappings = append(p.Source.Postgres.TableMappings, swv1.PostgresTableMapping{
				SourceTable: ptr.To(fmt.Sprintf("table_%05d", m)), TargetTable: ptr.To(fmt.Sprintf("public_table_%05d", m))})
		}
		pipes[i] = p
	}
	s := New[swv1.Pipe](Pipes)
	k := NewKeeper(func(p *swv1.Pipe) string { return *p.ID }, budget, bound.GoSize[swv1.Pipe], nil).
		WithSlim(s.Item, nil).WithIdentities(s.BareCharge, s.IdentityCharge, s.Identity).
		WithRank(func(p *swv1.Pipe) int { return map[bool]int{true: 0, false: 1}[p.NeedsAttention()] })
	for i := range pipes {
		if err := k.Add(&pipes[i], lenient.Report{}); err != nil {
			t.Fatal(err)
		}
	}
	kept, err := k.Items()
	if err != nil {
		t.Fatal(err)
	}
	keptFailing, bare := 0, 0
	for i, p := range kept {
		if p.NeedsAttention() {
			keptFailing++
		}
		if p.Source == nil {
			bare++
		}
		if i > 0 && *kept[i-1].ID >= *p.ID {
			t.Fatalf("kept pipes not in id order at %d: %s then %s", i, *kept[i-1].ID, *p.ID)
		}
	}
	t.Logf("kept %d of %d pipes, %d by identity, %d of %d failing", len(kept), n, bare, keptFailing, failing)
	if keptFailing != failing || len(kept) < 2*budget/(1<<10) || bare == 0 {
		t.Errorf("kept %d pipes (%d by identity), %d of %d failing; want every failing one and over %d pipes",
			len(kept), bare, keptFailing, failing, 2*budget/(1<<10))
	}
	if size := bound.Charge(&kept); size > budget+budget/10 {
		t.Errorf("kept %d bytes for a budget of %d", size, budget)
	}
}

// benchPipes are n Postgres pipes of 20 table mappings each (about 2.5 kB of
// JSON, 7 kB decoded), in reverse id order, the order that makes a keeper
// work hardest: every pipe arrives before the cut.
func benchPipes(n int) []swv1.Pipe {
	pipes := make([]swv1.Pipe, n)
	for i := range pipes {
		p := swv1.Pipe{ID: ptr.To(fmt.Sprintf("p-%06d", n-i)), Name: ptr.To(fmt.Sprintf("pipe %d", i)), State: ptr.To("Running"),
			SourceKind: ptr.To("postgres"), Source: &swv1.PipeSource{Postgres: &swv1.PostgresSource{Host: ptr.To("db")}}}
		for m := range 20 {
			p.Source.Postgres.TableMappings = append(p.Source.Postgres.TableMappings, swv1.PostgresTableMapping{
				SourceTable: ptr.To(fmt.Sprintf("table_with_a_name_%03d", m)), TargetTable: ptr.To(fmt.Sprintf("table_with_a_name_%03d", m))})
		}
		pipes[i] = p
	}
	return pipes
}

// The keeper before issue 28 (a prefix of whole items: no WithSlim), after
// (big items slimmed before whole ones go) and with the identity step
// (WithIdentities), side by side on the same pipes and the default status
// budget.
func BenchmarkKeeperPipes(b *testing.B) {
	pipeID := func(p *swv1.Pipe) string { return *p.ID }
	oneBig := benchPipes(51)
	for m := range 4000 { // about 1 MB
		oneBig[25].Source.Postgres.TableMappings = append(oneBig[25].Source.Postgres.TableMappings, swv1.PostgresTableMapping{
			SourceTable: ptr.To(fmt.Sprintf("events_partition_with_a_long_name_%06d", m)), TargetTable: ptr.To(fmt.Sprintf("events_partition_%06d", m))})
	}
	for _, list := range []struct {
		name  string
		pipes []swv1.Pipe
	}{{"50", benchPipes(50)}, {"50+1MB", oneBig}, {"5000", benchPipes(5000)}, {"1500x1.5kB", mediumPipes(1500)}} {
		pipes := list.pipes
		// identities is the keeper as the client builds it since the
		// identity step; slim, the keeper without it, as before.
		for _, mode := range []string{"prefix", "slim", "identities"} {
			b.Run(mode+"/"+list.name, func(b *testing.B) {
				var last []swv1.Pipe
				fastest := time.Duration(math.MaxInt64)
				for b.Loop() {
					start := time.Now()
					k := NewKeeper(pipeID, 800<<10, bound.GoSize[swv1.Pipe], nil)
					switch s := New[swv1.Pipe](Pipes); mode {
					case "slim":
						k.WithSlim(s.Item, nil)
					case "identities":
						k.WithSlim(s.Item, nil).WithIdentities(s.BareCharge, s.IdentityCharge, s.Identity)
					}
					for i := range pipes {
						if err := k.Add(&pipes[i], lenient.Report{}); err != nil {
							b.Fatal(err)
						}
					}
					items, err := k.Items()
					if err != nil {
						b.Fatal(err)
					}
					fastest = min(fastest, time.Since(start))
					last = items
				}
				b.ReportMetric(float64(len(last)), "kept")
				// What a slower keeper buys: more of the list shown.
				b.ReportMetric(float64(len(benchJSON(b, last)))/1000, "kept-kB")
				// The fastest run is the one the machine's other load
				// disturbed least.
				b.ReportMetric(float64(fastest.Nanoseconds()), "min-ns/op")
			})
		}
	}
}

func benchJSON(b *testing.B, v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// Encoded keeps the items Items would give, in the same order, as their
// JSON alone (not the arena's encodings of the items slimmed or dropped on
// the way), and each Decode gives a copy of its own: watches that share a
// read each change theirs. For small items the encodings are a fraction of
// the items decoded, which is why a read holds them so until its write.
func TestEncodedHoldsWhatItemsGives(t *testing.T) {
	const n, budget = 400, 40 << 10
	pipes := make([]swv1.Pipe, n)
	for i := range pipes {
		pipes[i] = swv1.Pipe{ID: ptr.To(fmt.Sprintf("p%04d", n-i)), State: ptr.To("Running"),
			Source: &swv1.PipeSource{Postgres: &swv1.PostgresSource{}}}
	}
	keeper := func() *Keeper[swv1.Pipe] {
		k := NewKeeper(func(p *swv1.Pipe) string { return *p.ID }, budget, bound.GoSize[swv1.Pipe], nil)
		for i := range pipes {
			if err := k.Add(&pipes[i], lenient.Report{}); err != nil {
				t.Fatal(err)
			}
		}
		return k
	}
	want, err := keeper().Items()
	if err != nil {
		t.Fatal(err)
	}
	enc, err := keeper().Encoded()
	if err != nil {
		t.Fatal(err)
	}
	got, err := enc.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if enc.Len() != len(want) || !reflect.DeepEqual(got, want) {
		t.Fatalf("Encoded decodes to %d items, Items gives %d (equal: %v)", len(got), len(want), reflect.DeepEqual(got, want))
	}
	if len(want) == 0 || len(want) == n {
		t.Fatalf("kept %d of %d: the budget should keep some and not all", len(want), n)
	}
	got[0].State = ptr.To("Failed")
	again, err := enc.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if *again[0].State != "Running" {
		t.Error("a change to one Decode's items shows in the next Decode's")
	}
	decoded := 0
	for i := range want {
		decoded += bound.GoSize(&want[i])
	}
	if enc.Bytes()*3 > decoded {
		t.Errorf("the encodings take %d bytes, the items decoded %d: want under a third", enc.Bytes(), decoded)
	}
}
