package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

// readiness follows every ServiceWatch through one watch of the API, as a
// user's `kubectl get sw -w` would, and remembers when each became Ready and
// how often it stopped being Ready.
type readiness struct {
	mu      sync.Mutex
	watches map[types.NamespacedName]*watchLife
}

// watchLife is what the harness saw of one ServiceWatch.
type watchLife struct {
	firstReady time.Time // zero until it was first seen Ready
	ready      bool
	flaps      int // times Ready went from True to anything else
	conditions []metav1.Condition
	generation int64
	pipeStates []string  // the states of its status.pipes, sorted
	pipesSince time.Time // when pipeStates last changed
}

// trackReadiness lists the ServiceWatches and then watches them until ctx
// ends, resuming (or listing again) when the API server ends the watch.
func trackReadiness(ctx context.Context, c client.WithWatch) (*readiness, error) {
	r := &readiness{watches: map[types.NamespacedName]*watchLife{}}
	rv, err := r.list(ctx, c)
	if err != nil {
		return nil, err
	}
	go func() {
		for ctx.Err() == nil {
			next, err := r.follow(ctx, c, rv)
			if err != nil && ctx.Err() == nil {
				// The watch broke in a way resuming cannot mend (such as an
				// expired resource version): start over from a list.
				if next, err = r.list(ctx, c); err != nil {
					time.Sleep(time.Second)
					continue
				}
			}
			rv = next
		}
	}()
	return r, nil
}

func (r *readiness) list(ctx context.Context, c client.WithWatch) (string, error) {
	var list swv1.ServiceWatchList
	if err := c.List(ctx, &list); err != nil {
		return "", fmt.Errorf("listing ServiceWatches: %w", err)
	}
	for i := range list.Items {
		r.observe(&list.Items[i])
	}
	return list.ResourceVersion, nil
}

// follow watches from rv until the watch ends and returns the last resource
// version seen.
func (r *readiness) follow(ctx context.Context, c client.WithWatch, rv string) (string, error) {
	w, err := c.Watch(ctx, &swv1.ServiceWatchList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}})
	if err != nil {
		return rv, err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Error:
			return rv, errors.New("watch error")
		case watch.Added, watch.Modified, watch.Bookmark:
			obj, ok := ev.Object.(*swv1.ServiceWatch)
			if !ok {
				continue
			}
			rv = obj.ResourceVersion
			if ev.Type != watch.Bookmark {
				r.observe(obj)
			}
		}
	}
	return rv, nil
}

func (r *readiness) observe(w *swv1.ServiceWatch) {
	now := time.Now()
	ready := w.IsReady() // what kstatus and `kubectl wait --for=condition=Ready` take as Ready: True for the current generation
	r.mu.Lock()
	defer r.mu.Unlock()
	key := types.NamespacedName{Namespace: w.Namespace, Name: w.Name}
	life := r.watches[key]
	if life == nil {
		life = &watchLife{}
		r.watches[key] = life
	}
	if ready && life.firstReady.IsZero() {
		life.firstReady = now
	}
	if life.ready && !ready {
		life.flaps++
	}
	life.ready = ready
	life.conditions = w.Status.Conditions
	life.generation = w.Generation
	if states := pipeStatesOf(w); !slices.Equal(states, life.pipeStates) {
		life.pipeStates, life.pipesSince = states, now
	}
}

// pipeStatesOf are the states of a watch's status.pipes, sorted: the order of
// status.pipes is the manager's (failing pipes first), not the cloud's.
func pipeStatesOf(w *swv1.ServiceWatch) []string {
	states := make([]string, len(w.Status.Pipes))
	for i, p := range w.Status.Pipes {
		if p.State != nil {
			states[i] = *p.State
		}
	}
	slices.Sort(states)
	return states
}

// pipesShowing returns, for each watch whose status shows its pipes in the
// states of want (sorted) since after, when it first did.
func (r *readiness) pipesShowing(want []string, after time.Time) []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []time.Time
	for _, life := range r.watches {
		if life.pipesSince.After(after) && slices.Equal(life.pipeStates, want) {
			out = append(out, life.pipesSince)
		}
	}
	return out
}

// summary counts, among the watches of namespace ("" for all): how many
// there are, how many are Ready now, the latest first-Ready time (zero
// unless all were Ready at some point) and the flaps.
func (r *readiness) summary(namespace string) (total, ready int, lastFirstReady time.Time, flaps int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	allSeenReady := true
	for key, life := range r.watches {
		if namespace != "" && key.Namespace != namespace {
			continue
		}
		total++
		if life.ready {
			ready++
		}
		flaps += life.flaps
		if life.firstReady.IsZero() {
			allSeenReady = false
		} else if life.firstReady.After(lastFirstReady) {
			lastFirstReady = life.firstReady
		}
	}
	if !allSeenReady {
		lastFirstReady = time.Time{}
	}
	return total, ready, lastFirstReady, flaps
}

// firstReady returns when a watch was first seen Ready; zero if never.
func (r *readiness) firstReady(key types.NamespacedName) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if life := r.watches[key]; life != nil {
		return life.firstReady
	}
	return time.Time{}
}

// condition returns a watch's condition of type t as last seen, if it is
// for the watch's current generation.
func (r *readiness) condition(key types.NamespacedName, t string) (metav1.Condition, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	life := r.watches[key]
	if life == nil {
		return metav1.Condition{}, false
	}
	c := meta.FindStatusCondition(life.conditions, t)
	if c == nil || c.ObservedGeneration != life.generation {
		return metav1.Condition{}, false
	}
	return *c, true
}

// waitUntil polls cond every 100 ms until it holds, ctx ends or timeout
// passes; it reports whether cond held.
func waitUntil(ctx context.Context, timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// countEvents counts the events of a namespace's objects as a user sees
// them: objects, and occurrences (an event series counts each repeat).
func countEvents(ctx context.Context, c client.Client, namespace string) (objects, occurrences int, err error) {
	var list eventsv1.EventList
	if err := c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return 0, 0, fmt.Errorf("listing events: %w", err)
	}
	for _, e := range list.Items {
		objects++
		switch {
		case e.Series != nil && e.Series.Count > 0:
			occurrences += int(e.Series.Count)
		case e.DeprecatedCount > 0:
			occurrences += int(e.DeprecatedCount)
		default:
			occurrences++
		}
	}
	return objects, occurrences, nil
}

// memoryOf reads a process's resident memory from /proc: the current value
// (VmRSS) and the peak since it started (VmHWM), in bytes.
func memoryOf(pid int) (rss, peak int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	// Only read: a Close error says nothing about what was read.
	defer func() { _ = f.Close() }()
	return parseProcStatus(f)
}

// parseProcStatus reads VmRSS and VmHWM from /proc/<pid>/status.
func parseProcStatus(f io.Reader) (rss, peak int64, err error) {
	s := bufio.NewScanner(f)
	for s.Scan() {
		name, value, ok := strings.Cut(s.Text(), ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		fields := strings.Fields(value)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, 0, fmt.Errorf("unexpected %s line %q", name, s.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, 0, err
		}
		if name == "VmRSS" {
			rss = kb << 10
		} else {
			peak = kb << 10
		}
	}
	if err := s.Err(); err != nil {
		return 0, 0, err
	}
	if peak == 0 {
		return 0, 0, errors.New("no VmHWM in /proc status")
	}
	return rss, peak, nil
}
