package changes

import (
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"net/url"
	"time"

	"github.com/servicewatch/servicewatch/internal/egress"
)

// Defaults of the CloudEvents sink's settings.
const (
	DefaultSinkQueue      = 10000
	DefaultSinkWorkers    = 1
	DefaultSinkTimeout    = 10 * time.Second
	DefaultSinkMinBackoff = time.Second
	DefaultSinkMaxBackoff = 5 * time.Minute
	DefaultSinkRetryFor   = time.Hour
	DefaultSinkDrain      = 5 * time.Second
)

// SinkOptions are the CloudEvents sink's settings, set by the manager's
// flags (BindFlags). The platform team sets them for the whole manager: where
// every namespace's changes go is theirs to decide, not a tenant's.
type SinkOptions struct {
	// URL is where each change is POSTed; empty: no sink.
	URL string
	// Queue bounds the changes waiting to be sent; past it a change is
	// dropped and counted, never waited for.
	Queue int
	// Workers send at once; with more than one, two changes of one item
	// may arrive out of order (their time orders them).
	Workers int
	// Timeout bounds one POST, from dial to the answer's last byte.
	Timeout time.Duration
	// MinBackoff and MaxBackoff bound the wait before a retry, doubled
	// from MinBackoff at each failure of the same change.
	MinBackoff, MaxBackoff time.Duration
	// RetryFor is how long a change is retried after it was offered; then
	// it is dropped as expired.
	RetryFor time.Duration
	// Drain is how long a stopping manager keeps sending what is queued.
	Drain time.Duration
	// AllowedAddresses are the addresses the dial guard
	// (--deny-local-addresses) lets the sink reach though it refuses them
	// for cloud calls: a receiver on the manager's Pod or node.
	AllowedAddresses []netip.Prefix
}

// DefaultSinkOptions are the settings without flags: no sink.
func DefaultSinkOptions() SinkOptions {
	return SinkOptions{
		Queue: DefaultSinkQueue, Workers: DefaultSinkWorkers, Timeout: DefaultSinkTimeout,
		MinBackoff: DefaultSinkMinBackoff, MaxBackoff: DefaultSinkMaxBackoff, RetryFor: DefaultSinkRetryFor, Drain: DefaultSinkDrain,
	}
}

// BindFlags defines the sink's flags on fs, with o's values as defaults.
func (o *SinkOptions) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.URL, "change-sink-url", o.URL, "URL each item state change is POSTed to as a CloudEvent (structured JSON, type "+EventType+"), e.g. a Knative Broker or an Argo Events webhook; empty: none. Set by the platform team for every namespace; it need not be (and should not be) in --allowed-api-urls.")
	fs.IntVar(&o.Queue, "change-sink-queue", o.Queue, "Changes waiting to be sent, at most; past it a change is dropped and counted (servicewatch_change_events_dropped_total{reason=\"queue_full\"}), and a sync never waits.")
	fs.IntVar(&o.Workers, "change-sink-workers", o.Workers, "Changes sent at once; with more than one, two changes of one item may arrive out of order (order them by the event's time).")
	fs.DurationVar(&o.Timeout, "change-sink-timeout", o.Timeout, "Timeout of one POST to the sink.")
	fs.DurationVar(&o.MinBackoff, "change-sink-min-backoff", o.MinBackoff, "First wait before a change is sent again after a failure (no answer, 5xx, 408, 429); doubled at each failure, with jitter.")
	fs.DurationVar(&o.MaxBackoff, "change-sink-max-backoff", o.MaxBackoff, "Longest wait between two attempts to send a change, a Retry-After included.")
	fs.DurationVar(&o.RetryFor, "change-sink-retry-for", o.RetryFor, "How long after it was offered a change is still sent; then it is dropped (reason=\"expired\").")
	fs.DurationVar(&o.Drain, "change-sink-drain", o.Drain, "How long a stopping manager keeps sending the queued changes; what is left is dropped (reason=\"shutdown\").")
	fs.Func("change-sink-allowed-addresses", "Comma-separated IP addresses and CIDR prefixes the sink may connect to although --deny-local-addresses refuses them for cloud calls (127.0.0.1 for a receiver beside the manager in its Pod); a cloud metadata address stays refused.", func(v string) error {
		p, err := egress.ParsePrefixes(v)
		o.AllowedAddresses = p
		return err
	})
}

// Enabled reports whether a sink is configured.
func (o SinkOptions) Enabled() bool { return o.URL != "" }

// Validate refuses settings that could only fail later.
func (o SinkOptions) Validate() error {
	if !o.Enabled() {
		return nil
	}
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--change-sink-url: %q is not an absolute http:// or https:// URL", o.URL)
	}
	if u.User != nil {
		return errors.New("--change-sink-url: a user or password in the URL would be logged; put the receiver behind its own authentication")
	}
	for name, v := range map[string]int64{
		"--change-sink-queue": int64(o.Queue), "--change-sink-workers": int64(o.Workers), "--change-sink-timeout": int64(o.Timeout),
		"--change-sink-min-backoff": int64(o.MinBackoff), "--change-sink-max-backoff": int64(o.MaxBackoff), "--change-sink-retry-for": int64(o.RetryFor),
	} {
		if v <= 0 {
			return fmt.Errorf("%s must be positive", name)
		}
	}
	if o.MaxBackoff < o.MinBackoff {
		return errors.New("--change-sink-max-backoff must not be less than --change-sink-min-backoff")
	}
	if o.Drain < 0 {
		return errors.New("--change-sink-drain must not be negative")
	}
	return nil
}
