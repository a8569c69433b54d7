package changes

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/protocol"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	clocktesting "k8s.io/utils/clock/testing"
)

// receiver is a CloudEvents receiver built with the CloudEvents Go SDK on a
// loopback listener: what a Knative service or any SDK user runs. It keeps
// every event it decoded, and the raw requests, in order.
type receiver struct {
	addr string
	stop func()

	mu     sync.Mutex
	events []cloudevents.Event
	raw    []rawRequest
	// answer says what to answer to an event received for the nth time
	// (1 the first); nil: accept.
	answer func(e cloudevents.Event, nth int) protocol.Result
	// header is set on every answer (Retry-After, say).
	header http.Header
}

// rawRequest is a request as it came over the wire.
type rawRequest struct {
	header http.Header
	body   []byte
}

// startReceiver starts a receiver on addr ("127.0.0.1:0" for any port),
// stopped at the end of the test if not before.
func startReceiver(t *testing.T, addr string, answer func(cloudevents.Event, int) protocol.Result, header http.Header) *receiver {
	t.Helper()
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{addr: ln.Addr().String(), answer: answer, header: header}
	record := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			body, _ := io.ReadAll(req.Body)
			r.mu.Lock()
			r.raw = append(r.raw, rawRequest{header: req.Header.Clone(), body: body})
			r.mu.Unlock()
			maps.Copy(w.Header(), r.header)
			req.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, req)
		})
	}
	client, err := cloudevents.NewClientHTTP(cehttp.WithListener(ln), cehttp.WithMiddleware(record), cehttp.WithShutdownTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := client.StartReceiver(ctx, r.receive); err != nil {
			t.Errorf("receiver: %v", err)
		}
	}()
	var once sync.Once
	r.stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(r.stop)
	return r
}

func (r *receiver) receive(ctx context.Context, e cloudevents.Event) protocol.Result {
	r.mu.Lock()
	nth := 1
	for _, seen := range r.events {
		if seen.ID() == e.ID() {
			nth++
		}
	}
	r.events = append(r.events, e)
	answer := r.answer
	r.mu.Unlock()
	if answer == nil {
		return protocol.ResultACK
	}
	return answer(e, nth)
}

// received returns the events received so far, duplicates included.
func (r *receiver) received() []cloudevents.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]cloudevents.Event(nil), r.events...)
}

// distinctIDs counts the events by ID, as a receiver that drops duplicates
// does.
func distinctIDs(events []cloudevents.Event) map[string]int {
	ids := map[string]int{}
	for _, e := range events {
		ids[e.ID()]++
	}
	return ids
}

// freeAddress is a loopback address on which nothing listens now.
func freeAddress(t *testing.T) string {
	t.Helper()
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// testChanges are n changes of one watch, each a pipe's.
func testChanges(n int) []Change {
	since := time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC)
	out := make([]Change, n)
	for i := range out {
		out[i] = Change{
			ID: fmt.Sprintf("chg-%04d", i), Namespace: "team-a", Watch: "orders", WatchUID: "uid-1",
			Kind: KindPipe, ItemID: fmt.Sprintf("pipe-%04d", i), ItemName: fmt.Sprintf("orders_%d", i),
			From: "Running", To: "Failed", Since: since.Add(time.Duration(i) * time.Second), Worse: true,
		}
	}
	return out
}

// testSink is a sink sending to url with short settings, its metrics in a
// registry of its own, not started.
func testSink(t *testing.T, url string, opts func(*SinkOptions), deps SinkDeps) (*CloudEventsSink, *prometheus.Registry) {
	t.Helper()
	o := DefaultSinkOptions()
	o.URL = url
	o.Timeout = 5 * time.Second
	if opts != nil {
		opts(&o)
	}
	reg := prometheus.NewRegistry()
	deps.Registerer = reg
	if deps.Jitter == nil {
		deps.Jitter = func() float64 { return 0.5 }
	}
	s, err := NewCloudEventsSink(o, deps)
	if err != nil {
		t.Fatal(err)
	}
	return s, reg
}

// start runs the sink until the end of the test, and returns what stops it
// and waits for it.
func start(t *testing.T, s *CloudEventsSink) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := s.Start(ctx); err != nil {
			t.Errorf("sink: %v", err)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// metric is the value of the series of name with the given label value
// ("" for a series without labels), 0 when absent.
func metric(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if label != "" && !hasLabelValue(m, label) {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			}
		}
	}
	return 0
}

func hasLabelValue(m *dto.Metric, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetValue() == value {
			return true
		}
	}
	return false
}

// eventually polls cond every 5 ms until it holds, failing the test after
// 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not after 10s: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// advance steps clock a second at a time, each time the sink waits on it,
// until done holds; it gives up after maxSteps.
func advance(t *testing.T, clock *clocktesting.FakeClock, maxSteps int, done func() bool) {
	t.Helper()
	for range maxSteps {
		eventually(t, "the sink waiting on its clock", func() bool { return done() || clock.HasWaiters() })
		if done() {
			return
		}
		clock.Step(time.Second)
	}
	t.Fatalf("not done after %d simulated seconds", maxSteps)
}

func TestSinkDeliversEachChangeWithItsAttributes(t *testing.T) {
	r := startReceiver(t, "127.0.0.1:0", nil, nil)
	s, reg := testSink(t, "http://"+r.addr+"/", nil, SinkDeps{})
	start(t, s)
	sent := testChanges(5)
	s.Offer(sent[:2])
	s.Offer(sent[2:])
	eventually(t, "5 events received", func() bool { return len(r.received()) == 5 })

	for i, e := range r.received() {
		c := sent[i]
		want := map[string]string{
			"specversion": "1.0", "id": c.ID, "type": "io.servicewatch.item.statechanged.v1",
			"source":  "/apis/cloud.servicewatch.io/namespaces/team-a/servicewatches/orders",
			"subject": "Pipe/" + c.ItemID, "time": c.Since.Format(time.RFC3339),
		}
		got := map[string]string{"specversion": e.SpecVersion(), "id": e.ID(), "type": e.Type(), "source": e.Source(),
			"subject": e.Subject(), "time": e.Time().Format(time.RFC3339)}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("event %d: %s = %q, want %q", i, k, got[k], v)
			}
		}
		ext := e.Extensions()
		for k, v := range map[string]string{"namespace": "team-a", "servicewatch": "orders", "itemkind": "Pipe", "itemid": c.ItemID} {
			if fmt.Sprint(ext[k]) != v {
				t.Errorf("event %d: extension %s = %v, want %q", i, k, ext[k], v)
			}
		}
		var data EventData
		if err := e.DataAs(&data); err != nil {
			t.Fatal(err)
		}
		wantData := EventData{Kind: KindPipe, ID: c.ItemID, Name: c.ItemName, From: "Running", To: "Failed", Since: c.Since, Worse: true}
		if data != wantData || e.DataContentType() != cloudevents.ApplicationJSON {
			t.Errorf("event %d: data %+v (%s), want %+v (application/json)", i, data, e.DataContentType(), wantData)
		}
	}
	for _, raw := range r.raw {
		if ct := raw.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/cloudevents+json") {
			t.Errorf("Content-Type %q: want structured mode, application/cloudevents+json", ct)
		}
	}
	if got := metric(t, reg, "servicewatch_change_events_sent_total", ""); got != 5 {
		t.Errorf("sent total %v, want 5", got)
	}
	eventually(t, "the queue empty", func() bool { return metric(t, reg, "servicewatch_change_events_queue_length", "") == 0 })
}

// The receiver is down for a minute, in simulated time (a fake clock
// stepped a second at a time whenever the sink waits, so the backoffs are
// those of the default settings: 1 s doubling to 5 min): the sink retries,
// and delivers every change once the receiver is back. The receiver that
// comes back first answers each event 503 with Retry-After: 200 (longer
// than the backoff), so each arrives twice with the same id, 200 s apart.
func TestSinkRetriesWhileTheReceiverIsDownAndDeliversOnceBack(t *testing.T) {
	addr := freeAddress(t)
	clock := clocktesting.NewFakeClock(time.Date(2026, 5, 4, 3, 0, 0, 0, time.UTC))
	s, reg := testSink(t, "http://"+addr+"/", nil, SinkDeps{Clock: clock})
	start(t, s)
	sent := testChanges(3)
	s.Offer(sent)

	began := clock.Now()
	advance(t, clock, 120, func() bool { return clock.Since(began) >= time.Minute })
	failed := metric(t, reg, "servicewatch_change_events_failed_attempts_total", "error")
	if failed < 6 {
		t.Errorf("%v failed attempts in a minute down, want at least 6 (1 s doubling)", failed)
	}
	if got := metric(t, reg, "servicewatch_change_events_queue_length", ""); got != 3 {
		t.Errorf("queue length %v while the receiver is down, want 3", got)
	}

	var mu sync.Mutex
	at := map[string][]time.Time{}
	refuseFirst := func(e cloudevents.Event, nth int) protocol.Result {
		mu.Lock()
		at[e.ID()] = append(at[e.ID()], clock.Now())
		mu.Unlock()
		if nth == 1 {
			return cehttp.NewResult(http.StatusServiceUnavailable, "starting")
		}
		return protocol.ResultACK
	}
	r := startReceiver(t, addr, refuseFirst, http.Header{"Retry-After": {"200"}})
	advance(t, clock, 2000, func() bool { return metric(t, reg, "servicewatch_change_events_sent_total", "") == 3 })

	got := r.received()
	ids := distinctIDs(got)
	if len(got) != 6 || len(ids) != 3 {
		t.Fatalf("received %d events with %d ids, want each of the 3 twice (once refused)", len(got), len(ids))
	}
	mu.Lock()
	defer mu.Unlock()
	for _, c := range sent {
		times := at[c.ID]
		if ids[c.ID] != 2 || len(times) != 2 {
			t.Errorf("change %s received %d times, want twice with the same id", c.ID, ids[c.ID])
			continue
		}
		if gap := times[1].Sub(times[0]); gap < 200*time.Second || gap > 201*time.Second {
			t.Errorf("change %s sent again %s after a 503 with Retry-After: 200", c.ID, gap)
		}
	}
	if got := metric(t, reg, "servicewatch_change_events_failed_attempts_total", "503"); got != 3 {
		t.Errorf("failed attempts code=503: %v, want 3", got)
	}
}

// A receiver that never answers holds the worker; Offer still returns at
// once, the queue stays at its bound, the overflow is counted, and memory
// does not grow with what is offered.
func TestSinkQueueStaysBoundedWhenTheReceiverNeverAnswers(t *testing.T) {
	release := make(chan struct{})
	hang := func(cloudevents.Event, int) protocol.Result {
		<-release
		return protocol.ResultACK
	}
	r := startReceiver(t, "127.0.0.1:0", hang, nil)
	t.Cleanup(func() { close(release) }) // before the receiver stops
	const capacity = 1000
	s, reg := testSink(t, "http://"+r.addr+"/", func(o *SinkOptions) { o.Queue, o.Timeout, o.Drain = capacity, time.Minute, 0 }, SinkDeps{})
	start(t, s)
	s.Offer(testChanges(1))
	eventually(t, "the worker stuck in a POST", func() bool { return len(r.received()) == 1 })

	const batches, perBatch = 100, 1000
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	began := time.Now()
	offered := make(chan struct{})
	go func() {
		defer close(offered)
		for range batches {
			s.Offer(testChanges(perBatch))
		}
	}()
	select {
	case <-offered:
	case <-time.After(10 * time.Second):
		t.Fatal("Offer blocked behind a receiver that does not answer")
	}
	took := time.Since(began)
	runtime.GC()
	runtime.ReadMemStats(&m1)
	t.Logf("%d changes offered in %s (%s each) while the worker was stuck; heap %+d KiB", batches*perBatch, took,
		took/(batches*perBatch), (int64(m1.HeapAlloc)-int64(m0.HeapAlloc))/1024)

	if got := metric(t, reg, "servicewatch_change_events_queue_length", ""); got != capacity+1 {
		t.Errorf("queue length %v, want the bound %d and the one in flight", got, capacity)
	}
	if got, want := metric(t, reg, "servicewatch_change_events_dropped_total", "queue_full"), float64(batches*perBatch-capacity); got != want {
		t.Errorf("dropped queue_full %v, want the overflow %v", got, want)
	}
	// 100,000 changes kept would be tens of MiB; the queue was full before
	// the measure, so nothing offered is kept.
	if grew := int64(m1.HeapAlloc) - int64(m0.HeapAlloc); grew > 2<<20 {
		t.Errorf("heap grew by %d KiB while a full queue refused every change", grew/1024)
	}
}

// A 4xx other than 408 and 429 says the change will never be taken: it is
// dropped and counted at once, not retried.
func TestSinkDropsWhatTheReceiverRejects(t *testing.T) {
	badRequest := func(cloudevents.Event, int) protocol.Result {
		return cehttp.NewResult(http.StatusBadRequest, "not for us")
	}
	r := startReceiver(t, "127.0.0.1:0", badRequest, nil)
	s, reg := testSink(t, "http://"+r.addr+"/", nil, SinkDeps{})
	start(t, s)
	s.Offer(testChanges(4))
	eventually(t, "4 changes rejected", func() bool { return metric(t, reg, "servicewatch_change_events_dropped_total", "rejected") == 4 })
	if got := len(r.received()); got != 4 {
		t.Errorf("the receiver saw %d requests, want each change once", got)
	}
	if sent, failed := metric(t, reg, "servicewatch_change_events_sent_total", ""), metric(t, reg, "servicewatch_change_events_failed_attempts_total", "400"); sent != 0 || failed != 0 {
		t.Errorf("sent %v, failed attempts %v: a rejection is neither", sent, failed)
	}
}

// With --deny-local-addresses the sink refuses a loopback receiver as cloud
// calls do, unless --change-sink-allowed-addresses names it.
func TestSinkDialGuard(t *testing.T) {
	r := startReceiver(t, "127.0.0.1:0", nil, nil)
	noDrain := func(o *SinkOptions) { o.Drain = 0 } // stop at once, in the backoff
	s, reg := testSink(t, "http://"+r.addr+"/", noDrain, SinkDeps{DenyLocalAddresses: true})
	start(t, s)
	s.Offer(testChanges(1))
	eventually(t, "an attempt refused", func() bool {
		return metric(t, reg, "servicewatch_change_events_failed_attempts_total", "address_not_allowed") == 1
	})
	if got := len(r.received()); got != 0 {
		t.Errorf("the guard let %d events reach a loopback receiver", got)
	}

	allowed, err := netip.ParsePrefix("127.0.0.1/32")
	if err != nil {
		t.Fatal(err)
	}
	s2, reg2 := testSink(t, "http://"+r.addr+"/", func(o *SinkOptions) { o.AllowedAddresses = []netip.Prefix{allowed} }, SinkDeps{DenyLocalAddresses: true})
	start(t, s2)
	s2.Offer(testChanges(1))
	eventually(t, "delivered to an allowed address", func() bool { return metric(t, reg2, "servicewatch_change_events_sent_total", "") == 1 })
}

// A change not delivered within --change-sink-retry-for is dropped as
// expired; a stopping manager keeps sending for --change-sink-drain, then
// counts what is left.
func TestSinkExpiresAndStopsWithinItsDrain(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 5, 4, 3, 0, 0, 0, time.UTC))
	s, reg := testSink(t, "http://"+freeAddress(t)+"/", func(o *SinkOptions) { o.RetryFor = 10 * time.Second }, SinkDeps{Clock: clock})
	stop := start(t, s)
	s.Offer(testChanges(3))
	advance(t, clock, 60, func() bool { return metric(t, reg, "servicewatch_change_events_dropped_total", "expired") == 3 })
	if got := metric(t, reg, "servicewatch_change_events_failed_attempts_total", "error"); got < 3 {
		t.Errorf("%v failed attempts before the changes expired", got)
	}

	s.Offer(testChanges(2))
	eventually(t, "the sink waiting to retry", clock.HasWaiters)
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	// The drain's timer and the backoff's: step past the drain.
	eventually(t, "the drain timer", func() bool { return clock.Waiters() == 2 })
	clock.Step(DefaultSinkDrain)
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the sink did not stop after its drain")
	}
	if got := metric(t, reg, "servicewatch_change_events_dropped_total", "shutdown"); got != 2 {
		t.Errorf("dropped shutdown %v, want 2", got)
	}
	s.Offer(testChanges(1))
	if got := metric(t, reg, "servicewatch_change_events_queue_length", ""); got != 0 {
		t.Errorf("a stopped sink queued %v changes", got)
	}
}

func TestSinkDrainsWhatIsQueuedWhenStopping(t *testing.T) {
	r := startReceiver(t, "127.0.0.1:0", nil, nil)
	s, reg := testSink(t, "http://"+r.addr+"/", nil, SinkDeps{})
	s.Offer(testChanges(20)) // queued before Start: the worker is not running
	stop := start(t, s)
	stop()
	if got := len(distinctIDs(r.received())); got != 20 {
		t.Errorf("%d of 20 queued changes delivered before the sink stopped", got)
	}
	if got := metric(t, reg, "servicewatch_change_events_dropped_total", "shutdown"); got != 0 {
		t.Errorf("dropped shutdown %v with the receiver up", got)
	}
}
