package controller

import (
	"flag"
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/servicewatch/servicewatch/internal/egress"
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
