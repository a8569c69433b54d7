package accountcontroller_test

import (
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/accountcontroller"
)

func percent(p int32) *int32 { return &p }

func TestReserveIsTheAccountsOrTheFlags(t *testing.T) {
	for i, tc := range []struct {
		percent *int32
		want    float64
		set     bool
	}{
		{nil, 0, false},
		{percent(0), 0, true},
		{percent(50), 0.5, true},
		{percent(95), 0.9, true}, // the CRD refuses it; an old object is capped
	} {
		a := &swv1.ClusterCloudAccount{Spec: swv1.ClusterCloudAccountSpec{ReservedPercent: tc.percent}}
		if got, set := accountcontroller.AccountReserve(a); got != tc.want || set != tc.set {
			t.Errorf("case %d: reserve %v (set %v), want %v (%v)", i, got, set, tc.want, tc.set)
		}
	}
}

func TestSharesFollowTheNamespaceWeights(t *testing.T) {
	a := &swv1.ClusterCloudAccount{Spec: swv1.ClusterCloudAccountSpec{NamespaceWeights: []swv1.NamespaceWeight{
		{Namespace: "heavy", Weight: 3}, {Namespace: "absent", Weight: 5},
	}}}
	for _, tc := range []struct {
		namespaces []string
		want       map[string]int32
	}{
		{[]string{"heavy", "light"}, map[string]int32{"heavy": 75, "light": 25}},
		{[]string{"a", "b", "c"}, map[string]int32{"a": 33, "b": 33, "c": 33}},
		{[]string{"light"}, map[string]int32{"light": 100}},
		{nil, map[string]int32{}},
	} {
		got := accountcontroller.SharePercents(a, tc.namespaces)
		if len(got) != len(tc.want) {
			t.Errorf("%v: shares %v, want %v", tc.namespaces, got, tc.want)
		}
		for ns, want := range tc.want {
			if got[ns] != want {
				t.Errorf("%v: %s's share %d%%, want %d%%", tc.namespaces, ns, got[ns], want)
			}
		}
	}
	if w := accountcontroller.NamespaceWeight(a, "light"); w != 1 {
		t.Errorf("a namespace not listed weighs %d, want 1", w)
	}
	if w := accountcontroller.NamespaceWeights(a); w["heavy"] != 3 || len(w) != 2 {
		t.Errorf("weights %v, want heavy 3, absent 5", w)
	}
}
