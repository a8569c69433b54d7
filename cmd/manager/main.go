// Command manager runs the servicewatch operator: it syncs every
// ServiceWatch in the cluster with the cloud APIs it names.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/accountcontroller"
	"github.com/servicewatch/servicewatch/internal/changes"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/egress"
	"github.com/servicewatch/servicewatch/internal/metrics/statemetrics"
	"github.com/servicewatch/servicewatch/internal/metrics/syncmetrics"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
	"github.com/servicewatch/servicewatch/internal/storagemigration"
	"github.com/servicewatch/servicewatch/internal/tenancy"
)

// config is everything the flags set.
type config struct {
	metricsAddr, probeAddr string
	metrics                metricsConfig
	leaderElect            bool
	leaderElectionID       string
	reconciler             controller.Options
	// statusBudget bounds what statuses keep, per namespace and in all.
	statusBudget   struct{ namespace, total int }
	cloud          cloudapi.Options
	managementRate rateFlag
	alertRate      rateFlag
	// reservedShare is the share of each key's budget left to callers
	// outside the manager.
	reservedShare float64
	zap           zap.Options
	// accountNamespace is where the ClusterCloudAccounts' Secrets are.
	accountNamespace string
	// storageMigration: the leader rewrites objects stored in an older
	// version of the CRDs and trims their storedVersions.
	storageMigration bool
	// changeSink is where item state changes are sent as CloudEvents.
	changeSink changes.SinkOptions
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(2)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&cfg.zap)))
	if err := run(ctrl.SetupSignalHandler(), cfg); err != nil {
		ctrl.Log.WithName("setup").Error(err, "manager stopped")
		os.Exit(1)
	}
}

// rateLimitHelp is the help of a client-side rate-limit flag for one kind of
// credential; example is the window its default is kept over (see
// cloudapi's slotOf).
func rateLimitHelp(credential, example string) string {
	return "Client-side budget per " + credential + " and API host, as REQUESTS/PERIOD[/BURST] (BURST defaults to REQUESTS); " +
		"kept over any window of PERIOD × 1.1 less a tenth of a spacing (" + example + "), a margin for latency; 0 disables."
}

// parseFlags reads the command line, and refuses values that could only fail
// later, one watch at a time.
func parseFlags(args []string) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.StringVar(&cfg.metricsAddr, "metrics-bind-address", ":8443", "Address the Prometheus metrics endpoint binds to; \"0\" disables it.")
	fs.BoolVar(&cfg.metrics.secure, "metrics-secure", true, "Serve metrics over HTTPS, only to clients the API server authenticates and authorizes for GET /metrics; false: plain HTTP, open to anyone who reaches the port.")
	fs.StringVar(&cfg.metrics.certDir, "metrics-cert-dir", "", "Directory with tls.crt and tls.key for the metrics endpoint (reloaded when they change); empty or missing files: a self-signed certificate.")
	fs.BoolVar(&cfg.metrics.enableHTTP2, "enable-http2", false, "Serve metrics over HTTP/2 as well; off by default against HTTP/2 Rapid Reset and Stream Cancellation attacks.")
	fs.BoolVar(&cfg.metrics.itemMetrics, "item-metrics", true, "Export one series per pipe, reverse private endpoint and alert (servicewatch_pipe_info and the like); false keeps only the per-watch state metrics.")
	fs.IntVar(&cfg.metrics.itemMetricsMaxBytes, "item-metrics-max-bytes", statemetrics.DefaultMaxItemBytes, "Bound on one ServiceWatch's item series, in bytes: each series costs its label values plus 256. Past it a scrape shows the first items by ID and servicewatch_item_metrics_omitted counts the rest.")
	fs.StringVar(&cfg.probeAddr, "health-probe-bind-address", ":8081", "Address the /healthz and /readyz endpoints bind to.")
	fs.BoolVar(&cfg.leaderElect, "leader-elect", false, "Elect a leader so that only one replica syncs at a time.")
	fs.StringVar(&cfg.leaderElectionID, "leader-election-id", "servicewatch.cloud.servicewatch.io", "Name of the leader-election lease; each shard needs its own.")
	fs.Func("watch-namespaces", "Comma-separated namespaces to watch (ServiceWatches, Secrets); empty means all.", namespaces(&cfg.reconciler.Scope.Namespaces))
	fs.Func("watch-label-selector", "Label selector of the ServiceWatches this manager syncs (e.g. sharding.servicewatch.io/shard=shard1); empty means all. Run one manager per shard.", labelSelector(&cfg.reconciler.Scope))
	fs.Func("management-api-url", "Management API base URL for watches whose spec.managementApi.url is empty.", baseURL(&cfg.reconciler.ManagementAPIURL))
	fs.Func("alert-api-url", "Alert API base URL for watches whose spec.alertApi.url is empty.", baseURL(&cfg.reconciler.AlertAPIURL))
	fs.Func("allowed-api-urls", "Comma-separated API base URLs (https://api.example.com, https://gw.example.com/cloud: that scheme, host and port, paths under it) and hosts (alerts.example.com, *.example.com, api.example.com:8443) that watches may send their credentials to; a watch with another URL is Stalled (URLNotAllowed) before its Secret is read. Empty allows every URL.", allowList(&cfg.reconciler.AllowedAPIURLs))
	fs.BoolVar(&cfg.cloud.DenyLocalAddresses, "deny-local-addresses", false, "Refuse to connect to loopback, unspecified and link-local addresses and cloud metadata services (169.254.169.254, fd00:ec2::254, ...), checked on the resolved address of each connection; such a watch is Stalled (AddressNotAllowed). Off by default for a manager run beside a local fake cloud; the shipped manifests and chart turn it on.")
	fs.StringVar(&cfg.accountNamespace, "account-namespace", os.Getenv("POD_NAMESPACE"), "The operator's own namespace, where the Secrets of ClusterCloudAccounts are (never a tenant's); default $POD_NAMESPACE. Empty: no ClusterCloudAccounts are served (the manager then needs no right on namespaces), and a watch that refers to one is Stalled (AccountNotFound).")
	fs.BoolVar(&cfg.storageMigration, "storage-migration", true, "At start, the leader rewrites every ServiceWatch and ClusterCloudAccount still stored in an older version of its CRD in the storage version, then trims the CRD's status.storedVersions to it (needs get on the two CRDs and patch on their status; skipped, with a log line, without them). false: for installs whose CRDs are migrated elsewhere.")
	defaults := controller.DefaultOptions()
	fs.IntVar(&cfg.reconciler.MaxConcurrentSyncs, "max-concurrent-syncs", defaults.MaxConcurrentSyncs, "How many syncs may call the cloud at once, each counted once per API host it is calling (a sync holds a host's slot only while it calls that host).")
	fs.IntVar(&cfg.reconciler.MaxSyncsPerHost, "max-syncs-per-host", defaults.MaxSyncsPerHost, "How many of those may call one API host, so that a host that hangs holds at most that many; one host serves at most this many divided by its latency syncs per second.")
	fs.IntVar(&cfg.reconciler.MaxSyncsPerNamespace, "max-syncs-per-namespace", defaults.MaxSyncsPerNamespace, "How many of those the watches of one namespace may hold, on all hosts together, so that one namespace leaves the rest to the others (namespaces that wait take turns); one namespace syncs at most this many divided by the cloud's latency per second.")
	fs.IntVar(&cfg.reconciler.MaxConcurrentReconciles, "reconcile-workers", defaults.MaxConcurrentReconciles, "How many reconcile workers run; they do only Kubernetes work (cloud calls run in the background).")
	fs.IntVar(&cfg.reconciler.AlertConcurrency, "alert-concurrency", defaults.AlertConcurrency, "How many alerts of one ServiceWatch are fetched at once.")
	fs.IntVar(&cfg.statusBudget.namespace, "namespace-status-budget", tenancy.DefaultNamespaceStatusBytes, "Bytes the statuses of one namespace's ServiceWatches may keep together in the manager's memory, charged as --status-size-limit charges them; a watch past its namespace's share has its lists cut and says so (StatusTruncated). 0: no bound.")
	fs.IntVar(&cfg.statusBudget.total, "total-status-budget", tenancy.DefaultManagerStatusBytes, "Bytes the statuses of all ServiceWatches may keep together, divided into equal parts between the namespaces with watches (a namespace keeps at most its part, whatever the others keep); the default fits the Deployment's 256 Mi with headroom. 0: no bound.")
	fs.IntVar(&cfg.reconciler.StatusSizeLimit, "status-size-limit", defaults.StatusSizeLimit, "Largest status in bytes, each item charged the larger of its JSON and its decoded size (the manager's cache holds it decoded); the lists are truncated past it.")
	fs.DurationVar(&cfg.reconciler.SyncTimeout, "sync-timeout", defaults.SyncTimeout, "Longest one sync may take.")
	fs.DurationVar(&cfg.cloud.Timeout, "cloud-timeout", cloudapi.DefaultTimeout, "Timeout of one cloud API call.")
	fs.Int64Var(&cfg.cloud.MaxResponseBytes, "cloud-max-response-bytes", cloudapi.DefaultMaxResponseBytes, "Largest cloud API response body accepted.")
	cfg.managementRate = rateFlag(cloudapi.DefaultManagementRate())
	cfg.alertRate = rateFlag(cloudapi.DefaultAlertRate())
	fs.Var(&cfg.managementRate, "management-rate-limit", rateLimitHelp("management key", "10.89 s for 10/10s"))
	fs.Var(&cfg.alertRate, "alert-rate-limit", rateLimitHelp("alert token", "65.93 s for 100/1m"))
	fs.Float64Var(&cfg.reservedShare, "reserved-budget-share", 0, "Share of each key's and token's budget, in [0, 1), left to callers outside the manager (a Terraform run, a scraper): the manager keeps under the rest (at least 1 call per period), and a 429 it gets while under counts as cause=\"others\" in servicewatch_cloud_rate_limited_total.")
	cfg.changeSink = changes.DefaultSinkOptions()
	cfg.changeSink.BindFlags(fs)
	cfg.zap.Development = false
	cfg.zap.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	return cfg, validate(cfg)
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
func labelSelector(scope *controller.Scope) func(string) error {
	return func(value string) error {
		sel, err := labels.Parse(value)
		if err != nil {
			return fmt.Errorf("%q is not a label selector: %w", value, err)
		}
		scope.WatchSelector = sel
		return nil
	}
}

func selectorString(sel labels.Selector) string {
	if sel == nil {
		return ""
	}
	return sel.String()
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

func validate(cfg config) error {
	positive := map[string]int64{
		"--max-concurrent-syncs":     int64(cfg.reconciler.MaxConcurrentSyncs),
		"--max-syncs-per-host":       int64(cfg.reconciler.MaxSyncsPerHost),
		"--max-syncs-per-namespace":  int64(cfg.reconciler.MaxSyncsPerNamespace),
		"--reconcile-workers":        int64(cfg.reconciler.MaxConcurrentReconciles),
		"--alert-concurrency":        int64(cfg.reconciler.AlertConcurrency),
		"--status-size-limit":        int64(cfg.reconciler.StatusSizeLimit),
		"--sync-timeout":             int64(cfg.reconciler.SyncTimeout),
		"--cloud-timeout":            int64(cfg.cloud.Timeout),
		"--cloud-max-response-bytes": cfg.cloud.MaxResponseBytes,
	}
	for name, v := range positive {
		if v <= 0 {
			return fmt.Errorf("%s must be positive", name)
		}
	}
	if err := cfg.changeSink.Validate(); err != nil {
		return err
	}
	if err := tenancy.ValidateReserve(cfg.reservedShare); err != nil {
		return fmt.Errorf("--reserved-budget-share: %w", err)
	}
	if cfg.statusBudget.namespace < 0 || cfg.statusBudget.total < 0 {
		return errors.New("--namespace-status-budget and --total-status-budget must not be negative (0: no bound)")
	}
	// A fallback URL the allow list refuses would stall every watch that
	// uses it: say so now, once.
	for flag, u := range map[string]string{"--management-api-url": cfg.reconciler.ManagementAPIURL, "--alert-api-url": cfg.reconciler.AlertAPIURL} {
		if u == "" {
			continue
		}
		if err := cfg.reconciler.AllowedAPIURLs.Allows(u); err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
	}
	return nil
}

func run(ctx context.Context, cfg config) error {
	setupLog := ctrl.Log.WithName("setup")
	scheme, err := controller.NewScheme()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                        scheme,
		Cache:                         controller.CacheOptions(cfg.reconciler.Scope),
		Metrics:                       metricsServerOptions(cfg.metricsAddr, cfg.metrics),
		HealthProbeBindAddress:        cfg.probeAddr,
		LeaderElection:                cfg.leaderElect,
		LeaderElectionID:              cfg.leaderElectionID,
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       ptr.To(30 * time.Second),
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	metrics, err := syncmetrics.New(ctrlmetrics.Registry)
	if err != nil {
		return fmt.Errorf("registering metrics: %w", err)
	}
	cfg.cloud.Observer = metrics
	// One store of budgets: the controller admits syncs with it, and the
	// client holds calls back in it after a 429.
	budgets := cloudapi.NewReservingBudgets(ratebudget.RateLimit(cfg.managementRate), ratebudget.RateLimit(cfg.alertRate), cfg.reservedShare)
	cfg.cloud.Budgets = budgets
	stateMetrics := statemetrics.NewCollector(cfg.metrics.itemMetrics, statemetrics.WithMaxItemBytes(cfg.metrics.itemMetricsMaxBytes))
	if err := ctrlmetrics.Registry.Register(stateMetrics); err != nil {
		return fmt.Errorf("registering state metrics: %w", err)
	}
	// Without the ClusterCloudAccount CRD the manager runs all the same,
	// serving accounts once it appears; the metric says which.
	accounts := &accountcontroller.Accounts{Client: mgr.GetClient(), Namespace: cfg.accountNamespace, Budgets: budgets,
		DefaultReserve: cfg.reservedShare, Served: metrics.SetAccountsEnabled}
	var changeSink changes.Sink // nil: none
	if cfg.changeSink.Enabled() {
		sink, err := addChangeSink(mgr, cfg.changeSink, cfg.cloud.DenyLocalAddresses)
		if err != nil {
			return err
		}
		changeSink = sink
	}
	reconciler := &controller.ServiceWatchReconciler{
		Accounts:     accounts,
		Client:       mgr.GetClient(),
		APIReader:    mgr.GetAPIReader(),
		Cloud:        cloudapi.New(cfg.cloud),
		Budgets:      budgets,
		Recorder:     mgr.GetEventRecorder("servicewatch-controller"),
		Metrics:      metrics,
		StateMetrics: stateMetrics,
		StatusBudget: tenancy.NewStatusLedger(tenancy.StatusBudget{Bytes: cfg.statusBudget.namespace, Setting: "--namespace-status-budget"},
			tenancy.StatusBudget{Bytes: cfg.statusBudget.total, Setting: "--total-status-budget"}),
		// Each namespace's share of the work of decoding the cloud's answers.
		WorkShares: tenancy.NewWorkShares(tenancy.DefaultWorkRate, tenancy.DefaultWorkBurst, time.Now),
		ChangeSink: changeSink,
		Options:    cfg.reconciler,
	}
	if err := reconciler.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the controller: %w", err)
	}
	// A shard sees only its own watches: the accounts' counts are written by
	// an unsharded manager only, or they would flap between the shards'.
	if accounts.Enabled() && (cfg.reconciler.Scope.WatchSelector == nil || cfg.reconciler.Scope.WatchSelector.Empty()) {
		if err := accounts.SetupWithManager(mgr); err != nil {
			return err
		}
	}
	if cfg.storageMigration {
		if err := addStorageMigration(mgr); err != nil {
			return err
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	setupLog.Info("starting manager", "managementApiUrl", cfg.reconciler.ManagementAPIURL, "alertApiUrl", cfg.reconciler.AlertAPIURL,
		"allowedApiUrls", cfg.reconciler.AllowedAPIURLs.String(), "denyLocalAddresses", cfg.cloud.DenyLocalAddresses,
		"watchNamespaces", cfg.reconciler.Scope.Namespaces, "watchLabelSelector", selectorString(cfg.reconciler.Scope.WatchSelector), "accountNamespace", cfg.accountNamespace, "leaderElectionId", cfg.leaderElectionID, "storageMigration", cfg.storageMigration,
		"changeSinkUrl", cfg.changeSink.URL)
	return mgr.Start(ctx)
}

// addChangeSink runs the CloudEvents sink of opts, which names a URL, on
// the leader, its client with the cloud calls' dial guard when deny is set.
func addChangeSink(mgr ctrl.Manager, opts changes.SinkOptions, deny bool) (*changes.CloudEventsSink, error) {
	sink, err := changes.NewCloudEventsSink(opts, changes.SinkDeps{
		Registerer: ctrlmetrics.Registry, DenyLocalAddresses: deny, Log: ctrl.Log.WithName("change-sink"),
	})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(sink); err != nil {
		return nil, err
	}
	return sink, nil
}

// addStorageMigration has the leader migrate our CRDs' storage at start,
// while the controllers run.
func addStorageMigration(mgr ctrl.Manager) error {
	metrics, err := storagemigration.NewMetrics(ctrlmetrics.Registry)
	if err != nil {
		return fmt.Errorf("registering storage migration metrics: %w", err)
	}
	migrator, err := storagemigration.New(mgr.GetConfig(), swv1.CRDNames(), metrics, ctrl.Log.WithName("storage-migration"))
	if err != nil {
		return err
	}
	return mgr.Add(migrator)
}
