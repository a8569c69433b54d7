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
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cp.cfg.Host, "/")+"/metrics", http.NoBody)
	if err != nil {
		return 0, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	return countSecretGets(resp.Body)
}

// countSecretGets sums the apiserver_request_total series of GETs of
// secrets in a Prometheus text exposition.
func countSecretGets(r io.Reader) (int, error) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64<<10), 1<<20)
	total := 0.0
	for s.Scan() {
		line := s.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") ||
			!strings.Contains(line, `resource="secrets"`) || !strings.Contains(line, `verb="GET"`) {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("series %q: %w", line, err)
		}
		total += v
	}
	return int(total), s.Err()
}
