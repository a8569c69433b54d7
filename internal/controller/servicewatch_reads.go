package controller

import (
	"context"
	"net/url"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/pacing"
)

// fetches run the cloud reads of syncs in the background, off the reconcile
// workers: a worker starts a read and moves on, and the read's end wakes the
// watch again to write what was read. A cloud that is slow, hangs or asks to
// wait therefore never holds a worker, and other tenants' watches are served
// meanwhile. Reads are bounded per API host and in all (pacing.HostSlots),
// work a user asked for first.
//
// fetches is a manager.Runnable: the reads live in the context the manager
// starts it with, not in the reconcile that asked for them, and end when the
// manager stops.
type fetches struct {
	slots *pacing.HostSlots
	// slotWait learns how long each read waited for its slots.
	slotWait func(pacing.Level, time.Duration)
	// timeout bounds one read, slot wait included.
	timeout time.Duration
	// now stamps the reads' ends.
	now func() time.Time
	// requests are the reads asked for, which Start runs.
	requests chan readRequest
	// wake tells the controller that a watch's read ended.
	wake chan ctrlevent.GenericEvent

	mu      sync.Mutex
	running map[types.NamespacedName]*inflight
	done    map[types.NamespacedName]fetched
}

// inflight is a read asked for and not yet ended. A watch deleted (or
// suspended) meanwhile cancels it, so that its goroutine, its connections
// and the Secret values it holds go at once, not at the sync timeout.
type inflight struct {
	// cancel ends the read's context; nil until the read has begun.
	cancel context.CancelFunc
	// forgotten: the watch went away; the read must not begin, and its end
	// is neither recorded nor woken.
	forgotten bool
}

// fetched is a read that ended and waits to be written to status.
type fetched struct {
	// trigger is the trigger the read started for; a read whose watch
	// changed since is stale.
	trigger string
	// every is the interval the watch's budgets allowed when the read began.
	every time.Duration
	// level is the level of the work the read was for.
	level        pacing.Level
	results      []partResult
	reachedCloud bool
	endedAt      time.Time
}

// readRequest is one read to run in the background.
type readRequest struct {
	key types.NamespacedName
	// trigger, every and level are as in fetched.
	trigger string
	every   time.Duration
	level   pacing.Level
	// hosts are the API hosts the read calls, for their slots.
	hosts []string
	// read calls the cloud; it tells whether the sync reached the cloud.
	read func(context.Context) ([]partResult, bool)
	// inflight is the read's entry in fetches.running; start sets it.
	inflight *inflight
}

func newFetches(perHost, all int, timeout time.Duration, now func() time.Time, slotWait func(pacing.Level, time.Duration)) *fetches {
	return &fetches{
		slots:    pacing.NewHostSlots(perHost, all),
		slotWait: slotWait,
		timeout:  timeout,
		now:      now,
		requests: make(chan readRequest, 1024),
		wake:     make(chan ctrlevent.GenericEvent, 1024),
		running:  map[types.NamespacedName]*inflight{},
		done:     map[types.NamespacedName]fetched{},
	}
}

// take returns the watch's ended read, if there is one, and forgets it.
func (f *fetches) take(key types.NamespacedName) (fetched, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	res, ok := f.done[key]
	delete(f.done, key)
	return res, ok
}

// busy tells whether a read of the watch is under way.
func (f *fetches) busy(key types.NamespacedName) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.running[key] != nil
}

// forget drops what is known of a deleted (or suspended) watch: a read under
// way is canceled and ends unheard, one still waiting to begin never does.
func (f *fetches) forget(key types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.done, key)
	if r := f.running[key]; r != nil {
		r.forgotten = true
		if r.cancel != nil {
			r.cancel()
		}
		delete(f.running, key)
	}
}

// start asks for req's read to run in the background; reads of a higher
// level get slots first. Until the manager runs fetches, the requests wait;
// ctx (the reconcile's) bounds that wait.
func (f *fetches) start(ctx context.Context, req readRequest) {
	req.inflight = &inflight{}
	f.mu.Lock()
	f.running[req.key] = req.inflight
	f.mu.Unlock()
	select {
	case f.requests <- req:
	case <-ctx.Done():
		f.mu.Lock()
		if f.running[req.key] == req.inflight {
			delete(f.running, req.key)
		}
		f.mu.Unlock()
	}
}

// Start runs the reads asked for until ctx ends; it makes fetches a
// manager.Runnable.
func (f *fetches) Start(ctx context.Context) error {
	for {
		select {
		case req := <-f.requests:
			go f.run(ctx, req)
		case <-ctx.Done():
			return nil
		}
	}
}

// run runs one read within ctx and the timeout, and records its end.
func (f *fetches) run(ctx context.Context, req readRequest) {
	res := fetched{trigger: req.trigger, every: req.every, level: req.level}
	readCtx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	f.mu.Lock()
	req.inflight.cancel = cancel
	if req.inflight.forgotten { // forgotten while it waited to begin
		cancel()
	}
	f.mu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			// A bug in a part must not take the manager down with it: the
			// watch reads as failed and is retried on the backoff.
			log.FromContext(ctx).Error(nil, "a cloud read panicked", "panic", p)
			res.results = nil
		}
		res.endedAt = f.now()
		f.finish(ctx, req, res)
	}()
	asked := f.now()
	release, err := f.slots.Acquire(readCtx, req.hosts, req.level)
	if err != nil {
		return // no results: the sync reads as interrupted
	}
	defer release()
	f.slotWait(req.level, f.now().Sub(asked))
	res.results, res.reachedCloud = req.read(readCtx)
}

// priorityOf is the workqueue priority of the wake of obj's ended read: that
// of the work it was for.
func (f *fetches) priorityOf(obj client.Object) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if res, ok := f.done[client.ObjectKeyFromObject(obj)]; ok {
		return priorityOf(res.level)
	}
	return priorityOf(pacing.User)
}

// finish records an ended read and wakes the watch, unless the manager is
// stopping or the watch was forgotten meanwhile.
func (f *fetches) finish(ctx context.Context, req readRequest, res fetched) {
	key := req.key
	f.mu.Lock()
	if req.inflight.forgotten {
		f.mu.Unlock()
		return
	}
	delete(f.running, key)
	f.done[key] = res
	f.mu.Unlock()
	wake := ctrlevent.GenericEvent{Object: &swv1.ServiceWatch{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}}
	select {
	case f.wake <- wake:
	case <-ctx.Done():
	}
}

// apiHosts are the hosts a sync of the watch calls.
func apiHosts(in syncInput) []string {
	var hosts []string
	for _, raw := range []string{in.management.url, in.alerts.url} {
		if u, err := url.Parse(raw); err == nil && u.Host != "" {
			hosts = append(hosts, u.Host)
		}
	}
	return hosts
}
