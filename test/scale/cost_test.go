package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	// A command name with a space and a parenthesis, as the kernel allows.
	stat := "4242 (my (mgr) x) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 12 0 100 1000000 2000 18446744073709551615"
	got, err := parseProcStat(stat)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3250 * time.Millisecond; got != want {
		t.Errorf("cpu = %v, want %v", got, want)
	}
}

func TestSumSeries(t *testing.T) {
	exposition := `# HELP apiserver_request_total Counter of apiserver requests
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="secrets",scope="resource",subresource="",verb="GET",version="v1"} 1200
apiserver_request_total{code="404",component="apiserver",dry_run="",group="",resource="secrets",scope="resource",subresource="",verb="GET",version="v1"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="secrets",scope="namespace",subresource="",verb="LIST",version="v1"} 7
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="secrets",scope="resource",subresource="",verb="POST",version="v1"} 8
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1"} 5
`
	got, err := sumSeries(strings.NewReader(exposition), secretGetSeries)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != 1203 {
		t.Errorf("secret GETs = %v, want 1203", got[0])
	}

	manager := `# HELP controller_runtime_reconcile_total Total number of reconciliations per controller
controller_runtime_reconcile_total{controller="servicewatch",result="error"} 0
controller_runtime_reconcile_total{controller="servicewatch",result="requeue_after"} 4453
controller_runtime_reconcile_total{controller="servicewatch",result="success"} 987
controller_runtime_reconcile_total_other{controller="servicewatch"} 5
servicewatch_sync_deferrals_total{api="management"} 1992
servicewatch_sync_deferrals_total{api="alert"} 8
`
	// Both sums come from one read of the exposition, as reconcilesOf takes them.
	got, err = sumSeries(strings.NewReader(manager),
		seriesOf("controller_runtime_reconcile_total"), seriesOf("servicewatch_sync_deferrals_total"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{5440, 2000}; !slices.Equal(got, want) {
		t.Errorf("reconciles, deferrals = %v, want %v", got, want)
	}
}
