package cloudapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/tenancy"
)

// victimScale shrinks the hostile answer, the work budget and the
// namespace's share by the same factor: each read costs that much less CPU,
// so that the benchmark does not hold a shared machine's cores for long,
// while the waits the share imposes are those of the defaults.
const victimScale = 16

// BenchmarkVictimLatencyUnderHostileNamespace runs a hostile namespace that
// serves the costliest answer it can (16 MiB/victimScale of {} items) from
// three reads at once (the read slots a namespace has), back to back,
// while a victim namespace reads a small list of real pipes every 50 ms;
// both through one client, as in the manager. It reports the victim's
// latency (p50, p99), the process's CPU (cores, from getrusage) and the
// hostile reads made. Variants: no hostile namespace; "before", without a
// decode work budget or shares (the operator before issue 27); "after",
// with the default budget per byte and the default shares, scaled.
func BenchmarkVictimLatencyUnderHostileNamespace(b *testing.B) {
	hostile := []byte(`{"status":200,"requestId":"r","result":[` + strings.Repeat(`{},`, (cloudapi.DefaultMaxResponseBytes/victimScale-64)/3) + `{}]}`)
	victim, err := os.ReadFile("testdata/pipes.json")
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		body := victim
		if strings.Contains(r.URL.Path, "hostile") {
			body = hostile
		}
		_, _ = w.Write(body)
	}))
	b.Cleanup(srv.Close)
	noBudget := int64(1) << 62
	variants := []struct {
		name     string
		hostile  bool
		maxWork  int64
		newShare func() *tenancy.WorkShares
	}{
		{"no_hostile", false, 0, func() *tenancy.WorkShares { return nil }},
		{"before", true, noBudget, func() *tenancy.WorkShares { return nil }},
		{"after", true, 0, func() *tenancy.WorkShares {
			return tenancy.NewWorkShares(tenancy.DefaultWorkRate/victimScale, tenancy.DefaultWorkBurst/victimScale, time.Now)
		}},
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			for b.Loop() {
				maxWork := v.maxWork
				if maxWork == 0 {
					maxWork = cloudapi.DefaultDecodeWorkPerByte * cloudapi.DefaultMaxResponseBytes / victimScale
				}
				c := newClient(cloudapi.Options{MaxResponseBytes: cloudapi.DefaultMaxResponseBytes, MaxDecodeWork: maxWork, Timeout: time.Minute})
				r := runVictimScenario(b, c, srv.URL, v.hostile, v.newShare(), 20*time.Second)
				b.ReportMetric(r.p50.Seconds()*1000, "victim-p50-ms")
				b.ReportMetric(r.p99.Seconds()*1000, "victim-p99-ms")
				b.ReportMetric(r.cores, "cpu-cores")
				b.ReportMetric(float64(r.hostileReads), "hostile-reads")
			}
		})
	}
}

type victimResult struct {
	p50, p99     time.Duration
	cores        float64
	hostileReads int
}

// runVictimScenario runs the hostile namespace (when hostile) and the
// victim for d through c, pacing each namespace's reads by shares as the
// controller's admission does.
func runVictimScenario(b *testing.B, c *cloudapi.Client, url string, hostile bool, shares *tenancy.WorkShares, d time.Duration) victimResult {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	read := func(namespace string) (time.Duration, error) {
		if wait := shares.Wait(namespace); wait > 0 {
			select { // deferred, as admission requeues the sync
			case <-time.After(wait):
			case <-ctx.Done():
			}
			return 0, ctx.Err()
		}
		start := time.Now()
		_, err := c.ListPipes(ctx, url+"/"+namespace, testCreds, orgID, svcID, cloudapi.ListOptions[swv1.Pipe]{
			KeepBytes: 800 << 10, Work: func(units int64) { shares.Charge(namespace, units) }})
		return time.Since(start), err
	}
	cpuBefore := cpuTime()
	var res victimResult
	var mu sync.Mutex
	var wg sync.WaitGroup
	if hostile {
		for range 3 {
			wg.Go(func() {
				for ctx.Err() == nil {
					if _, err := read("hostile"); err == nil || cloudapi.ReasonOf(err) == cloudapi.ReasonDecodeBudgetExceeded {
						mu.Lock()
						res.hostileReads++
						mu.Unlock()
					}
				}
			})
		}
	}
	var latencies []time.Duration
	for ctx.Err() == nil {
		took, err := read("victim")
		if err != nil && ctx.Err() == nil {
			b.Fatal(err)
		}
		if err == nil {
			latencies = append(latencies, took)
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
		}
	}
	wg.Wait()
	res.cores = (cpuTime() - cpuBefore).Seconds() / d.Seconds()
	slices.Sort(latencies)
	if len(latencies) == 0 {
		b.Fatal("the victim read nothing")
	}
	res.p50, res.p99 = latencies[len(latencies)/2], latencies[len(latencies)*99/100]
	return res
}

// cpuTime is the CPU the process used so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(fmt.Sprint("getrusage: ", err))
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
