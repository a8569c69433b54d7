package changes

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"

	"github.com/servicewatch/servicewatch/internal/egress"
)

// CloudEventsSink sends every change it is offered to one URL as a
// CloudEvent, at least once: a bounded queue that Offer never waits on,
// workers that retry with exponential backoff and jitter while the receiver
// is down or answers 5xx, 408 or 429 (honoring Retry-After), and drop what
// it rejects. It is a manager.Runnable that runs on the leader only: a
// replica that does not sync has no change to send.
type CloudEventsSink struct {
	opts    SinkOptions
	client  *http.Client
	queue   *queue
	metrics *sinkMetrics
	clock   clock.Clock
	// jitter returns a number in [0, 1).
	jitter func() float64
	log    logr.Logger
	// failing is true from a failed attempt to the next delivery, so that
	// the log tells when the receiver goes away and comes back, not every
	// attempt in between.
	failing atomic.Bool
}

// SinkDeps are what a sink is built with besides its options; the zero
// value of each field but Registerer has a default.
type SinkDeps struct {
	// Registerer registers the sink's metrics (controller-runtime's
	// registry, in the manager).
	Registerer prometheus.Registerer
	// DenyLocalAddresses installs the dial guard cloud calls have
	// (egress.RefuseLocalAddress), except for SinkOptions.AllowedAddresses.
	DenyLocalAddresses bool
	// Log is told when the receiver fails and recovers, and of every
	// dropped change.
	Log logr.Logger
	// Clock times backoffs, expiry and the drain; default: the real one.
	Clock clock.Clock
	// Jitter returns a number in [0, 1) for the backoffs; default:
	// math/rand.
	Jitter func() float64
	// Transport sends the requests; default: http.DefaultTransport's
	// settings with the dial guard. Given, it is used as it is.
	Transport http.RoundTripper
}

// NewCloudEventsSink builds the sink of opts, which must be enabled and
// valid (SinkOptions.Validate).
func NewCloudEventsSink(opts SinkOptions, deps SinkDeps) (*CloudEventsSink, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if !opts.Enabled() {
		return nil, errors.New("no --change-sink-url")
	}
	s := &CloudEventsSink{opts: opts, queue: newQueue(opts.Queue), clock: deps.Clock, jitter: deps.Jitter, log: deps.Log}
	if s.clock == nil {
		s.clock = clock.RealClock{}
	}
	if s.jitter == nil {
		s.jitter = rand.Float64
	}
	transport := deps.Transport
	if transport == nil {
		transport = sinkTransport(deps.DenyLocalAddresses, opts)
	}
	s.client = &http.Client{
		Transport: transport,
		// The receiver is the URL the platform team set: a redirect
		// elsewhere is not followed, and counts as a rejection.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	m, err := newSinkMetrics(deps.Registerer, s.queue.len)
	if err != nil {
		return nil, fmt.Errorf("registering the change sink's metrics: %w", err)
	}
	s.metrics = m
	return s, nil
}

// sinkTransport is http.DefaultTransport's settings (a proxy from the
// environment, keep-alive) with, when deny is set, the cloud calls' dial
// guard less the addresses opts allows.
func sinkTransport(deny bool, opts SinkOptions) *http.Transport {
	base, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		base = &http.Transport{Proxy: http.ProxyFromEnvironment}
	}
	t := base.Clone()
	if deny {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: egress.RefuseLocalAddressExcept(opts.AllowedAddresses)}
		t.DialContext = d.DialContext
	}
	t.MaxIdleConnsPerHost = opts.Workers
	return t
}

// Offer queues what fits of changes and counts the rest as dropped: it
// never waits, whatever the receiver does.
func (s *CloudEventsSink) Offer(changes []Change) {
	if len(changes) == 0 {
		return
	}
	accepted := s.queue.push(changes, s.clock.Now())
	if dropped := len(changes) - accepted; dropped > 0 {
		s.metrics.dropped.WithLabelValues(DropQueueFull).Add(float64(dropped))
		s.log.V(1).Info("change sink queue full: changes dropped", "dropped", dropped, "queue", s.opts.Queue)
	}
}

// NeedLeaderElection is true: only the leader syncs, so only it has
// changes to send.
func (s *CloudEventsSink) NeedLeaderElection() bool { return true }

// Start sends changes until ctx ends, then keeps sending what is queued for
// the drain time at most, drops what is left and returns.
func (s *CloudEventsSink) Start(ctx context.Context) error {
	// run outlives ctx by the drain: the attempts and backoffs of the
	// workers end with it.
	run, endRun := context.WithCancel(context.WithoutCancel(ctx))
	defer endRun()
	var workers sync.WaitGroup
	for range s.opts.Workers {
		workers.Go(func() { s.work(ctx, run) })
	}
	stopped := make(chan struct{})
	go func() {
		workers.Wait()
		close(stopped)
	}()
	<-ctx.Done()
	drain := s.clock.NewTimer(s.opts.Drain)
	select {
	case <-stopped:
	case <-drain.C():
		endRun()
		<-stopped
	}
	drain.Stop()
	if left := s.queue.close(); left > 0 {
		s.metrics.dropped.WithLabelValues(DropShutdown).Add(float64(left))
		s.log.Info("changes not sent before the manager stopped", "dropped", left)
	}
	return nil
}

// work sends queued changes one at a time until ctx ends and the queue is
// empty, or run ends.
func (s *CloudEventsSink) work(ctx, run context.Context) {
	for {
		item, ok := s.queue.pop()
		if ok {
			s.deliver(run, item)
			s.queue.done()
			continue
		}
		if ctx.Err() != nil {
			return
		}
		select {
		case <-s.queue.ready:
		case <-ctx.Done():
		}
	}
}

// deliver sends one change until it is delivered, rejected, expired, or
// run ends.
func (s *CloudEventsSink) deliver(run context.Context, item queued) {
	event, err := NewEvent(item.change)
	if err != nil {
		s.drop(DropRejected, item.change, err)
		return
	}
	for attempt := 0; ; attempt++ {
		if s.clock.Since(item.offered) >= s.opts.RetryFor {
			s.drop(DropExpired, item.change, fmt.Errorf("not delivered within %s", s.opts.RetryFor))
			return
		}
		out := s.send(run, event)
		switch out.verdict {
		case delivered:
			s.metrics.sent.Inc()
			if s.failing.Swap(false) {
				s.log.Info("change sink receiving again", "url", s.opts.URL)
			}
			return
		case rejected:
			s.drop(DropRejected, item.change, out.err)
			return
		}
		s.metrics.failed.WithLabelValues(out.code).Inc()
		if !s.failing.Swap(true) {
			s.log.Error(out.err, "change sink not receiving; retrying with backoff", "url", s.opts.URL)
		}
		if run.Err() != nil {
			s.drop(DropShutdown, item.change, out.err)
			return
		}
		wait := s.clock.NewTimer(s.backoff(attempt, out.retryAfter))
		select {
		case <-wait.C():
		case <-run.Done():
			wait.Stop()
			s.drop(DropShutdown, item.change, out.err)
			return
		}
	}
}

// drop counts a change that will not be delivered. A rejection is logged
// (the receiver said why); an expiry or a stop follows an outage the log
// already told of, and may concern thousands of changes at once: only at
// V(1).
func (s *CloudEventsSink) drop(reason string, c Change, why error) {
	s.metrics.dropped.WithLabelValues(reason).Inc()
	log := s.log
	if reason != DropRejected {
		log = log.V(1)
	}
	log.Info("change not delivered to the sink", "reason", reason, "id", c.ID,
		"namespace", c.Namespace, "servicewatch", c.Watch, "kind", c.Kind, "item", c.ItemID, "error", why)
}

// backoff is the wait before the attempt after attempt (0 for the first):
// MinBackoff doubled at each failure up to MaxBackoff, of which a random
// half is waited ("equal jitter": the senders of many replicas or
// restarts do not come back in step), and no less than a Retry-After the
// receiver asked for, up to MaxBackoff.
func (s *CloudEventsSink) backoff(attempt int, retryAfter time.Duration) time.Duration {
	d := s.opts.MinBackoff
	for range attempt {
		if d >= s.opts.MaxBackoff/2 {
			d = s.opts.MaxBackoff
			break
		}
		d *= 2
	}
	d = min(d, s.opts.MaxBackoff)
	d = d/2 + time.Duration(s.jitter()*float64(d/2))
	return min(max(d, retryAfter), s.opts.MaxBackoff)
}
