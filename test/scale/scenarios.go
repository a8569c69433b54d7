package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/testsupport/childproc"
)

// scenario is one measurement; run returns its table cell.
type scenario struct {
	name string
	what string // what is measured, for the table
	goal string
	run  func(ctx context.Context, e *runEnv) (string, error)
}

// scenarios lists every scenario in the order they run.
func scenarios() []scenario {
	return []scenario{
		{"ready-1000", "1,000 new watches, 4 keys, no client limits, cloud latency 50 ms, --max-concurrent-syncs=4: first cloud call to all Ready, vs the bound N × latency / syncs = 12.5 s",
			"≤ 1.5× bound (proposed)", readyScenario(4)},
		{"ready-1000-c8", "as ready-1000 with --max-concurrent-syncs=8 (and --max-syncs-per-host=8 where the flag exists): bound 6.25 s",
			"≤ 1.3× bound", readyScenario(8)},
		{"ready-1000-c16", "as ready-1000 with 16 syncs in flight: bound 3.1 s",
			"≤ 1.3× bound", readyScenario(16)},
		{"ready-1000-c32", "as ready-1000 with 32 syncs in flight: bound 1.6 s",
			"≤ 2× bound (proposed)", readyScenario(32)},
		{"ready-1000-c64", "as ready-1000 with 64 syncs in flight: bound 0.8 s",
			"(where the API server becomes the limit)", readyScenario(64)},
		{"ready-1000-default", "as ready-1000 with the binary's default flags: bound N × latency / the syncs in flight it allows to one host",
			"≤ 1.3× bound", readyScenario(0)},
		{"ready-1000-floor", "as ready-1000-default with a cloud that answers at once (latency 0): the time the Kubernetes side of 1,000 first syncs takes on this machine, under every row above",
			"(the floor)", readyScenarioAt(0, 0)},
		{"budget-1000", "1,000 new watches, 4 keys, the manager's default client limits, cloud latency 50 ms and the real budget enforced (10 calls/10 s per key): first cloud call to all Ready, vs the budget bound 2 calls × 1,000 / (4 keys × 1 call/s) = 500 s; 429s; Secret GETs per watch and manager CPU until all Ready (compare ready-1000-default, the same 1,000 syncs without limits)",
			"≈ 1.1× bound (the client keeps a 10% margin), 0 × 429, ≤ 3 Secret GETs per watch, CPU ≤ 2× ready-1000-default's", budgetFleetScenario},
		{"paced-1000", "budget-1000's 1,000 syncs at the pace its budget admits them (one every 0.55 s, 4 keys), with no client limits: each watch created when budget-1000 would admit its sync; manager CPU until all Ready",
			"(the price of the pace alone: budget-1000's CPU beyond it is the price of waiting)", pacedFleetScenario},
		{"memory-1000", "1,000 watches synced with default flags (no client limits): manager peak RSS; then 10,000 Secrets of 1 KiB that no watch references, and the peak again",
			"(what a fleet costs)", fleetMemoryScenario},
		{"spread-200", "200 watches created together on 20 keys, interval 30 s, the manager's default client limits: cloud calls per 1-s bin over the 75 s (2.5 intervals) right after all are Ready: peak ÷ mean, seconds with any call; each watch's sync periods ending in that window",
			"peak ÷ mean ≤ 1.5, every period within 10% of 30 s", spreadScenario},
		{"budget-fits", "30 watches on one key, interval 5 m, cloud enforces 10 calls/10 s per key: 429s from creation until all Ready (≤ 2 min), time to all Ready (floor 50 s), events",
			"0 × 429, all Ready ≤ 70 s, 30 events (proposed)", budgetFitsScenario},
		{"budget-over", "30 watches on one key, interval 30 s (needs 2× the budget), budget enforced, 2 min from creation: 429s, Ready at the end, Ready flaps, events",
			"0 × 429, 30/30 Ready, 0 flaps (proposed)", budgetOverScenario},
		{"shares-3ns", "issue 30: 3 namespaces on one key (50, 5 and 1 watches, each its own service), interval 30 s (4.1× the key's budget: at the issue's 5 m all 56 fit a third of it), default client limits, real budget enforced: 429s over 6 min; when every watch had synced once; per namespace, its sync periods ending 2–6 min after creation within 10 % of 30 s, the same of the steady periods (begun once every watch had synced once), and its watches saying IntervalMet False",
			"0 × 429; the 1- and 5-watch namespaces' periods all within 10 %, no IntervalMet; the 50-watch one stretched, IntervalMet False with its share", sharesScenario},
		{"shares-account", "issue 39: a 2-watch namespace beside a 25-watch one on one ClusterCloudAccount's key, interval 30 s (the 25 ask 1.8× the key's budget, the 2 a seventh of their share), default client limits, real budget enforced, 5 min: 429s; per namespace, its sync periods ending 2–5 min after creation within 10 % of 30 s",
			"0 × 429; every period of the 2-watch namespace within 10 % of 30 s", sharesAccountScenario},
		{"account-refused", "issue 30: a ClusterCloudAccount allows one namespace; a watch in another refers to it: its Stalled reason, and the Secret reads and cloud calls until then",
			"Stalled AccountNotAllowed, 0 Secret reads, 0 cloud calls", refusedScenario},
		{"shared-10", "10 watches of one service, one key, the same 2 alerts and token, interval 30 s: cloud calls per interval once Ready",
			"4 (2 + 2 distinct alerts)", sharedScenario},
		{"priority", "1,000 watches (interval 30 s, no limits, latency 50 ms): time to Ready of a new watch created when the first of them is due again, and of one created 1 s after touching their Secrets made all 1,000 due at once",
			"< 2 s", priorityScenario},
		{"changes-1000", "issue 40: 1,000 watches as ready-1000-default (default flags, no client limits, latency 50 ms) with interval 30 s; once all are Ready every pipe of every watch's service is set to Failed in the cloud, and once all show it, back: per change, the time until the status of all (and half) shows it, and over 60 s from the change the manager's CPU, peak RSS (reset at the change), Events created and status writes",
			"(what tracking changes costs: compare with a manager without it)", changesScenario},
		{"memory-pipes", "one watch whose pipes answer is 16 MiB of [{},{},…], no client limits: manager peak RSS (VmHWM) vs a manager with one normal watch",
			"< 128 MiB", memoryScenario(bigPipes)},
		{"memory-alerts", "one watch with 100 alerts, each answered with 4 MiB, no client limits: manager peak RSS vs a manager with one normal watch",
			"< 128 MiB", memoryScenario(bigAlerts)},
		{"memory-worst-60", "60 watches (distinct services) whose pipes answer is the worst for the manager's memory: status filled with pipes of empty nested objects (10,100, 800 KiB of JSON), then 10,000 pipes named with 1.2 KB each for the state metrics (13 MB in all); no client limits: manager peak RSS once all are synced, and whether it exited",
			"< 256 MiB (the Deployment's GOMEMLIMIT), no exit", worstMemoryScenario},
		{"noisy-neighbor", "8 watches whose management API hangs, 24 on one throttled key (10/10 s enforced), then a new watch in a new namespace with its own key: its time to Ready",
			"< 2 s", noisyNeighbourScenario},
		{"fair-alert-host", "issue 17 (a): as many watches as one host has slots (--max-syncs-per-host), at most 3 per namespace, read the shared management host with a made-up key (401 at once) and an alert host that hangs, no client limits: a new watch's time to Ready on the shared host",
			"< 2 s", fairAlertHostScenario},
		{"fair-hosts", "issue 17 (b): one namespace's watches hang on --max-concurrent-syncs ÷ --max-syncs-per-host + 2 hosts (host names that all lead to the fake), each host filled, no client limits: a new watch's time to Ready in another namespace",
			"< 2 s", fairHostsScenario},
		{"fair-burst-150", "issue 17 (c): one namespace creates 150 watches at once on a cloud of 200 ms (no client limits): a new watch's time to Ready in another namespace, created right after, on the same host",
			"< 2 s", fairBurstScenario(150)},
		{"fair-burst-1500", "as fair-burst-150 with 1,500 watches (1,000 distinct services)",
			"< 2 s", fairBurstScenario(1500)},
		{"fair-shared-host", "issue 17 (d): on the one management host all share, one namespace's 20 watches read services whose calls hang until the client's timeout (30 s), no client limits: a new watch's time to Ready in another namespace",
			"< 2 s", fairSharedHostScenario},
		{"alerts-token-100", "issue 29: 100 watches × 10 alert IDs (1,000 alerts) on one alert token, interval 30 s, the token's real budget enforced (100 calls/min), no management budget, 3 min from creation: alert calls per interval, 429s, Ready and IntervalMet=False, achieved interval (gap between a watch's syncs), and, for a change made to one alert of every watch at 100 s, how many intervals later each watch's status shows it",
			"≈ 1 call per interval (⌈1,000 / 1,000⌉), 0 × 429, 0 IntervalMet=False, every watch at 30 s, every watch seeing the change at its next interval (within one interval and a few seconds)", alertTokenScenario},
		{"alerts-managed-60", "issue 29: 60 watches on one management key, each of its own service with 10 alerts from the management API (alertsFrom: ManagementAPI), interval 5 m, the key's real budget enforced (10 calls/10 s), 7.5 min from creation: calls in the first 5 min, 429s, Ready and IntervalMet=False, achieved interval",
			"180 calls per 5 min (3 per watch), 0 × 429, 60/60 Ready, achieved interval within 10% of 5 m", alertsManagedScenario(fakecloud.AlertListPaged)},
		{"alerts-managed-60-onebyone", "as alerts-managed-60 on a management host without the alert list route: one GET per alert (the shape of issue 29's \"today\", 720 calls per 5 min), measured with the same manager",
			"(the comparison: ≈ 2.4× the budget)", alertsManagedScenario(fakecloud.AlertListNone)},
		{"status-reject", "an admission policy rejects every status update of one watch (interval 30 s): its cloud syncs (list-pipes calls) in 60 s",
			"≈ 2 (its schedule)", statusRejectScenario},
	}
}

const (
	cloudLatency = 50 * time.Millisecond
	// The real APIs' budgets.
	managementBudget = "10/10s"
	alertBudget      = "100/60s"
)

// noClientLimits turns the manager's own rate limits off, for scenarios that
// measure scheduling, not budgeting.
var noClientLimits = []string{"--management-rate-limit=0", "--alert-rate-limit=0"}

// makeTenants returns n tenants named prefix-0 … prefix-(n-1), each with its
// own key and token.
func makeTenants(prefix string, n int) []tenant {
	ts := make([]tenant, n)
	for i := range ts {
		name := fmt.Sprintf("%s-%d", prefix, i)
		ts[i] = tenant{namespace: name, key: keyPair{id: name + "-key", secret: name + "-secret"}, token: name + "-token"}
	}
	return ts
}

// spreadWatches returns n watches named w-0000 …, dealt round-robin to the
// tenants.
//
// Without a service in s, each watch reads a service of its own, as watches
// usually do: watches of one service share their reads (one list call per
// service and credential), which would leave almost nothing to measure.
func spreadWatches(ts []tenant, n int, s watchSpec) []*swv1.ServiceWatch {
	out := make([]*swv1.ServiceWatch, n)
	for i := range out {
		spec := s
		if spec.serviceID == "" {
			spec.serviceID = distinctService(i % distinctServices)
		}
		out[i] = newWatch(ts[i%len(ts)], fmt.Sprintf("w-%04d", i), spec)
	}
	return out
}

// setUp starts the fake cloud for the tenants and creates their namespaces
// and Secrets.
func setUp(ctx context.Context, e *runEnv, ts []tenant, cloudArgs ...string) error {
	if err := e.startCloud(ctx, cloudData(ts), cloudArgs...); err != nil {
		return err
	}
	for _, t := range ts {
		if err := e.cp.createTenant(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// waitAllReady waits until every watch of namespace ("" for all) has been
// Ready and returns when the last one first was.
func waitAllReady(ctx context.Context, e *runEnv, namespace string, want int, timeout time.Duration) (time.Time, error) {
	var last time.Time
	ok := waitUntil(ctx, timeout, func() bool {
		var total int
		total, _, last, _ = e.track.summary(namespace)
		return total >= want && !last.IsZero()
	})
	if !ok {
		total, ready, _, _ := e.track.summary(namespace)
		return time.Time{}, fmt.Errorf("not all Ready within %s: %d of %d seen Ready now", timeout, ready, total)
	}
	return last, nil
}

// readyScenario creates 1,000 watches before the manager starts, so that all
// are due at once, and times the manager working through them.
//
// With latency 0 the cloud costs nothing and what is left is the Kubernetes
// side of 1,000 first syncs (status writes, events, the manager's own work):
// the floor under every concurrency's time on this machine.
func readyScenario(concurrency int) func(context.Context, *runEnv) (string, error) {
	return readyScenarioAt(cloudLatency, concurrency)
}

func readyScenarioAt(latency time.Duration, concurrency int) func(context.Context, *runEnv) (string, error) {
	return func(ctx context.Context, e *runEnv) (string, error) {
		const n = 1000
		ts := makeTenants("ready", 4)
		if err := setUp(ctx, e, ts, "--latency", latency.String()); err != nil {
			return "", err
		}
		args, inFlight, err := concurrencyFlags(ctx, e, concurrency, len(ts))
		if err != nil {
			return "", err
		}
		run, err := firstSyncs(ctx, e, ts, n, 10*time.Minute, append(noClientLimits, args...)...)
		if err != nil {
			return "", err
		}
		if latency == 0 {
			return fmt.Sprintf("%s (%.1f ms per watch; %d syncs in flight); %d calls; peak RSS %s; %s",
				seconds(run.took), run.took.Seconds()*1000/n, inFlight, len(run.calls), mebibytes(run.peak), run.cost(n)), nil
		}
		bound := n * latency / time.Duration(inFlight)
		return fmt.Sprintf("%s = %s bound %s (%d syncs in flight); %d calls; peak RSS %s; %s",
			seconds(run.took), times(run.took.Seconds()/bound.Seconds()), seconds(bound), inFlight, len(run.calls), mebibytes(run.peak), run.cost(n)), nil
	}
}

// coldStart is what firstSyncs saw.
type coldStart struct {
	took  time.Duration // from the first cloud call to the last watch's first Ready
	calls []call
	peak  int64 // the manager's peak RSS
	// secretGets are the GETs of Secrets the API server served, cpu the
	// manager's CPU time and work its reconciles, all from its start to the
	// last watch's Ready.
	secretGets int
	cpu        time.Duration
	work       reconciles
}

// cost is the Secret reads and CPU of a cold start of n watches, for the
// table.
func (c coldStart) cost(n int) string {
	per := func(v float64) float64 { return v / float64(n) }
	return fmt.Sprintf("%.1f Secret GETs per watch; %.1f reconciles per watch (%.1f put off by the budget); manager CPU %s",
		per(float64(c.secretGets)), per(c.work.total), per(c.work.deferred), seconds(c.cpu))
}

// firstSyncs creates n watches dealt to the tenants before the manager
// starts, so that all are due at once, starts the manager with args, and
// waits up to timeout until every watch has been Ready.
func firstSyncs(ctx context.Context, e *runEnv, ts []tenant, n int, timeout time.Duration, args ...string) (coldStart, error) {
	return syncsAtPace(ctx, e, ts, n, 0, timeout, args...)
}

// syncsAtPace is firstSyncs with the watches created one every pace after
// the manager started (0: all of them before it starts).
func syncsAtPace(ctx context.Context, e *runEnv, ts []tenant, n int, pace, timeout time.Duration, args ...string) (coldStart, error) {
	watches := spreadWatches(ts, n, watchSpec{})
	if pace == 0 {
		if err := e.cp.createWatches(ctx, watches); err != nil {
			return coldStart{}, err
		}
	}
	// The metrics listener costs nothing until the one scrape at the end.
	metrics, err := childproc.FreeAddr(ctx)
	if err != nil {
		return coldStart{}, err
	}
	m, err := e.startManager(ctx, append(args, "--metrics-bind-address", metrics, "--metrics-secure=false")...)
	if err != nil {
		return coldStart{}, err
	}
	if pace > 0 {
		if err := createAtPace(ctx, e, watches, pace); err != nil {
			return coldStart{}, err
		}
	}
	last, err := waitAllReady(ctx, e, "", n, timeout)
	if err != nil {
		return coldStart{}, err
	}
	calls, err := e.cloud.calls(ctx)
	if err != nil {
		return coldStart{}, err
	}
	peak, _ := m.peakRSS()
	cpu, err := cpuOf(m.child.Pid())
	if err != nil {
		return coldStart{}, err
	}
	gets, err := e.cp.secretGets(ctx)
	if err != nil {
		return coldStart{}, err
	}
	work, err := reconcilesOf(ctx, "http://"+metrics+"/metrics")
	if err != nil {
		return coldStart{}, err
	}
	return coldStart{took: last.Sub(earliest(calls)), calls: calls, peak: peak, secretGets: gets, cpu: cpu, work: work}, nil
}

// budgetFleetScenario: the cloud's budget, not concurrency, bounds how fast
// 1,000 watches on 4 keys first sync; a good client gets close to it without
// a 429, and without holding its workers while it waits.
func budgetFleetScenario(ctx context.Context, e *runEnv) (string, error) {
	const (
		n    = 1000
		keys = 4
		// perKey is the management budget (managementBudget) in calls per
		// second; a sync makes 2 calls.
		perKey = 10.0 / 10
	)
	ts := makeTenants("fleet-budget", keys)
	if err := setUp(ctx, e, ts, "--latency", cloudLatency.String(), "--management-budget", managementBudget); err != nil {
		return "", err
	}
	run, err := firstSyncs(ctx, e, ts, n, 20*time.Minute)
	if err != nil {
		return "", err
	}
	bound := time.Duration(2 * n / (keys * perKey) * float64(time.Second))
	return fmt.Sprintf("%s = %s budget bound %s; %d × 429 of %d calls; peak RSS %s; %s",
		seconds(run.took), times(run.took.Seconds()/bound.Seconds()), seconds(bound),
		len(selectCalls(run.calls, withStatus(429))), len(run.calls), mebibytes(run.peak), run.cost(n)), nil
}

// pacedFleetScenario: budget-1000's 1,000 syncs at the pace its budget
// allows, with no budget: each watch is created when budget-1000 would
// admit its sync. What this costs is the price of the pace alone; what
// budget-1000 costs beyond it is the price of waiting.
func pacedFleetScenario(ctx context.Context, e *runEnv) (string, error) {
	const (
		n    = 1000
		keys = 4
		// pace is how budget-1000's client admits syncs: each key one sync
		// (2 calls) every 2.2 s (1 call/s, kept with the client's 10%
		// margin), the 4 keys one every 0.55 s: 550 s for 1,000.
		pace = 2200 * time.Millisecond / keys
	)
	ts := makeTenants("fleet-paced", keys)
	if err := setUp(ctx, e, ts, "--latency", cloudLatency.String()); err != nil {
		return "", err
	}
	run, err := syncsAtPace(ctx, e, ts, n, pace, 20*time.Minute, noClientLimits...)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s for 1,000 syncs one every %v; peak RSS %s; %s",
		seconds(run.took), pace, mebibytes(run.peak), run.cost(n)), nil
}

// createAtPace creates the watches one every pace, each with one call (not
// createWatches' pool of 16 clients, made for creating many at once).
func createAtPace(ctx context.Context, e *runEnv, watches []*swv1.ServiceWatch, pace time.Duration) error {
	tick := time.NewTicker(pace)
	defer tick.Stop()
	for _, w := range watches {
		if err := e.cp.client.Create(ctx, w); err != nil {
			return fmt.Errorf("creating ServiceWatch %s/%s: %w", w.Namespace, w.Name, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// fleetMemoryScenario: what 1,000 synced watches cost in memory, and what
// the cluster's other Secrets add (the manager caches Secrets' metadata only,
// and only their identity).
func fleetMemoryScenario(ctx context.Context, e *runEnv) (string, error) {
	const n, unrelated = 1000, 10000
	ts := makeTenants("fleet-memory", 4)
	if err := setUp(ctx, e, ts, "--latency", cloudLatency.String()); err != nil {
		return "", err
	}
	m, err := e.runFleet(ctx, spreadWatches(ts, n, watchSpec{}), noClientLimits...)
	if err != nil {
		return "", err
	}
	if _, err := waitAllReady(ctx, e, "", n, 10*time.Minute); err != nil {
		return "", err
	}
	if err := sleepUntil(ctx, time.Now().Add(5*time.Second)); err != nil {
		return "", err
	}
	watches, _ := m.peakRSS()
	if err := e.cp.createUnrelatedSecrets(ctx, "unrelated", unrelated); err != nil {
		return "", err
	}
	// The manager's informer sees them within moments; the wait covers a
	// loaded machine.
	if err := sleepUntil(ctx, time.Now().Add(10*time.Second)); err != nil {
		return "", err
	}
	withSecrets, _ := m.peakRSS()
	return fmt.Sprintf("peak RSS %s with 1,000 Ready watches; %s after 10,000 unrelated Secrets (+%s)",
		mebibytes(watches), mebibytes(withSecrets), mebibytes(withSecrets-watches)), nil
}

// concurrencyFlags returns the flags that let the manager run concurrency
// syncs in flight against the fake cloud's one host, and how many it will
// then run. Concurrency 0 passes no flag and reads the binary's defaults. A
// manager with --max-syncs-per-host bounds the syncs to one host by it too
// (by default half of --max-concurrent-syncs), and one with
// --max-syncs-per-namespace by it times the tenants' namespaces; one without it runs its
// --max-concurrent-syncs reconciles, each calling the cloud in turn.
func concurrencyFlags(ctx context.Context, e *runEnv, concurrency, tenants int) (args []string, inFlight int, err error) {
	defaults, err := e.managerFlagDefaults(ctx)
	if err != nil {
		return nil, 0, err
	}
	all, ok := defaults["max-concurrent-syncs"]
	if !ok {
		return nil, 0, errors.New("the manager has no --max-concurrent-syncs")
	}
	perHost, hasPerHost := defaults["max-syncs-per-host"]
	perNamespace, hasPerNamespace := defaults["max-syncs-per-namespace"]
	if concurrency > 0 {
		args = append(args, fmt.Sprintf("--max-concurrent-syncs=%d", concurrency))
		all, perHost, perNamespace = concurrency, concurrency, concurrency
		if hasPerHost {
			args = append(args, fmt.Sprintf("--max-syncs-per-host=%d", concurrency))
		}
		if hasPerNamespace {
			args = append(args, fmt.Sprintf("--max-syncs-per-namespace=%d", concurrency))
		}
	}
	if !hasPerHost {
		return args, all, nil
	}
	if perHost == 0 {
		perHost = max(1, all/2)
	}
	inFlight = min(all, perHost)
	if hasPerNamespace {
		inFlight = min(inFlight, tenants*perNamespace)
	}
	return args, inFlight, nil
}

// spreadScenario looks at how the syncs of watches created together fall on
// the seconds of the intervals right after all are Ready, with the
// manager's default client limits on 20 keys: calls per 1-s bin (peak over
// mean), and each watch's sync periods against its interval.
func spreadScenario(ctx context.Context, e *runEnv) (string, error) {
	const (
		n        = 200
		keys     = 20
		interval = 30 * time.Second
		span     = 5 * interval / 2
	)
	ts := makeTenants("spread", keys)
	if err := setUp(ctx, e, ts); err != nil {
		return "", err
	}
	if err := e.cp.createWatches(ctx, spreadWatches(ts, n, watchSpec{interval: interval})); err != nil {
		return "", err
	}
	if _, err := e.startManager(ctx); err != nil {
		return "", err
	}
	ready, err := waitAllReady(ctx, e, "", n, 5*time.Minute)
	if err != nil {
		return "", err
	}
	if err := sleepUntil(ctx, ready.Add(span+interval/2)); err != nil {
		return "", err
	}
	calls, err := e.cloud.calls(ctx)
	if err != nil {
		return "", err
	}
	if err := writeCalls(e.dir, calls, ready); err != nil {
		return "", err
	}
	s := spreadOf(perSecond(timesOf(calls), ready, span))
	p := periodsOf(selectCalls(calls, withOperation(fakecloud.OpListPipes)), ready, span, interval)
	return fmt.Sprintf("peak ÷ mean %.2f (peak %d/s, mean %.1f/s); calls in %d of %d s; sync periods %s–%s, %d of %d within 10%% of 30 s",
		s.peakToMean(), s.peak, s.mean(), s.busy, s.seconds, seconds(p.shortest), seconds(p.longest), p.within, p.count), nil
}

// firstCall returns the time of the fake's first call; zero if none yet.
func firstCall(ctx context.Context, e *runEnv) time.Time {
	calls, err := e.cloud.calls(ctx)
	if err != nil {
		return time.Time{}
	}
	return earliest(calls)
}

func sleepUntil(ctx context.Context, t time.Time) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Until(t)):
		return nil
	}
}

// watchesOnOneBudget starts a fake cloud that enforces the real budgets and
// a manager, then creates n watches of one tenant (one key, one token) at
// interval every, and returns the tenant and when the watches were created.
func watchesOnOneBudget(ctx context.Context, e *runEnv, prefix string, n int, every time.Duration) ([]tenant, time.Time, error) {
	ts := makeTenants(prefix, 1)
	if err := setUp(ctx, e, ts, "--management-budget", managementBudget, "--alert-budget", alertBudget); err != nil {
		return nil, time.Time{}, err
	}
	if _, err := e.startManager(ctx); err != nil {
		return nil, time.Time{}, err
	}
	created := time.Now()
	if err := e.cp.createWatches(ctx, spreadWatches(ts, n, watchSpec{interval: every})); err != nil {
		return nil, time.Time{}, err
	}
	return ts, created, nil
}

// budgetFitsScenario: 60 calls fit the budget within a minute; any 429 is
// the client's doing.
func budgetFitsScenario(ctx context.Context, e *runEnv) (string, error) {
	const n = 30
	ts, created, err := watchesOnOneBudget(ctx, e, "fits", n, 5*time.Minute)
	if err != nil {
		return "", err
	}
	var last time.Time
	allReady := waitUntil(ctx, 2*time.Minute, func() bool {
		_, _, last, _ = e.track.summary(ts[0].namespace)
		return !last.IsZero()
	})
	// Calls still under way (retries of rejected ones) show up a little later.
	if err := sleepUntil(ctx, time.Now().Add(5*time.Second)); err != nil {
		return "", err
	}
	calls, err := e.cloud.calls(ctx)
	if err != nil {
		return "", err
	}
	rejected := len(selectCalls(calls, withStatus(429)))
	events, occurrences, err := countEvents(ctx, e.cp.client, ts[0].namespace)
	if err != nil {
		return "", err
	}
	ready := "not all Ready within 2 min"
	if allReady {
		ready = "all Ready after " + seconds(last.Sub(created))
	}
	return fmt.Sprintf("%d × 429 of %d calls; %s; %d events (%d occurrences)", rejected, len(calls), ready, events, occurrences), nil
}

// budgetOverScenario: the watches want twice the budget; a good client
// spreads them out and keeps every watch Ready.
func budgetOverScenario(ctx context.Context, e *runEnv) (string, error) {
	const n = 30
	ts, created, err := watchesOnOneBudget(ctx, e, "over", n, 30*time.Second)
	if err != nil {
		return "", err
	}
	if err := sleepUntil(ctx, created.Add(2*time.Minute)); err != nil {
		return "", err
	}
	calls, err := e.cloud.calls(ctx)
	if err != nil {
		return "", err
	}
	rejected := len(selectCalls(calls, withStatus(429)))
	syncs := len(selectCalls(calls, withOperation(fakecloud.OpListPipes)))
	total, ready, _, flaps := e.track.summary(ts[0].namespace)
	events, occurrences, err := countEvents(ctx, e.cp.client, ts[0].namespace)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d × 429 of %d calls (%d syncs); %d/%d Ready at 2 min; %d flaps; %d events (%d occurrences)",
		rejected, len(calls), syncs, ready, total, flaps, events, occurrences), nil
}

// sharedScenario: ten watches read the same service and alerts with the same
// credentials; the cloud only needs to be asked once per interval.
func sharedScenario(ctx context.Context, e *runEnv) (string, error) {
	const (
		n        = 10
		interval = 30 * time.Second
		window   = 2 * interval
	)
	ts := makeTenants("shared", 1)
	if err := setUp(ctx, e, ts); err != nil {
		return "", err
	}
	alerts := []string{fakecloud.DefaultAlertID, fakecloud.SecondAlertID}
	if _, err := e.runFleet(ctx, spreadWatches(ts, n, watchSpec{serviceID: defaultService, alertIDs: alerts, interval: interval})); err != nil {
		return "", err
	}
	last, err := waitAllReady(ctx, e, ts[0].namespace, n, 2*time.Minute)
	if err != nil {
		return "", err
	}
	// The watches were created together, so their syncs come in rounds
	// about an interval apart; a window that starts half-way between two
	// rounds holds two whole rounds.
	from := last.Add(interval / 2)
	if err := sleepUntil(ctx, from.Add(window)); err != nil {
		return "", err
	}
	calls, err := e.cloud.calls(ctx)
	if err != nil {
		return "", err
	}
	got := len(selectCalls(calls, since(from), before(from.Add(window))))
	perInterval := float64(got) * interval.Seconds() / window.Seconds()
	ideal := 2 + len(alerts)
	return fmt.Sprintf("%.1f calls per interval = %s ideal %d", perInterval, times(perInterval/float64(ideal)), ideal), nil
}

// priorityScenario: a watch a user just created should not wait behind a
// backlog of routine syncs. It is timed twice against 1,000 watches of
// interval 30 s, created before the manager starts:
//
//   - in the wave: when the first of them is due again (its interval and
//     the most jitter after the first cloud call), so that the new watch
//     meets the wave of resyncs whatever the manager's speed, and with a slow
//     manager the rest of the first syncs too;
//   - at once: once all are Ready, the four Secrets they use are touched
//     (as a key rotation does), which makes all 1,000 due at the same moment;
//     a second new watch comes a second later.
func priorityScenario(ctx context.Context, e *runEnv) (string, error) {
	const (
		n        = 1000
		interval = 30 * time.Second
		jitter   = interval / 10
	)
	ts := makeTenants("backlog", 4)
	fresh := makeTenants("priority-new", 1)[0]
	if err := setUp(ctx, e, append(ts, fresh), "--latency", cloudLatency.String()); err != nil {
		return "", err
	}
	if err := e.cp.createWatches(ctx, spreadWatches(ts, n, watchSpec{interval: interval})); err != nil {
		return "", err
	}
	if _, err := e.startManager(ctx, noClientLimits...); err != nil {
		return "", err
	}
	var first time.Time
	if !waitUntil(ctx, time.Minute, func() bool { first = firstCall(ctx, e); return !first.IsZero() }) {
		return "", errors.New("no cloud call within a minute")
	}
	if err := sleepUntil(ctx, first.Add(interval+jitter+time.Second)); err != nil {
		return "", err
	}
	_, readyBefore, _, _ := e.track.summary("")
	wave, err := timeToReady(ctx, e, fresh, "in-wave", fmt.Sprintf("%d of %d Ready", readyBefore, n))
	if err != nil {
		return "", err
	}
	if _, err := waitAllReady(ctx, e, "", n+1, 5*time.Minute); err != nil {
		return "", err
	}
	for _, t := range ts {
		if err := e.cp.touchSecret(ctx, t.namespace, mgmtSecretName); err != nil {
			return "", err
		}
	}
	if err := sleepUntil(ctx, time.Now().Add(time.Second)); err != nil {
		return "", err
	}
	atOnce, err := timeToReady(ctx, e, fresh, "at-once", "1,000 due at once")
	if err != nil {
		return "", err
	}
	return "in the wave: " + wave + "; " + atOnce, nil
}

// timeToReady creates a watch for tenant t and times it to Ready.
func timeToReady(ctx context.Context, e *runEnv, t tenant, name, note string) (string, error) {
	w := newWatch(t, name, watchSpec{serviceID: defaultService})
	created := time.Now()
	if err := e.cp.client.Create(ctx, w); err != nil {
		return "", err
	}
	key := types.NamespacedName{Namespace: w.Namespace, Name: w.Name}
	const timeout = 3 * time.Minute
	if !waitUntil(ctx, timeout, func() bool { return !e.track.firstReady(key).IsZero() }) {
		return fmt.Sprintf("not Ready within %s (%s)", timeout, note), nil
	}
	return fmt.Sprintf("Ready after %s (%s)", seconds(e.track.firstReady(key).Sub(created)), note), nil
}
