package controller

import (
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/servicewatch/servicewatch/internal/egress"
)

// Options tune the reconciler; the manager's flags set them.
type Options struct {
	// ManagementAPIURL is used when a watch's spec.managementApi.url is empty.
	ManagementAPIURL string
	// AlertAPIURL is used when a watch's spec.alertApi.url is empty.
	AlertAPIURL string
	// AllowedAPIURLs is where watches may send their credentials: a watch
	// whose API URL is not on it is Stalled (URLNotAllowed) before its
	// Secret is read. The zero value allows every URL.
	AllowedAPIURLs egress.URLAllowList
	// Scope is what the manager watches: its cache (CacheOptions) and the
	// Secrets it watches are confined to the same namespaces.
	Scope Scope
	// MaxConcurrentReconciles is how many reconcile workers run. They do
	// only Kubernetes work: cloud reads run in the background.
	MaxConcurrentReconciles int
	// MaxConcurrentSyncs bounds the syncs calling the cloud at once, each
	// counted once per API host it is calling (a sync holds a host's slot
	// only while it calls that host). Default DefaultMaxConcurrentSyncs.
	MaxConcurrentSyncs int
	// MaxSyncsPerHost bounds the syncs calling one API host at once, so
	// that a host that hangs holds at most that many of MaxConcurrentSyncs.
	// Default DefaultMaxSyncsPerHost.
	MaxSyncsPerHost int
	// MaxSyncsPerNamespace bounds the syncs of one namespace's watches
	// calling the cloud at once, on all hosts together, so that one
	// namespace (however many watches and hosts it has) leaves the rest of
	// the slots to the others. Default DefaultMaxSyncsPerNamespace.
	MaxSyncsPerNamespace int
	// AlertConcurrency is how many alerts of one watch are fetched at once.
	AlertConcurrency int
	// StatusSizeLimit bounds the JSON size of a status; lists are truncated
	// past it. Default DefaultStatusSizeLimit.
	StatusSizeLimit int
	// SyncTimeout bounds one whole sync.
	SyncTimeout time.Duration
	// AlertListRetry is how long a host without an alert list route is read
	// one alert at a time before its list is tried again. Default 10m.
	AlertListRetry time.Duration
}

// DefaultOptions are the options' defaults: the manager's flags show them,
// and the reconciler fills in any option left zero with them.
func DefaultOptions() Options {
	return Options{
		MaxConcurrentReconciles: 4,
		MaxConcurrentSyncs:      DefaultMaxConcurrentSyncs,
		MaxSyncsPerHost:         DefaultMaxSyncsPerHost,
		MaxSyncsPerNamespace:    DefaultMaxSyncsPerNamespace,
		AlertConcurrency:        4,
		StatusSizeLimit:         DefaultStatusSizeLimit,
		SyncTimeout:             2 * time.Minute,
	}
}

// withDefaults is o with its zero tunables set to DefaultOptions'.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	for _, v := range []struct {
		field *int
		def   int
	}{
		{&o.MaxConcurrentReconciles, d.MaxConcurrentReconciles}, {&o.MaxConcurrentSyncs, d.MaxConcurrentSyncs},
		{&o.MaxSyncsPerHost, d.MaxSyncsPerHost}, {&o.MaxSyncsPerNamespace, d.MaxSyncsPerNamespace}, {&o.AlertConcurrency, d.AlertConcurrency}, {&o.StatusSizeLimit, d.StatusSizeLimit},
	} {
		if *v.field == 0 {
			*v.field = v.def
		}
	}
	if o.SyncTimeout == 0 {
		o.SyncTimeout = d.SyncTimeout
	}
	return o
}

// The default read slots. A sync holds a host's slot only while it calls
// that host (see reads.Slots), and the namespaces that wait take turns, so the
// bounds are chosen from what one tenant must not be able to take from the
// others (issue 17), as well as from the API server's load:
//
//   - DefaultMaxSyncsPerNamespace: one namespace's watches hold at most 3
//     slots, whatever hosts they name and however many they are. 3 syncs in
//     flight is the most at which 1,000 new watches still sync at the
//     cloud's pace on a 2-core control plane (make bench-scale: 1.08 to
//     1.11 times the bound N × latency / slots; 1.10 to 1.61 at 4, no faster
//     at 8 or 16, where status writes saturate the API server), and what the
//     previous default of 3 per host gave a namespace on one host: a
//     namespace alone loses nothing by it.
//   - DefaultMaxSyncsPerHost: 16, five namespaces' worth. The real
//     management API is one host for every tenant: per-host slots alone do
//     not separate tenants there, and a namespace whose calls hang until
//     the client gives up must leave the others most of that host.
//   - DefaultMaxConcurrentSyncs: 32, ten namespaces' worth and two hosts'
//     worth: a host that hangs for everyone holds at most half of all.
//
// A cluster whose many namespaces sync at once, or whose cloud answers
// slowly, raises them (servicewatch_sync_slot_wait_seconds tells).
const (
	// DefaultMaxConcurrentSyncs is the default bound on syncs calling the
	// cloud at once, on all hosts.
	DefaultMaxConcurrentSyncs = 32
	// DefaultMaxSyncsPerHost is the default bound on syncs calling one API
	// host at once.
	DefaultMaxSyncsPerHost = 16
	// DefaultMaxSyncsPerNamespace is the default bound on syncs of one
	// namespace calling the cloud at once.
	DefaultMaxSyncsPerNamespace = 3
)

// BindFlags binds the manager's flags that set o to fs, with
// DefaultOptions' values as their defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	d := DefaultOptions()
	fs.Func("watch-namespaces", "Comma-separated namespaces to watch (ServiceWatches, Secrets); empty means all.", namespaces(&o.Scope.Namespaces))
	fs.Func("watch-label-selector", "Label selector of the ServiceWatches this manager syncs (e.g. sharding.servicewatch.io/shard=shard1); empty means all. Run one manager per shard.", labelSelector(&o.Scope))
	fs.Func("management-api-url", "Management API base URL for watches whose spec.managementApi.url is empty.", baseURL(&o.ManagementAPIURL))
	fs.Func("alert-api-url", "Alert API base URL for watches whose spec.alertApi.url is empty.", baseURL(&o.AlertAPIURL))
	fs.Func("allowed-api-urls", "Comma-separated API base URLs (https://api.example.com, https://gw.example.com/cloud: that scheme, host and port, paths under it) and hosts (alerts.example.com, *.example.com, api.example.com:8443) that watches may send their credentials to; a watch with another URL is Stalled (URLNotAllowed) before its Secret is read. Empty allows every URL.", allowList(&o.AllowedAPIURLs))
	fs.IntVar(&o.MaxConcurrentSyncs, "max-concurrent-syncs", d.MaxConcurrentSyncs, "How many syncs may call the cloud at once, each counted once per API host it is calling (a sync holds a host's slot only while it calls that host).")
	fs.IntVar(&o.MaxSyncsPerHost, "max-syncs-per-host", d.MaxSyncsPerHost, "How many of those may call one API host, so that a host that hangs holds at most that many; one host serves at most this many divided by its latency syncs per second.")
	fs.IntVar(&o.MaxSyncsPerNamespace, "max-syncs-per-namespace", d.MaxSyncsPerNamespace, "How many of those the watches of one namespace may hold, on all hosts together, so that one namespace leaves the rest to the others (namespaces that wait take turns); one namespace syncs at most this many divided by the cloud's latency per second.")
	fs.IntVar(&o.MaxConcurrentReconciles, "reconcile-workers", d.MaxConcurrentReconciles, "How many reconcile workers run; they do only Kubernetes work (cloud calls run in the background).")
	fs.IntVar(&o.AlertConcurrency, "alert-concurrency", d.AlertConcurrency, "How many alerts of one ServiceWatch are fetched at once.")
	fs.IntVar(&o.StatusSizeLimit, "status-size-limit", d.StatusSizeLimit, "Largest status in bytes, each item charged the larger of its JSON and its decoded size (the manager's cache holds it decoded); the lists are truncated past it.")
	fs.DurationVar(&o.SyncTimeout, "sync-timeout", d.SyncTimeout, "Longest one sync may take.")
}

// Validate refuses, at start, options that could only fail later, one watch
// at a time: a bound that is not positive, and a fallback URL that the allow
// list refuses (it would stall every watch that uses it).
func (o *Options) Validate() error {
	for _, v := range []struct {
		flag  string
		value int64
	}{
		{"--max-concurrent-syncs", int64(o.MaxConcurrentSyncs)},
		{"--max-syncs-per-host", int64(o.MaxSyncsPerHost)},
		{"--max-syncs-per-namespace", int64(o.MaxSyncsPerNamespace)},
		{"--reconcile-workers", int64(o.MaxConcurrentReconciles)},
		{"--alert-concurrency", int64(o.AlertConcurrency)},
		{"--status-size-limit", int64(o.StatusSizeLimit)},
		{"--sync-timeout", int64(o.SyncTimeout)},
	} {
		if v.value <= 0 {
			return fmt.Errorf("%s must be positive", v.flag)
		}
	}
	for _, u := range []struct{ flag, url string }{{"--management-api-url", o.ManagementAPIURL}, {"--alert-api-url", o.AlertAPIURL}} {
		if u.url == "" {
			continue
		}
		if err := o.AllowedAPIURLs.Allows(u.url); err != nil {
			return fmt.Errorf("%s: %w", u.flag, err)
		}
	}
	return nil
}

// namespaces accepts a comma-separated list of namespace names.
func namespaces(dst *[]string) func(string) error {
	return func(value string) error {
		*dst = nil
		for ns := range strings.SplitSeq(value, ",") {
			ns = strings.TrimSpace(ns)
			if ns == "" {
				continue
			}
			if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
				return fmt.Errorf("%q is not a namespace name: %s", ns, errs[0])
			}
			*dst = append(*dst, ns)
		}
		return nil
	}
}

// labelSelector accepts a label selector in kubectl's syntax into the
// scope's selector.
func labelSelector(scope *Scope) func(string) error {
	return func(value string) error {
		sel, err := labels.Parse(value)
		if err != nil {
			return fmt.Errorf("%q is not a label selector: %w", value, err)
		}
		scope.WatchSelector = sel
		return nil
	}
}

// allowList accepts a comma-separated egress.URLAllowList.
func allowList(dst *egress.URLAllowList) func(string) error {
	return func(value string) error {
		var entries []string
		for e := range strings.SplitSeq(value, ",") {
			if e = strings.TrimSpace(e); e != "" {
				entries = append(entries, e)
			}
		}
		l, err := egress.ParseURLAllowList(entries)
		if err != nil {
			return err
		}
		*dst = l
		return nil
	}
}

// baseURL accepts an absolute http(s) URL, the only kind the cloud client can
// call.
func baseURL(dst *string) func(string) error {
	return func(value string) error {
		u, err := url.Parse(value)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%q is not an absolute http:// or https:// URL", value)
		}
		*dst = value
		return nil
	}
}
