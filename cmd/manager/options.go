package main

import (
	"flag"
	"fmt"
	"os"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/servicewatch/servicewatch/internal/changes"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/tenancy"
)

// flagOptions are options a part of the manager owns: they bind their own
// flags, and refuse at start the values that could only fail later.
type flagOptions interface {
	BindFlags(fs *flag.FlagSet)
	Validate() error
}

// options are everything the flags set, one struct per part that owns them.
type options struct {
	metrics          metricsOptions
	probes           probeOptions
	leaderElection   leaderElectionOptions
	reconciler       controller.Options
	cloud            cloudapi.Options
	budgets          budgetOptions
	statusBudget     tenancy.StatusBudgetOptions
	accounts         accountOptions
	storageMigration storageMigrationOptions
	// changeSink is where item state changes are sent as CloudEvents.
	changeSink changes.SinkOptions
	log        logOptions
}

// newOptions are the options before the flags: the defaults of those whose
// BindFlags take them from the struct.
func newOptions() options {
	return options{changeSink: changes.DefaultSinkOptions()}
}

// parts are o's options in the order they bind and validate.
func (o *options) parts() []flagOptions {
	return []flagOptions{&o.metrics, &o.probes, &o.leaderElection, &o.reconciler, &o.cloud, &o.budgets,
		&o.statusBudget, &o.accounts, &o.storageMigration, &o.changeSink, &o.log}
}

// newFlagSet is the manager's command line, each flag bound to its field of o.
func newFlagSet(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	for _, p := range o.parts() {
		p.BindFlags(fs)
	}
	return fs
}

// parseFlags reads the command line, and refuses values that could only fail
// later, one watch at a time.
func parseFlags(args []string) (options, error) {
	o := newOptions()
	if err := newFlagSet(&o).Parse(args); err != nil {
		return o, err
	}
	for _, p := range o.parts() {
		if err := p.Validate(); err != nil {
			return o, err
		}
	}
	return o, nil
}

// metricsOptions are where and how the metrics endpoint serves, and how many
// series of items it shows.
type metricsOptions struct {
	addr        string
	secure      bool
	certDir     string
	enableHTTP2 bool
	itemMetrics bool
	// itemMetricsMaxBytes bounds the item series of one watch.
	itemMetricsMaxBytes int
}

func (o *metricsOptions) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.addr, "metrics-bind-address", ":8443", "Address the Prometheus metrics endpoint binds to; \"0\" disables it.")
	fs.BoolVar(&o.secure, "metrics-secure", true, "Serve metrics over HTTPS, only to clients the API server authenticates and authorizes for GET /metrics; false: plain HTTP, open to anyone who reaches the port.")
	fs.StringVar(&o.certDir, "metrics-cert-dir", "", "Directory with tls.crt and tls.key for the metrics endpoint (reloaded when they change); empty or missing files: a self-signed certificate.")
	fs.BoolVar(&o.enableHTTP2, "enable-http2", false, "Serve metrics over HTTP/2 as well; off by default against HTTP/2 Rapid Reset and Stream Cancellation attacks.")
	fs.BoolVar(&o.itemMetrics, "item-metrics", true, "Export one series per pipe, reverse private endpoint and alert (servicewatch_pipe_info and the like); false keeps only the per-watch state metrics.")
	fs.IntVar(&o.itemMetricsMaxBytes, "item-metrics-max-bytes", metrics.DefaultMaxItemBytes, "Bound on one ServiceWatch's item series, in bytes: each series costs its label values plus 256. Past it a scrape shows the first items by ID and servicewatch_item_metrics_omitted counts the rest.")
}

// Validate accepts every value: 0 item bytes shows no item series, and a
// bad address fails at start with the listener's own error.
func (o *metricsOptions) Validate() error { return nil }

// probeOptions are where the health probes are served.
type probeOptions struct{ addr string }

func (o *probeOptions) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.addr, "health-probe-bind-address", ":8081", "Address the /healthz and /readyz endpoints bind to.")
}

func (o *probeOptions) Validate() error { return nil }

// leaderElectionOptions say whether replicas elect a leader, and by which
// lease.
type leaderElectionOptions struct {
	enabled bool
	id      string
}

func (o *leaderElectionOptions) BindFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.enabled, "leader-elect", false, "Elect a leader so that only one replica syncs at a time.")
	fs.StringVar(&o.id, "leader-election-id", "servicewatch.cloud.servicewatch.io", "Name of the leader-election lease; each shard needs its own.")
}

// Validate refuses an empty lease name when there is an election.
func (o *leaderElectionOptions) Validate() error {
	if o.enabled && o.id == "" {
		return fmt.Errorf("--leader-election-id must not be empty with --leader-elect")
	}
	return nil
}

// budgetOptions are the client-side rate budgets of each key and token, and
// the share of them left to callers outside the manager.
type budgetOptions struct {
	managementRate rateFlag
	alertRate      rateFlag
	// reservedShare is the share of each key's budget left to callers
	// outside the manager.
	reservedShare float64
}

func (o *budgetOptions) BindFlags(fs *flag.FlagSet) {
	o.managementRate = rateFlag(cloudapi.DefaultManagementRate())
	o.alertRate = rateFlag(cloudapi.DefaultAlertRate())
	fs.Var(&o.managementRate, "management-rate-limit", rateLimitHelp("management key", "10.89 s for 10/10s"))
	fs.Var(&o.alertRate, "alert-rate-limit", rateLimitHelp("alert token", "65.93 s for 100/1m"))
	fs.Float64Var(&o.reservedShare, "reserved-budget-share", 0, "Share of each key's and token's budget, in [0, 1), left to callers outside the manager (a Terraform run, a scraper): the manager keeps under the rest (at least 1 call per period), and a 429 it gets while under counts as cause=\"others\" in servicewatch_cloud_rate_limited_total.")
}

// Validate refuses a reserved share outside [0, 1); the rate limits are
// checked as they are parsed.
func (o *budgetOptions) Validate() error {
	if err := tenancy.ValidateReserve(o.reservedShare); err != nil {
		return fmt.Errorf("--reserved-budget-share: %w", err)
	}
	return nil
}

// rateLimitHelp is the help of a client-side rate-limit flag for one kind of
// credential; example is the window its default is kept over (see
// cloudapi's slotOf).
func rateLimitHelp(credential, example string) string {
	return "Client-side budget per " + credential + " and API host, as REQUESTS/PERIOD[/BURST] (BURST defaults to REQUESTS); " +
		"kept over any window of PERIOD × 1.1 less a tenth of a spacing (" + example + "), a margin for latency; 0 disables."
}

// accountOptions say where the ClusterCloudAccounts' Secrets are.
type accountOptions struct{ namespace string }

func (o *accountOptions) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.namespace, "account-namespace", os.Getenv("POD_NAMESPACE"), "The operator's own namespace, where the Secrets of ClusterCloudAccounts are (never a tenant's); default $POD_NAMESPACE. Empty: no ClusterCloudAccounts are served (the manager then needs no right on namespaces), and a watch that refers to one is Stalled (AccountNotFound).")
}

func (o *accountOptions) Validate() error { return nil }

// storageMigrationOptions say whether the leader rewrites objects stored in
// an older version of the CRDs and trims their storedVersions.
type storageMigrationOptions struct{ enabled bool }

func (o *storageMigrationOptions) BindFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.enabled, "storage-migration", true, "At start, the leader rewrites every ServiceWatch and ClusterCloudAccount still stored in an older version of its CRD in the storage version, then trims the CRD's status.storedVersions to it (needs get on the two CRDs and patch on their status; skipped, with a log line, without them). false: for installs whose CRDs are migrated elsewhere.")
}

func (o *storageMigrationOptions) Validate() error { return nil }

// logOptions are the logger's (zap's) flags, production logging by default.
type logOptions struct{ zap zap.Options }

func (o *logOptions) BindFlags(fs *flag.FlagSet) {
	o.zap.Development = false
	o.zap.BindFlags(fs)
}

func (o *logOptions) Validate() error { return nil }
