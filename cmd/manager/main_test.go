package main

import "testing"

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"--management-api-url=https://api.example.com/prefix/", "--alert-api-url=http://127.0.0.1:8090", "--management-rate-limit=5/10s", "--max-concurrent-syncs=8", "--reserved-budget-share=0.3"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.reconciler.ManagementAPIURL != "https://api.example.com/prefix/" || cfg.reconciler.AlertAPIURL != "http://127.0.0.1:8090" {
		t.Errorf("URLs: %q, %q", cfg.reconciler.ManagementAPIURL, cfg.reconciler.AlertAPIURL)
	}
	if cfg.budgets.managementRate.Requests != 5 || cfg.reconciler.MaxConcurrentSyncs != 8 {
		t.Errorf("management rate %+v, max concurrent syncs %d", cfg.budgets.managementRate, cfg.reconciler.MaxConcurrentSyncs)
	}
	if cfg.budgets.reservedShare != 0.3 {
		t.Errorf("reserved budget share %v, want 0.3", cfg.budgets.reservedShare)
	}

	for _, bad := range [][]string{
		{"--management-api-url=api.example.com"},
		{"--alert-api-url=ftp://alerts.example.com"},
		{"--max-concurrent-syncs=0"},
		{"--max-syncs-per-host=-1"},
		{"--max-syncs-per-host=0"},
		{"--max-syncs-per-namespace=0"},
		{"--reconcile-workers=-1"},
		{"--cloud-timeout=0s"},
		{"--status-size-limit=-1"},
		{"--namespace-status-budget=-1"},
		{"--total-status-budget=-5"},
		{"--alert-rate-limit=many"},
		{"--reserved-budget-share=1"},
		{"--reserved-budget-share=-0.1"},
		{"--watch-namespaces=team-a,Team_B"},
		{"--watch-label-selector=shard in (a"},
	} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%v was accepted", bad)
		}
	}
}

func TestParseScopeFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"--watch-namespaces= team-a, team-b ,", "--watch-label-selector=sharding.servicewatch.io/shard=one", "--leader-election-id=servicewatch-one"})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.reconciler.Scope.Namespaces; len(got) != 2 || got[0] != "team-a" || got[1] != "team-b" {
		t.Errorf("namespaces = %q", got)
	}
	if got := cfg.reconciler.Scope.WatchSelector.String(); got != "sharding.servicewatch.io/shard=one" {
		t.Errorf("selector = %q", got)
	}
	if cfg.leaderElection.id != "servicewatch-one" {
		t.Errorf("leader election ID = %q", cfg.leaderElection.id)
	}
	all, err := parseFlags(nil)
	if err != nil || len(all.reconciler.Scope.Namespaces) != 0 || all.reconciler.Scope.WatchSelector != nil {
		t.Errorf("by default the manager watches everything: %+v, %v", all.reconciler.Scope, err)
	}
}

func TestMetricsFlags(t *testing.T) {
	def, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if def.metrics.addr != ":8443" || !def.metrics.secure || !def.metrics.itemMetrics || def.metrics.enableHTTP2 {
		t.Errorf("defaults: address %q, %+v; want :8443, secure, item metrics, no HTTP/2", def.metrics.addr, def.metrics)
	}
	opts := metricsServerOptions(def.metrics)
	if !opts.SecureServing || opts.FilterProvider == nil {
		t.Error("by default metrics are not served over HTTPS with authentication and authorization")
	}
	dev, err := parseFlags([]string{"--metrics-secure=false", "--metrics-bind-address=:8080", "--item-metrics=false"})
	if err != nil {
		t.Fatal(err)
	}
	if opts := metricsServerOptions(dev.metrics); opts.SecureServing || opts.FilterProvider != nil || dev.metrics.itemMetrics {
		t.Errorf("--metrics-secure=false --item-metrics=false: %+v, item metrics %v", opts, dev.metrics.itemMetrics)
	}
}

func TestEgressFlags(t *testing.T) {
	def, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !def.reconciler.AllowedAPIURLs.IsEmpty() || def.cloud.DenyLocalAddresses {
		t.Errorf("by default the binary allows every URL and address (the demo's fake cloud is on loopback): %v, deny %v",
			def.reconciler.AllowedAPIURLs, def.cloud.DenyLocalAddresses)
	}
	cfg, err := parseFlags([]string{"--allowed-api-urls=https://api.example.com, alerts.example.com", "--deny-local-addresses",
		"--management-api-url=https://api.example.com/", "--alert-api-url=http://alerts.example.com:8080"})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.cloud.DenyLocalAddresses {
		t.Error("--deny-local-addresses did not set the client's option")
	}
	if err := cfg.reconciler.AllowedAPIURLs.Allows("https://evil.example.com"); err == nil {
		t.Error("the allow list lets https://evil.example.com through")
	}
	if err := cfg.reconciler.AllowedAPIURLs.Allows("https://api.example.com/v0"); err != nil {
		t.Errorf("the allow list refuses a URL on it: %v", err)
	}
	for _, bad := range [][]string{
		{"--allowed-api-urls=ftp://api.example.com"},
		{"--allowed-api-urls=https://api.example.com", "--management-api-url=https://other.example.com"},
		{"--allowed-api-urls=https://api.example.com", "--alert-api-url=http://api.example.com"},
	} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%v was accepted", bad)
		}
	}
}

// The storage migration runs unless an install that migrates its CRDs
// elsewhere turns it off.
func TestStorageMigrationFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{{nil, true}, {[]string{"--storage-migration=false"}, false}} {
		cfg, err := parseFlags(c.args)
		if err != nil || cfg.storageMigration.enabled != c.want {
			t.Errorf("%v: storage migration %v (%v), want %v", c.args, cfg.storageMigration.enabled, err, c.want)
		}
	}
}

// The change sink is off unless a URL is given, and its flags reach the
// sink's options; values that could only fail later are refused at start.
func TestChangeSinkFlags(t *testing.T) {
	def, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if def.changeSink.Enabled() || def.changeSink.Queue != 10000 {
		t.Errorf("defaults: %+v; want no sink, a queue of 10000", def.changeSink)
	}
	cfg, err := parseFlags([]string{"--change-sink-url=http://receiver.events.svc:8080/", "--change-sink-queue=500", "--change-sink-timeout=3s",
		"--change-sink-workers=2", "--change-sink-allowed-addresses=127.0.0.1, 10.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.changeSink
	if !s.Enabled() || s.URL != "http://receiver.events.svc:8080/" || s.Queue != 500 || s.Timeout.String() != "3s" || s.Workers != 2 || len(s.AllowedAddresses) != 2 {
		t.Errorf("change sink options %+v", s)
	}
	for _, bad := range [][]string{
		{"--change-sink-url=receiver:8080"},
		{"--change-sink-url=http://user:secret@receiver:8080"},
		{"--change-sink-url=http://receiver:8080", "--change-sink-queue=0"},
		{"--change-sink-url=http://receiver:8080", "--change-sink-timeout=0s"},
		{"--change-sink-url=http://receiver:8080", "--change-sink-min-backoff=10s", "--change-sink-max-backoff=1s"},
		{"--change-sink-allowed-addresses=localhost"},
	} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%v was accepted", bad)
		}
	}
}
