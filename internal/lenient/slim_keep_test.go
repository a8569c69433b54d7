package lenient

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/slim"
)

// keepSlimmed runs pipes through a slimming keeper of budget and returns
// what it keeps, as JSON.
func keepSlimmed(t *testing.T, pipes []swv1.Pipe, budget int) string {
	t.Helper()
	k := NewKeeper(func(p *swv1.Pipe) string { return *p.ID }, budget, bound.GoSize[swv1.Pipe], nil).
		WithSlim(slim.New[swv1.Pipe](slim.Pipes).Item, nil)
	for i := range pipes {
		if err := k.Add(&pipes[i], Report{}); err != nil {
			t.Fatal(err)
		}
	}
	items, err := k.Items()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
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
