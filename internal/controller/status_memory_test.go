package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"runtime"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
	"github.com/servicewatch/servicewatch/internal/testsupport/benchmem"
)

// worstShapes are the lists a cloud can fill a status with that cost the
// most decoded: as many of the tiniest items as the client keeps (it charges
// each at least 64 bytes against the status budget: cloudapi's
// minItemCharge), the items empty or made of empty nested objects.
func worstShapes() []struct {
	name    string
	results func() []partResult
} {
	clientKeeps := func(item string) int { return DefaultStatusSizeLimit / max(len(item)+1, 64) }
	pipes := func(item string) func() []partResult {
		return func() []partResult {
			list := make([]swv1.Pipe, clientKeeps(item))
			for i := range list {
				if err := json.Unmarshal([]byte(item), &list[i]); err != nil {
					panic(err)
				}
				list[i].ID = ptr.To(fmt.Sprintf("%08d", i))
			}
			return []partResult{pipesOK(list...), endpointsOK(0), alertsFetched(nil)}
		}
	}
	return []struct {
		name    string
		results func() []partResult
	}{
		{"pipes of an id", pipes(`{"id":"00000000"}`)},
		{"pipes of an id and empty nested objects", pipes(`{"id":"00000000","source":{"postgres":{"settings":{}}},"settings":{}}`)},
		{"empty endpoints", func() []partResult {
			eps := make([]swv1.ReversePrivateEndpoint, clientKeeps(`{}`))
			return []partResult{pipesOK(), {message: "Listed", apply: func(s *swv1.ServiceWatchStatus) error {
				s.ReversePrivateEndpoints = eps
				s.Summary.ReversePrivateEndpoints = int32(len(eps))
				return nil
			}}, alertsFetched(nil)}
		}},
	}
}

// A status at its limit of tiny items decoded to several times the limit
// (issue 17: 800 KiB of JSON, 6.3 MiB as Go values), and every watch's
// status sits decoded in the manager's cache. Charged at the larger of its
// JSON and its decoded size, a status stays within the limit both ways.
func TestStatusOfTinyItemsIsBoundedDecoded(t *testing.T) {
	const limit = DefaultStatusSizeLimit
	for _, tt := range worstShapes() {
		t.Run(tt.name, func(t *testing.T) {
			w := testWatch()
			applyResults(w, syncParts(), tt.results(), limit)
			raw, err := json.Marshal(w.Status)
			if err != nil {
				t.Fatal(err)
			}
			if len(raw) > limit || bound.GoSize(&w.Status) > limit {
				t.Errorf("status is %d bytes of JSON and %d decoded, want both within %d", len(raw), bound.GoSize(&w.Status), limit)
			}
			if w.Condition(swv1.ConditionStatusTruncated) == nil {
				t.Error("no StatusTruncated condition")
			}
			// What the cache holds is the status decoded from the API
			// server's JSON: measure that, not the estimate.
			var cached swv1.ServiceWatchStatus
			grew := benchmem.Growth(func() {
				if err := json.Unmarshal(raw, &cached); err != nil {
					t.Fatal(err)
				}
			})
			if grew > 3*limit/2 {
				t.Errorf("the decoded status holds %d bytes of heap, want at most 1.5 times the limit %d", grew, limit)
			}
			runtime.KeepAlive(&cached)
		})
	}
}

// Realistic pipes (the fake cloud's, with every field of the spec) decode to
// about their JSON size, so charging the decoded size keeps about as many of
// them as before.
func TestRealisticPipesKeepTheirShare(t *testing.T) {
	fake := fakecloud.Start(fakecloud.DefaultData())
	defer fake.Close()
	cloud := cloudapi.New(cloudapi.Options{Budgets: cloudapi.NewBudgets(ratebudget.RateLimit{Requests: -1}, ratebudget.RateLimit{Requests: -1})})
	list, err := cloud.ListPipes(context.Background(), fake.URL, cloudapi.NewBasicCredentials(fakecloud.DefaultKeyID, fakecloud.DefaultKeySecret),
		fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, cloudapi.ListOptions[swv1.Pipe]{})
	if err != nil {
		t.Fatal(err)
	}
	pipes := list.Items
	if len(pipes) == 0 {
		t.Fatal("the fake cloud's data has no pipes")
	}
	jsonOnly, charged := 0, 0
	for i := range pipes {
		raw, err := json.Marshal(pipes[i])
		if err != nil {
			t.Fatal(err)
		}
		jsonOnly += len(raw) + 1
		charged += bound.Charges(pipes[i : i+1])[0]
	}
	t.Logf("%d pipes: charged %d bytes, %d as JSON (%.2f)", len(pipes), charged, jsonOnly, float64(charged)/float64(jsonOnly))
	if float64(charged) > 1.2*float64(jsonOnly) {
		t.Errorf("the fake cloud's pipes are charged %d bytes, %d as JSON: want within 20%%", charged, jsonOnly)
	}
}

func TestPipeStatesAreBounded(t *testing.T) {
	tally := bound.NewTally(maxCountedStates, maxPipeStateBytes, otherPipeStates)
	for range 10 {
		tally.Add("Running")
	}
	for range 5 {
		tally.Add("Failed")
	}
	// Then a cloud that gives pipes 2,000 states of their own, some long.
	for i := range 5000 {
		tally.Add(fmt.Sprintf("State-%04d-%s", i%2000, strings.Repeat("x", 100*(i%2))))
	}
	if counted := tally.Top(maxCountedStates + 1); len(counted) > maxCountedStates+1 {
		t.Fatalf("%d states counted while streaming, want at most %d and the rest", len(counted), maxCountedStates)
	}
	byState := tally.Top(maxPipeStates)
	if len(byState) != maxPipeStates {
		t.Fatalf("%d states after the bound, want %d", len(byState), maxPipeStates)
	}
	total := int32(0)
	for state, n := range byState {
		total += n
		if len(state) > maxPipeStateBytes {
			t.Errorf("state %q longer than %d bytes", state, maxPipeStateBytes)
		}
	}
	if total != 5015 {
		t.Errorf("the states count %d pipes, want all 5015", total)
	}
	if byState["Running"] != 10 || byState["Failed"] != 5 {
		t.Errorf("the most frequent states are not named: %v", byState)
	}
	few := bound.NewTally(maxCountedStates, maxPipeStateBytes, otherPipeStates)
	for range 3 {
		few.Add("Running")
	}
	few.Add("Failed")
	if got := few.Top(maxPipeStates); !maps.Equal(got, map[string]int32{"Running": 3, "Failed": 1}) {
		t.Errorf("a few states changed: %v", got)
	}
	if got := bound.NewTally(maxCountedStates, maxPipeStateBytes, otherPipeStates).Top(maxPipeStates); got != nil {
		t.Errorf("no pipes count states %v, want none", got)
	}
}

// A status written by an operator that charged only its JSON may decode to
// tens of MiB; the cache keeps it without its lists.
func TestCacheDropsTheListsOfAnOversizedStatus(t *testing.T) {
	w := testWatch()
	w.Status.ReversePrivateEndpoints = make([]swv1.ReversePrivateEndpoint, 270_000)
	w.Status.Pipes = manyPipes(2)
	w.Status.Summary = &swv1.Summary{Pipes: 2, ReversePrivateEndpoints: 270_000}
	obj, err := stripForCache(w)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := obj.(*swv1.ServiceWatch)
	if !ok {
		t.Fatalf("stripForCache returned a %T", obj)
	}
	if got.Status.ReversePrivateEndpoints != nil || got.Status.Pipes != nil || got.Status.Summary.ReversePrivateEndpoints != 270_000 {
		t.Errorf("cached: %d endpoints, %d pipes, summary %+v; want no lists and the summary", len(got.Status.ReversePrivateEndpoints), len(got.Status.Pipes), got.Status.Summary)
	}

	small := testWatch()
	small.Status.Pipes = manyPipes(100)
	obj, _ = stripForCache(small)
	if kept, _ := obj.(*swv1.ServiceWatch); kept == nil || len(kept.Status.Pipes) != 100 {
		t.Error("a status within the bound lost its lists")
	}
}
