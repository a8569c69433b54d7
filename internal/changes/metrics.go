package changes

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Why a change was dropped, the reason label of
// servicewatch_change_events_dropped_total.
const (
	// DropQueueFull: the queue was full when the change was offered.
	DropQueueFull = "queue_full"
	// DropRejected: the receiver answered 4xx (not 408 or 429), or 3xx:
	// sending it again would get the same answer.
	DropRejected = "rejected"
	// DropExpired: not delivered within --change-sink-retry-for.
	DropExpired = "expired"
	// DropShutdown: still queued when the manager stopped and its drain
	// ended.
	DropShutdown = "shutdown"
)

// sinkMetrics are the CloudEvents sink's Prometheus metrics.
type sinkMetrics struct {
	sent     prometheus.Counter
	failed   *prometheus.CounterVec
	dropped  *prometheus.CounterVec
	queueLen prometheus.GaugeFunc
}

// newSinkMetrics creates the sink's metrics and registers them with reg;
// queueLen is read at each scrape.
func newSinkMetrics(reg prometheus.Registerer, queueLen func() int) (*sinkMetrics, error) {
	m := &sinkMetrics{
		sent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "servicewatch_change_events_sent_total",
			Help: "Item state changes the CloudEvents sink delivered (the receiver answered 2xx).",
		}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "servicewatch_change_events_failed_attempts_total",
			Help: "Attempts to send a change to the CloudEvents sink that failed, by HTTP status code or a word (error, timeout, canceled, address_not_allowed) when there was no answer; a change that fails for a while is sent again.",
		}, []string{"code"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "servicewatch_change_events_dropped_total",
			Help: "Item state changes the CloudEvents sink will never deliver, by reason: queue_full, rejected (a 4xx other than 408 and 429, or a redirect), expired (not delivered within --change-sink-retry-for), shutdown (still queued when the manager stopped).",
		}, []string{"reason"}),
		queueLen: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "servicewatch_change_events_queue_length",
			Help: "Item state changes waiting to be sent to the CloudEvents sink, those being sent or retried included.",
		}, func() float64 { return float64(queueLen()) }),
	}
	for _, c := range []prometheus.Collector{m.sent, m.failed, m.dropped, m.queueLen} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	for _, r := range []string{DropQueueFull, DropRejected, DropExpired, DropShutdown} {
		m.dropped.WithLabelValues(r) // every reason shows 0 from the start
	}
	return m, nil
}
