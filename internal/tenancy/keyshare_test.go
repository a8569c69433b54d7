package tenancy_test

import (
	"math"
	"testing"

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
