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
