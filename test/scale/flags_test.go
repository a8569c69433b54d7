package main

import (
	"maps"
	"testing"
)

func TestParseFlagDefaults(t *testing.T) {
	help := `Usage of manager:
  -alert-api-url string
    	The alert API's base URL. (default "https://alerts.example")
  -max-concurrent-syncs int
    	How many ServiceWatches may have cloud calls in flight at once. (default 32)
  -max-syncs-per-host int
    	How many of those may call one API host (0: half of --max-concurrent-syncs).
  -reconcile-workers int
    	How many reconcile workers run. (default 4)
  -status-size-limit int
    	Bytes. (default -1)
`
	want := map[string]int{"max-concurrent-syncs": 32, "max-syncs-per-host": 0, "reconcile-workers": 4, "status-size-limit": -1}
	if got := parseFlagDefaults(help); !maps.Equal(got, want) {
		t.Errorf("parseFlagDefaults = %v, want %v", got, want)
	}
}
