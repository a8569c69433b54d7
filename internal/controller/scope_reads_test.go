package controller

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/servicewatch/servicewatch/internal/controller/reads"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/pacing"
)

// testAPI is the API the reads of these tests call.
const testAPI = "https://api.example.com"

// calling is a read that makes one call to baseURL, call, holding the
// host's slot as a cloud call does.
func calling(baseURL string, call func(context.Context)) func(context.Context, *reads.Slots) []partResult {
	return func(ctx context.Context, slots *reads.Slots) []partResult {
		release, err := slots.Hold(ctx, baseURL)
		if err != nil {
			return nil
		}
		defer release()
		call(ctx)
		return nil
	}
}

// scopeOf is a sync of the watch key for work at level.
func scopeOf(key types.NamespacedName, level pacing.Level) *syncScope {
	return &syncScope{p: paced{Key: key, Trigger: "trigger"}, watch: testWatch(), parts: syncParts(), allowed: pacing.Allowance{Every: time.Minute}, level: level}
}

// servicewatch_sync_slot_wait_seconds tells how long each sync waited for its
// read slot, by the work it was for: the signal that the slots, not the
// cloud's budget, hold syncs back.
func TestSlotWaitIsExportedByWork(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.NewSync(reg)
	if err != nil {
		t.Fatal(err)
	}
	clock := clocktesting.NewFakeClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	f := newFetches(reads.SlotLimits{All: 1, PerHost: 1, PerTenant: 1}, time.Minute, clock.Now, m.ObserveSlotWait)
	go func() { _ = f.Start(t.Context()) }()
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }
	unblock, holding := make(chan struct{}), make(chan struct{})
	f.Run(t.Context(), readRequest(scopeOf(key("first"), pacing.User),
		calling(testAPI, func(context.Context) { close(holding); <-unblock })))
	<-holding // the first read holds the only slot
	f.Run(t.Context(), readRequest(scopeOf(key("second"), pacing.Periodic),
		calling(testAPI, func(context.Context) {})))
	waitUntil(t, "the second read to wait for the host's slot", func() bool {
		return f.Waiting(pacing.Periodic) == 1
	})
	clock.Step(3 * time.Second)
	close(unblock)
	for range 2 {
		<-f.Wake()
	}

	got := map[string][2]float64{} // work → count, sum
	for _, s := range GatheredSeries(t, reg, "servicewatch_sync_slot_wait_seconds") {
		h := s.GetHistogram()
		got[s.GetLabel()[0].GetValue()] = [2]float64{float64(h.GetSampleCount()), h.GetSampleSum()}
	}
	if want := map[string][2]float64{"user": {1, 0}, "secret": {0, 0}, "periodic": {1, 3}}; !maps.Equal(got, want) {
		t.Errorf("slot waits (count, seconds) by work: %v, want %v", got, want)
	}
}

// A sync's read ends with what it read, stamped with its times, and keeps
// its trigger, interval and level when it is interrupted: the write that
// follows reads it as the sync it started for, every part failed and no
// cloud reached when the read panicked.
func TestAnEndedReadIsTheSyncsRead(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	r := &ServiceWatchReconciler{fetches: newFetches(reads.SlotLimits{All: 1, PerHost: 1, PerTenant: 1}, time.Minute, clock.Now, func(pacing.Level, time.Duration) {})}
	go func() { _ = r.fetches.Start(t.Context()) }()
	key := types.NamespacedName{Namespace: "ns", Name: "w"}
	for _, tt := range []struct {
		name    string
		read    func(context.Context, *reads.Slots) []partResult
		reached bool
	}{
		{"read", func(context.Context, *reads.Slots) []partResult { return make([]partResult, len(syncParts())) }, true},
		{"panicked", func(context.Context, *reads.Slots) []partResult { panic("a bug in a part") }, false},
	} {
		r.fetches.Run(t.Context(), readRequest(scopeOf(key, pacing.Secret), tt.read))
		<-r.fetches.Wake()
		got, ok := r.takeRead(key)
		if !ok || got.p.Trigger != "trigger" || got.allowed.Every != time.Minute || got.level != pacing.Secret ||
			len(got.results) != len(syncParts()) || got.reachedCloud != tt.reached || got.outcome.Failed == tt.reached ||
			!got.startedAt.Equal(clock.Now()) || !got.endedAt.Equal(clock.Now()) {
			t.Errorf("%s: took %+v, %v", tt.name, got, ok)
		}
	}
}
