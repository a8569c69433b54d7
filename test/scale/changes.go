package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// The scenario of issue 40: what following item state changes costs a
// manager (the since of each item, an Event per change) when every pipe of
// 1,000 watches changes at once, and back.

// changesScenario syncs 1,000 watches (interval 30 s, default flags, no
// client limits, as ready-1000-default), then sets every pipe of every
// watch's service to Failed in the fake cloud and, once every watch's status
// shows it, back to the states they had. Each phase is measured over the
// same fixed window from the change, so that the managers' CPU is compared
// over equal time whatever their pace.
func changesScenario(ctx context.Context, e *runEnv) (string, error) {
	const (
		n        = 1000
		interval = 30 * time.Second
		// window holds two intervals: every watch resyncs in it at least
		// once, and the Events of the change are written by its end.
		window = 2 * interval
	)
	ts := makeTenants("changes", 4)
	if err := setUp(ctx, e, ts, "--latency", cloudLatency.String()); err != nil {
		return "", err
	}
	if err := e.cp.createWatches(ctx, spreadWatches(ts, n, watchSpec{interval: interval})); err != nil {
		return "", err
	}
	m, err := e.startManager(ctx, noClientLimits...)
	if err != nil {
		return "", err
	}
	ready, err := waitAllReady(ctx, e, "", n, 10*time.Minute)
	if err != nil {
		return "", err
	}
	readyAfter := ready.Sub(firstCall(ctx, e))
	original := cloudData(ts)
	phases := []struct {
		name string
		data fakecloud.Data
	}{
		{"to Failed", withPipesIn(original, "Failed")},
		{"back", original},
	}
	cells := []string{fmt.Sprintf("1,000 Ready after %s", seconds(readyAfter))}
	for _, p := range phases {
		got, err := changePhaseOf(ctx, e, m, namespacesOf(ts), p.data, n, window)
		if err != nil {
			return "", fmt.Errorf("%s: %w", p.name, err)
		}
		cells = append(cells, p.name+": "+got.String())
		// Kept as it comes: a later phase that fails loses the cell.
		if err := os.WriteFile(filepath.Join(e.dir, "phases.txt"), []byte(strings.Join(cells, "\n")+"\n"), 0o644); err != nil {
			return "", err
		}
	}
	return strings.Join(cells, "; "), nil
}

// changePhase is what one change of every watch's pipes cost, over window.
type changePhase struct {
	shown, of  int
	median     time.Duration // from the change to the status of half the watches showing it
	all        time.Duration // … of the last one (zero unless all did)
	window     time.Duration
	cpu        time.Duration
	peak       int64 // the manager's peak RSS in the window
	events     int   // Event objects created in the window
	occurrence int   // … counting each repeat of a series
	writes     int   // status writes the API server served in the window
}

func (c changePhase) String() string {
	shown := fmt.Sprintf("all %d shown after %s (median %s)", c.of, seconds(c.all), seconds(c.median))
	if c.shown < c.of {
		shown = fmt.Sprintf("only %d of %d shown (median %s)", c.shown, c.of, seconds(c.median))
	}
	return fmt.Sprintf("%s; over %s: manager CPU %s, peak RSS %s, %d Events (%d occurrences), %d status writes",
		shown, seconds(c.window), seconds(c.cpu), mebibytes(c.peak), c.events, c.occurrence, c.writes)
}

// changePhaseOf makes the fake cloud serve d and measures, from then, how
// long until the status of each of the n watches shows its pipes in d's
// states, and the manager's CPU, peak memory, Events and status writes over
// window (longer if the watches took longer).
func changePhaseOf(ctx context.Context, e *runEnv, m *managerProc, namespaces []string, d fakecloud.Data, n int, window time.Duration) (changePhase, error) {
	want := pipeStatesIn(d.Organizations[defaultOrg][distinctService(0)])
	pid := m.child.Pid()
	// VmHWM would otherwise hold the peak of the first syncs.
	if err := resetPeakRSS(pid); err != nil {
		return changePhase{}, err
	}
	cpu, err := cpuOf(pid)
	if err != nil {
		return changePhase{}, err
	}
	events, occurrences, err := countEventsIn(ctx, e, namespaces)
	if err != nil {
		return changePhase{}, err
	}
	writes, err := e.cp.statusWrites(ctx)
	if err != nil {
		return changePhase{}, err
	}
	if err := e.cloud.setData(ctx, d); err != nil {
		return changePhase{}, err
	}
	changed := time.Now()
	waitUntil(ctx, 5*time.Minute, func() bool { return len(e.track.pipesShowing(want, changed)) >= n })
	if err := sleepUntil(ctx, changed.Add(window)); err != nil {
		return changePhase{}, err
	}
	got := changePhase{of: n, window: time.Since(changed)}
	shownAt := e.track.pipesShowing(want, changed)
	got.shown = len(shownAt)
	got.median, got.all = delaysAfter(changed, shownAt, n)
	cpuAfter, err := cpuOf(pid)
	if err != nil {
		return changePhase{}, err
	}
	got.cpu = cpuAfter - cpu
	if _, got.peak, err = memoryOf(pid); err != nil {
		return changePhase{}, err
	}
	eventsAfter, occurrencesAfter, err := countEventsIn(ctx, e, namespaces)
	if err != nil {
		return changePhase{}, err
	}
	got.events, got.occurrence = eventsAfter-events, occurrencesAfter-occurrences
	writesAfter, err := e.cp.statusWrites(ctx)
	if err != nil {
		return changePhase{}, err
	}
	got.writes = writesAfter - writes
	return got, nil
}

// delaysAfter returns, of the times the n watches showed a change made at
// changed, the median delay and the largest (zero unless all n did).
func delaysAfter(changed time.Time, shownAt []time.Time, n int) (median, all time.Duration) {
	delays := make([]time.Duration, len(shownAt))
	for i, t := range shownAt {
		delays[i] = t.Sub(changed)
	}
	slices.Sort(delays)
	if len(delays) > n/2 {
		median = delays[n/2]
	}
	if len(delays) >= n && n > 0 {
		all = delays[len(delays)-1]
	}
	return median, all
}

// withPipesIn returns a copy of d in which every pipe of the distinct
// services the watches read is in state. d is not changed: its services
// share their pipes (see cloudData).
func withPipesIn(d fakecloud.Data, state string) fakecloud.Data {
	org := maps.Clone(d.Organizations[defaultOrg])
	changed := org[distinctService(0)]
	changed.Pipes = make([]map[string]any, len(changed.Pipes))
	for i, p := range org[distinctService(0)].Pipes {
		changed.Pipes[i] = maps.Clone(p)
		changed.Pipes[i]["state"] = state
	}
	for i := range distinctServices {
		org[distinctService(i)] = changed
	}
	out := d
	out.Organizations = maps.Clone(d.Organizations)
	out.Organizations[defaultOrg] = org
	return out
}

// pipeStatesIn are the states of a service's pipes as the fake serves them,
// sorted as readiness keeps a status's.
func pipeStatesIn(s fakecloud.Service) []string {
	states := make([]string, 0, len(s.Pipes))
	for _, p := range s.Pipes {
		state, _ := p["state"].(string)
		states = append(states, state)
	}
	slices.Sort(states)
	return states
}

// countEventsIn sums countEvents over namespaces.
func countEventsIn(ctx context.Context, e *runEnv, namespaces []string) (objects, occurrences int, err error) {
	for _, ns := range namespaces {
		o, n, err := countEvents(ctx, e.cp.client, ns)
		if err != nil {
			return 0, 0, err
		}
		objects, occurrences = objects+o, occurrences+n
	}
	return objects, occurrences, nil
}

func namespacesOf(ts []tenant) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.namespace
	}
	return out
}

// resetPeakRSS sets a process's VmHWM back to its current RSS (Linux's
// clear_refs, value 5), so that a peak read later is the peak since now.
func resetPeakRSS(pid int) error {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		return fmt.Errorf("resetting the peak RSS of %d: %w", pid, err)
	}
	return nil
}
