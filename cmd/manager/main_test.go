package main

import "testing"

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"--management-api-url=https://api.example.com/prefix/", "--alert-api-url=http://127.0.0.1:8090", "--management-rate-limit=5/10s", "--max-concurrent-syncs=8"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.reconciler.ManagementAPIURL != "https://api.example.com/prefix/" || cfg.reconciler.AlertAPIURL != "http://127.0.0.1:8090" {
		t.Errorf("URLs: %q, %q", cfg.reconciler.ManagementAPIURL, cfg.reconciler.AlertAPIURL)
	}
	if cfg.cloud.ManagementRate.Requests != 5 || cfg.reconciler.MaxConcurrentReconciles != 8 {
		t.Errorf("management rate %+v, max concurrent syncs %d", cfg.cloud.ManagementRate, cfg.reconciler.MaxConcurrentReconciles)
	}

	for _, bad := range [][]string{
		{"--management-api-url=api.example.com"},
		{"--alert-api-url=ftp://alerts.example.com"},
		{"--max-concurrent-syncs=0"},
		{"--cloud-timeout=0s"},
		{"--status-size-limit=-1"},
		{"--alert-rate-limit=many"},
	} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%v was accepted", bad)
		}
	}
}

func TestMetricsFlags(t *testing.T) {
	def, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if def.metricsAddr != ":8443" || !def.metrics.secure || !def.metrics.itemMetrics || def.metrics.enableHTTP2 {
		t.Errorf("defaults: address %q, %+v; want :8443, secure, item metrics, no HTTP/2", def.metricsAddr, def.metrics)
	}
	opts := metricsServerOptions(def.metricsAddr, def.metrics)
	if !opts.SecureServing || opts.FilterProvider == nil {
		t.Error("by default metrics are not served over HTTPS with authentication and authorization")
	}
	dev, err := parseFlags([]string{"--metrics-secure=false", "--metrics-bind-address=:8080", "--item-metrics=false"})
	if err != nil {
		t.Fatal(err)
	}
	if opts := metricsServerOptions(dev.metricsAddr, dev.metrics); opts.SecureServing || opts.FilterProvider != nil || dev.metrics.itemMetrics {
		t.Errorf("--metrics-secure=false --item-metrics=false: %+v, item metrics %v", opts, dev.metrics.itemMetrics)
	}
}
