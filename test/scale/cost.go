package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// clockTicks is the unit of utime and stime in /proc/<pid>/stat (USER_HZ,
// 100 on every Linux the benchmark runs on).
const clockTicks = 100

// cpuOf is the CPU time (user and system) the process has used so far.
func cpuOf(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseProcStat(string(raw))
}

// parseProcStat reads utime and stime (fields 14 and 15) of /proc/<pid>/stat;
// the command name, field 2, may hold spaces, so fields count from its ")".
func parseProcStat(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name in %q", stat)
	}
	fields := strings.Fields(stat[i+1:]) // fields[0] is field 3
	if len(fields) < 13 {
		return 0, fmt.Errorf("short stat line %q", stat)
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// secretGets is how many GETs of single Secrets the API server has served
// (any code), from its apiserver_request_total: the harness never reads a
// Secret, so on a fresh control plane they are the manager's.
func (cp *controlPlane) secretGets(ctx context.Context) (int, error) {
	hc, err := rest.HTTPClientFor(cp.cfg)
	if err != nil {
		return 0, err
	}
	sums, err := scrape(ctx, hc, strings.TrimSuffix(cp.cfg.Host, "/")+"/metrics", secretGetSeries)
	if err != nil {
		return 0, err
	}
	return int(sums[0]), nil
}

// statusWrites is how many writes (PATCH or PUT, any code) of
// ServiceWatches' status the API server has served: the harness writes none.
func (cp *controlPlane) statusWrites(ctx context.Context) (int, error) {
	hc, err := rest.HTTPClientFor(cp.cfg)
	if err != nil {
		return 0, err
	}
	sums, err := scrape(ctx, hc, strings.TrimSuffix(cp.cfg.Host, "/")+"/metrics", statusWriteSeries("PATCH"), statusWriteSeries("PUT"))
	if err != nil {
		return 0, err
	}
	return int(sums[0] + sums[1]), nil
}

// statusWriteSeries are the apiserver_request_total series of one verb on
// ServiceWatches' status.
func statusWriteSeries(verb string) func(line string) bool {
	return seriesOf("apiserver_request_total", `resource="servicewatches"`, `subresource="status"`, `verb="`+verb+`"`)
}

// secretGetSeries are the apiserver_request_total series of GETs of Secrets.
var secretGetSeries = seriesOf("apiserver_request_total", `resource="secrets"`, `verb="GET"`)

// reconciles is what a manager's work queue did, from its own metrics: every
// reconcile, and those the client-side budget put off. Waiting is cheap when
// a watch that waits for its budget is reconciled about once more, not once
// per room the budget makes.
type reconciles struct {
	total, deferred float64
}

// reconcilesOf scrapes a manager's metrics endpoint (plain HTTP) at url, once.
func reconcilesOf(ctx context.Context, url string) (reconciles, error) {
	sums, err := scrape(ctx, http.DefaultClient, url,
		seriesOf("controller_runtime_reconcile_total"), seriesOf("servicewatch_sync_deferrals_total"))
	if err != nil {
		return reconciles{}, err
	}
	return reconciles{total: sums[0], deferred: sums[1]}, nil
}

// scrape reads the Prometheus text exposition at url once and sums, for each
// matcher, the series it matches.
func scrape(ctx context.Context, hc *http.Client, url string, matchers ...func(line string) bool) ([]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return sumSeries(resp.Body, matchers...)
}

// seriesOf matches the series of metric name whose labels hold every one of
// labels (each as name="value").
func seriesOf(name string, labels ...string) func(line string) bool {
	return func(line string) bool {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			return false
		}
		for _, l := range labels {
			if !strings.Contains(line, l) {
				return false
			}
		}
		return true
	}
}

// sumSeries sums, for each matcher, the values of the series it matches in a
// Prometheus text exposition.
func sumSeries(r io.Reader, matchers ...func(line string) bool) ([]float64, error) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64<<10), 1<<20)
	sums := make([]float64, len(matchers))
	for s.Scan() {
		line := s.Text()
		for i, match := range matchers {
			if !match(line) {
				continue
			}
			fields := strings.Fields(line)
			v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
			if err != nil {
				return nil, fmt.Errorf("series %q: %w", line, err)
			}
			sums[i] += v
		}
	}
	return sums, s.Err()
}
