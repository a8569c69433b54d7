package pacing

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestDemandsStretchesWhenOverBudget(t *testing.T) {
	const allowed = 10.0 / 11 // 10 calls per 11 s
	tests := []struct {
		name       string
		watches    int
		every      time.Duration
		wantFactor float64
	}{
		{"30 watches at 5m fit: 0.2 calls/s of 0.91", 30, 5 * time.Minute, 1},
		{"30 watches at 30s ask 2 calls/s: stretched by 2.2", 30, 30 * time.Second, 2.2},
		{"one watch alone at 30s fits", 1, 30 * time.Second, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newDemands[types.NamespacedName, read]()
			var factor float64
			for i := range tt.watches {
				factor = b.Note(types.NamespacedName{Namespace: "ns", Name: fmt.Sprint(i)}, tt.every, uint64(i),
					[]Demand[read]{{Budget: "key-1", Label: "key-1", Allowed: allowed, Reads: serviceReads(fmt.Sprint(i))}})
			}
			if math.Abs(factor-tt.wantFactor) > 0.01 {
				t.Errorf("factor = %.3f, want %.3f", factor, tt.wantFactor)
			}
			// The stretched demand fits the budget.
			if got := float64(tt.watches*2) / Stretched(tt.every, factor).Seconds(); got > allowed+1e-9 {
				t.Errorf("stretched demand %.3f calls/s is over the budget's %.3f", got, allowed)
			}
		})
	}
}

func TestDemandsForgetsAndSeparatesBudgets(t *testing.T) {
	b := newDemands[types.NamespacedName, read]()
	key := func(i int) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: fmt.Sprint(i)} }
	for i := range 20 {
		b.Note(key(i), 30*time.Second, uint64(i), []Demand[read]{{Budget: "busy", Label: "busy", Allowed: 1, Reads: serviceReads(fmt.Sprint(i))}})
	}
	if f := b.Note(key(100), 30*time.Second, 100, []Demand[read]{{Budget: "quiet", Label: "quiet", Allowed: 1, Reads: serviceReads("100")}}); f != 1 {
		t.Errorf("a watch on another key is stretched by %v", f)
	}
	if r := ratiosOf(b)["busy"]; math.Abs(r.Ratio-20*2/30.0) > 1e-9 {
		t.Errorf("busy ratio = %v", r)
	}
	for i := range 20 {
		b.Forget(key(i))
	}
	if _, ok := ratiosOf(b)["busy"]; ok {
		t.Error("a budget with no watches left is still reported")
	}
	// Noting a watch again replaces, never adds to, what it asked.
	b.Note(key(100), 30*time.Second, 100, []Demand[read]{{Budget: "quiet", Label: "quiet", Allowed: 1, Reads: serviceReads("100")}})
	if r := ratiosOf(b)["quiet"]; math.Abs(r.Ratio-2/30.0) > 1e-9 {
		t.Errorf("quiet ratio = %v after noting the same watch twice", r)
	}
}

// serviceReads are the two list reads of a service of its own.
func serviceReads(service string) []read {
	return []read{{kind: "pipes", service: service}, {kind: "reverse_private_endpoints", service: service}}
}

// Watches that make a read together ask for it once; the same read made at
// other moments (another interval, another phase group) is asked for again.
func TestDemandsCountsSharedReadsOnce(t *testing.T) {
	const allowed = 10.0 / 11
	alert := func(id string) read { return read{kind: "alert", service: id} }
	type watch struct {
		every time.Duration
		group uint64
		reads []read
		// acrossGroups: the reads are a list every group reuses.
		acrossGroups bool
	}
	same := func(n int, w watch) []watch {
		out := make([]watch, n)
		for i := range out {
			out[i] = w
		}
		return out
	}
	tests := []struct {
		name       string
		watches    []watch
		wantCalls  float64 // per second
		wantFactor float64
	}{
		{"10 watches of one service at 30s ask 2 calls per 30s", same(10, watch{every: 30 * time.Second, group: 1, reads: serviceReads("a")}), 2.0 / 30, 1},
		{"30 watches of one service at 30s fit where 30 services need 2.2x",
			same(30, watch{every: 30 * time.Second, group: 1, reads: serviceReads("a")}), 2.0 / 30, 1},
		{"one service at two intervals: each interval reads for itself",
			append(same(5, watch{every: 30 * time.Second, group: 1, reads: serviceReads("a")}), same(5, watch{every: time.Minute, group: 1, reads: serviceReads("a")})...), 2.0/30 + 2.0/60, 1},
		{"one alert, two services: the groups read it at their own phases",
			[]watch{{30 * time.Second, 1, []read{alert("x")}, false}, {30 * time.Second, 2, []read{alert("x")}, false}, {30 * time.Second, 2, []read{alert("x")}, false}}, 2.0 / 30, 1},
		{"one alert list, 100 groups: a list reused across groups is read once per interval",
			same(100, watch{30 * time.Second, 7, []read{{kind: "alert-list", service: "host"}}, true}), 1.0 / 30, 1},
		{"two alerts, one group: an alert named twice is read once",
			[]watch{{30 * time.Second, 1, []read{alert("x"), alert("y")}, false}, {30 * time.Second, 1, []read{alert("y"), alert("x")}, false}}, 2.0 / 30, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newDemands[types.NamespacedName, read]()
			var factor float64
			for i, w := range tt.watches {
				if w.acrossGroups {
					w.group = uint64(i) // each its own service
				}
				factor = b.Note(types.NamespacedName{Namespace: "ns", Name: fmt.Sprint(i)}, w.every, w.group,
					[]Demand[read]{{Budget: "key-1", Label: "key-1", Allowed: allowed, Reads: w.reads, AcrossGroups: w.acrossGroups}})
			}
			if got := ratiosOf(b)["key-1"].Ratio * allowed; math.Abs(got-tt.wantCalls) > 1e-9 {
				t.Errorf("demand = %.4f calls/s, want %.4f", got, tt.wantCalls)
			}
			if math.Abs(factor-tt.wantFactor) > 0.01 {
				t.Errorf("factor = %.3f, want %.3f", factor, tt.wantFactor)
			}
			for i := range tt.watches {
				b.Forget(types.NamespacedName{Namespace: "ns", Name: fmt.Sprint(i)})
			}
			if len(ratiosOf(b)) != 0 {
				t.Errorf("budgets left after every watch was forgotten: %v", ratiosOf(b))
			}
		})
	}
}

// read stands for the controller's read keys.
type read struct{ kind, service string }

// ratiosOf is each budget's demand ratio by budget.
func ratiosOf[K, R comparable](b *demands[K, R]) map[string]Ratio {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]Ratio{}
	for budget, use := range b.budgets {
		out[budget] = Ratio{API: use.api, Label: use.label, Ratio: use.ratio()}
	}
	return out
}

// Budgets are kept by their full digest: two credentials whose short
// fingerprints (the metric label) collide are two budgets, and one's
// watches never stretch the other's.
func TestDemandsKeepCollidingFingerprintsApart(t *testing.T) {
	b := newDemands[types.NamespacedName, read]()
	key := func(i int) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: fmt.Sprint(i)} }
	for i := range 20 { // the attacker's 20 watches ask 40 calls per 30 s of a budget allowing 1/s
		b.Note(key(i), 30*time.Second, uint64(i), []Demand[read]{{Budget: "attacker-digest", Label: "abcdef012345", Allowed: 1, Reads: serviceReads(fmt.Sprint(i))}})
	}
	if f := b.Note(key(100), 30*time.Second, 100, []Demand[read]{{Budget: "victim-digest", Label: "abcdef012345", Allowed: 1, Reads: serviceReads("100")}}); f != 1 {
		t.Errorf("the victim is stretched by %v by a budget that shares only its fingerprint", f)
	}
	got := ratiosOf(b)
	if len(got) != 2 || math.Abs(got["victim-digest"].Ratio-2/30.0) > 1e-9 {
		t.Errorf("budgets = %v, want the victim's alone at 2/30", got)
	}
	// The label shows the higher of the two; it goes only with both.
	changes := b.TakeChanges()
	if len(changes) != 1 || changes[0].Gone || math.Abs(changes[0].Ratio-40/30.0) > 1e-9 {
		t.Errorf("changes = %v, want the label at 40/30", changes)
	}
	for i := range 20 {
		b.Forget(key(i))
	}
	if changes := b.TakeChanges(); len(changes) != 1 || changes[0].Gone || math.Abs(changes[0].Ratio-2/30.0) > 1e-9 {
		t.Errorf("after the attacker left: changes = %v, want the label at the victim's 2/30", changes)
	}
	b.Forget(key(100))
	if changes := b.TakeChanges(); len(changes) != 1 || !changes[0].Gone {
		t.Errorf("after every watch left: changes = %v, want the label gone", changes)
	}
}

// CallsOf adds the calls of every demand on one budget, wherever they come
// in the watch's demands: the calls a reservation holds are those of the
// whole sync on that budget; each with the budget's rate.
func TestDemandsCallsOfAddsEveryDemandOfABudget(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "w"}
	tests := []struct {
		name    string
		demands []Demand[read]
		want    []budgetCalls
	}{{
		name:    "one demand",
		demands: []Demand[read]{{Budget: "key", Namespace: "ns", Reads: serviceReads("s")}},
		want:    []budgetCalls{{budget: "key", namespace: "ns", calls: 2, rate: 1}},
	}, {
		name: "the management key's pipes and endpoints, then its alerts",
		demands: []Demand[read]{
			{Budget: "key", Namespace: "ns", Reads: serviceReads("s")},
			{Budget: "key", Namespace: "ns", Reads: []read{{kind: "alerts", service: "s"}}},
		},
		want: []budgetCalls{{budget: "key", namespace: "ns", calls: 3, rate: 1}},
	}, {
		name: "a budget asked again after another",
		demands: []Demand[read]{
			{Budget: "key", Namespace: "ns", Reads: serviceReads("s")},
			{Budget: "token", Namespace: "ns", Reads: []read{{kind: "alert-list"}}},
			{Budget: "key", Namespace: "ns", Reads: []read{{kind: "alerts", service: "s"}}},
		},
		want: []budgetCalls{{budget: "key", namespace: "ns", calls: 3, rate: 1}, {budget: "token", namespace: "ns", calls: 1, rate: 1}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newDemands[types.NamespacedName, read]()
			for i := range tt.demands {
				tt.demands[i].Allowed = 1
			}
			b.Note(key, 30*time.Second, 1, tt.demands)
			if got := b.CallsOf(key); !slices.Equal(got, tt.want) {
				t.Errorf("CallsOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}
