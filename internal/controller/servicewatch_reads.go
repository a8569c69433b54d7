package controller

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/pacing"
)

// fetches run the cloud reads of syncs in the background, off the reconcile
// workers: a worker starts a read and moves on, and the read's end wakes the
// watch again to write what was read. A cloud that is slow, hangs or asks to
// wait therefore never holds a worker, and other tenants' watches are served
// meanwhile. The calls of the reads are bounded per API host, per namespace
// and in all (pacing.Slots; see syncSlots): a sync holds a host's slot only
// while it calls that host, work a user asked for goes first, and the
// namespaces that wait take turns.
//
// fetches is a manager.Runnable: the reads live in the context the manager
// starts it with, not in the reconcile that asked for them, and end when the
// manager stops.
type fetches struct {
	slots *pacing.Slots
	// slotWait learns how long each read waited for each of its slots.
	slotWait func(pacing.Level, time.Duration)
	// timeout bounds one read, slot waits included.
	timeout time.Duration
	// now stamps the reads' ends.
	now func() time.Time
	// requests are the reads asked for, which Start runs.
	requests chan readRequest
	// wake tells the controller that a watch's read ended.
	wake chan ctrlevent.GenericEvent

	mu      sync.Mutex
	running map[types.NamespacedName]*inflight
	done    map[types.NamespacedName]*syncScope
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

// readRequest is one read to run in the background.
type readRequest struct {
	// scope is the sync the read is for; the read's end is recorded in it.
	scope *syncScope
	// read calls the cloud, holding each host's slot of slots while it
	// calls that host.
	read func(ctx context.Context, slots *syncSlots) []partResult
	// inflight is the read's entry in fetches.running; start sets it.
	inflight *inflight
}

func newFetches(limits pacing.SlotLimits, timeout time.Duration, now func() time.Time, slotWait func(pacing.Level, time.Duration)) *fetches {
	return &fetches{
		slots:    pacing.NewSlots(limits),
		slotWait: slotWait,
		timeout:  timeout,
		now:      now,
		requests: make(chan readRequest, 1024),
		wake:     make(chan ctrlevent.GenericEvent, 1024),
		running:  map[types.NamespacedName]*inflight{},
		done:     map[types.NamespacedName]*syncScope{},
	}
}

// take returns the watch's ended read, if there is one, and forgets it.
func (f *fetches) take(key types.NamespacedName) (*syncScope, bool) {
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
	key := req.scope.p.Key
	f.mu.Lock()
	f.running[key] = req.inflight
	f.mu.Unlock()
	select {
	case f.requests <- req:
	case <-ctx.Done():
		f.mu.Lock()
		if f.running[key] == req.inflight {
			delete(f.running, key)
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
	var results []partResult
	var startedAt time.Time
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
			results = nil
		}
		req.scope.ended(results, startedAt, f.now())
		f.finish(ctx, req)
	}()
	slots := &syncSlots{fetches: f, ask: pacing.SlotAsk{Tenant: req.scope.p.Key.Namespace, Level: req.scope.level}, hosts: map[string]*hostHold{}}
	startedAt = f.now()
	read := req.read(readCtx, slots)
	if readCtx.Err() != nil && !slots.wasGranted() {
		return // no slot before the end: the sync reads as interrupted
	}
	results = read
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
func (f *fetches) finish(ctx context.Context, req readRequest) {
	key := req.scope.p.Key
	f.mu.Lock()
	if req.inflight.forgotten {
		f.mu.Unlock()
		return
	}
	delete(f.running, key)
	f.done[key] = req.scope
	f.mu.Unlock()
	wake := ctrlevent.GenericEvent{Object: &swv1.ServiceWatch{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}}
	select {
	case f.wake <- wake:
	case <-ctx.Done():
	}
}

// syncSlots are the slots of one sync's read: it holds a host's slot while
// it calls that host, and only then. Its calls to one host at once (the
// pipes and the endpoints, a few alerts) share one slot, so that the slots
// count syncs calling a host, as the flags say; when its last call to a host
// ends, the slot goes back, and the sync never holds one while it waits for
// another host (issue 17: three watches whose alert API hung held the shared
// management host's slots for the whole sync timeout).
type syncSlots struct {
	fetches *fetches
	// ask is the sync's namespace and level; the host is each call's.
	ask pacing.SlotAsk

	mu      sync.Mutex
	hosts   map[string]*hostHold
	granted bool
}

// hostHold is a sync's slot of one host, shared by its calls to the host.
type hostHold struct {
	users int
	// ready is closed when the slot is granted or refused (err).
	ready   chan struct{}
	err     error
	release func()
}

// hold takes the slot of baseURL's host for a call, or shares the one the
// sync holds for it already, waiting until ctx ends. The returned function
// ends the call's share.
func (s *syncSlots) hold(ctx context.Context, baseURL string) (func(), error) {
	host := hostOf(baseURL)
	s.mu.Lock()
	h := s.hosts[host]
	first := h == nil
	if first {
		h = &hostHold{ready: make(chan struct{})}
		s.hosts[host] = h
	}
	h.users++
	s.mu.Unlock()

	if first {
		s.acquire(ctx, host, h)
	}
	select {
	case <-h.ready:
	case <-ctx.Done():
		s.leave(host, h)
		return nil, fmt.Errorf("waiting for a read slot of %s: %w", host, ctx.Err())
	}
	if h.err != nil {
		s.leave(host, h)
		return nil, fmt.Errorf("waiting for a read slot of %s: %w", host, h.err)
	}
	return func() { s.leave(host, h) }, nil
}

// acquire asks the fetches' slots for the host's slot, and tells h's users.
func (s *syncSlots) acquire(ctx context.Context, host string, h *hostHold) {
	ask := s.ask
	ask.Host = host
	asked := s.fetches.now()
	release, err := s.fetches.slots.Acquire(ctx, ask)
	if err == nil {
		s.fetches.slotWait(ask.Level, s.fetches.now().Sub(asked))
	}
	s.mu.Lock()
	h.release, h.err = release, err
	if err == nil {
		s.granted = true
	} else if s.hosts[host] == h {
		delete(s.hosts, host) // a later call asks anew
	}
	s.mu.Unlock()
	close(h.ready)
}

// leave ends a call's share of h; the last one gives the slot back.
func (s *syncSlots) leave(host string, h *hostHold) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h.users--
	if h.users > 0 {
		return
	}
	if s.hosts[host] == h {
		delete(s.hosts, host)
	}
	if h.release != nil {
		h.release()
	}
}

// wasGranted tells whether the sync held a slot at all.
func (s *syncSlots) wasGranted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.granted
}

// hostOf is the host (and port) of an API base URL, which its slots are
// counted by; the URL itself when it has none.
func hostOf(baseURL string) string {
	if u, err := url.Parse(baseURL); err == nil && u.Host != "" {
		return u.Host
	}
	return baseURL
}

// slottedCloud is the Cloud of one sync's read: each call holds its host's
// slot (syncSlots) while it runs. Admission asks no slot: it calls nothing.
type slottedCloud struct {
	Cloud
	slots *syncSlots
}

// ListPipes lists the pipes holding the management host's slot.
func (c slottedCloud) ListPipes(ctx context.Context, baseURL string, creds cloudapi.BasicCredentials, organizationID, serviceID string, opts cloudapi.ListOptions[swv1.Pipe]) (cloudapi.List[swv1.Pipe], error) {
	release, err := c.slots.hold(ctx, baseURL)
	if err != nil {
		return cloudapi.List[swv1.Pipe]{}, err
	}
	defer release()
	return c.Cloud.ListPipes(ctx, baseURL, creds, organizationID, serviceID, opts)
}

// ListReversePrivateEndpoints lists the endpoints holding the management
// host's slot.
func (c slottedCloud) ListReversePrivateEndpoints(ctx context.Context, baseURL string, creds cloudapi.BasicCredentials, organizationID, serviceID string, opts cloudapi.ListOptions[swv1.ReversePrivateEndpoint]) (cloudapi.List[swv1.ReversePrivateEndpoint], error) {
	release, err := c.slots.hold(ctx, baseURL)
	if err != nil {
		return cloudapi.List[swv1.ReversePrivateEndpoint]{}, err
	}
	defer release()
	return c.Cloud.ListReversePrivateEndpoints(ctx, baseURL, creds, organizationID, serviceID, opts)
}

// GetAlert fetches an alert holding the alert host's slot.
func (c slottedCloud) GetAlert(ctx context.Context, baseURL string, token cloudapi.BearerToken, alertID string) (cloudapi.AlertResult, error) {
	release, err := c.slots.hold(ctx, baseURL)
	if err != nil {
		return cloudapi.AlertResult{}, err
	}
	defer release()
	return c.Cloud.GetAlert(ctx, baseURL, token, alertID)
}
