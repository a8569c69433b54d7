package main

import (
	"slices"
	"testing"
	"time"
)

func TestWithPipesInLeavesTheOriginalAlone(t *testing.T) {
	original := cloudData(makeTenants("t", 1))
	before := pipeStatesIn(original.Organizations[defaultOrg][distinctService(0)])
	failed := withPipesIn(original, "Failed")
	for _, i := range []int{0, distinctServices - 1} {
		got := pipeStatesIn(failed.Organizations[defaultOrg][distinctService(i)])
		if len(got) == 0 || slices.ContainsFunc(got, func(s string) bool { return s != "Failed" }) {
			t.Errorf("service %d: pipe states %v, want all Failed", i, got)
		}
	}
	if got := pipeStatesIn(original.Organizations[defaultOrg][distinctService(0)]); !slices.Equal(got, before) {
		t.Errorf("the original's pipes changed to %v, were %v", got, before)
	}
	if !slices.Contains(before, "Running") {
		t.Errorf("the default service has no Running pipe to change: %v", before)
	}
	if len(failed.MoreManagementKeys) != 1 {
		t.Errorf("the tenants' keys were lost: %v", failed.MoreManagementKeys)
	}
}

func TestDelaysAfter(t *testing.T) {
	changed := time.Unix(1000, 0)
	at := func(s int) time.Time { return changed.Add(time.Duration(s) * time.Second) }
	for _, tc := range []struct {
		name        string
		shown       []time.Time
		n           int
		median, all time.Duration
	}{
		{"all shown", []time.Time{at(30), at(10), at(20)}, 3, 20 * time.Second, 30 * time.Second},
		{"one missing", []time.Time{at(30), at(10), at(20)}, 4, 30 * time.Second, 0},
		{"under half", []time.Time{at(5)}, 4, 0, 0},
		{"none", nil, 2, 0, 0},
	} {
		median, all := delaysAfter(changed, tc.shown, tc.n)
		if median != tc.median || all != tc.all {
			t.Errorf("%s: median %v, all %v; want %v, %v", tc.name, median, all, tc.median, tc.all)
		}
	}
}
