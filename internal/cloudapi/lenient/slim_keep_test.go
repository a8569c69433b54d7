package lenient

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/cloudapi/slim"
)

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
	s := slim.New[swv1.Pipe](slim.Pipes)
	k := NewKeeper(func(p *swv1.Pipe) string { return *p.ID }, budget, bound.GoSize[swv1.Pipe], nil).
		WithSlim(s.Item, nil).WithIdentities(s.BareCharge, s.IdentityCharge, s.Identity)
	for i := range pipes {
		if err := k.Add(&pipes[i], Report{}); err != nil {
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
	s := slim.New[swv1.Pipe](slim.Pipes)
	k := NewKeeper(func(p *swv1.Pipe) string { return *p.ID }, budget, bound.GoSize[swv1.Pipe], nil).
		WithSlim(s.Item, nil).WithIdentities(s.BareCharge, s.IdentityCharge, s.Identity).
		WithRank(func(p *swv1.Pipe) int { return map[bool]int{true: 0, false: 1}[p.NeedsAttention()] })
	for i := range pipes {
		if err := k.Add(&pipes[i], Report{}); err != nil {
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
