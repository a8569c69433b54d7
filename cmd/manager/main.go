// Command manager runs the servicewatch operator: it syncs every
// ServiceWatch in the cluster with the cloud APIs it names.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/labels"
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
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
	"github.com/servicewatch/servicewatch/internal/storagemigration"
	"github.com/servicewatch/servicewatch/internal/tenancy"
)

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(2)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&cfg.log.zap)))
	if err := run(ctrl.SetupSignalHandler(), cfg); err != nil {
		ctrl.Log.WithName("setup").Error(err, "manager stopped")
		os.Exit(1)
	}
}

func selectorString(sel labels.Selector) string {
	if sel == nil {
		return ""
	}
	return sel.String()
}

func run(ctx context.Context, cfg options) error {
	setupLog := ctrl.Log.WithName("setup")
	scheme, err := controller.NewScheme()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                        scheme,
		Cache:                         controller.CacheOptions(cfg.reconciler.Scope),
		Metrics:                       metricsServerOptions(cfg.metrics),
		HealthProbeBindAddress:        cfg.probes.addr,
		LeaderElection:                cfg.leaderElection.enabled,
		LeaderElectionID:              cfg.leaderElection.id,
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       ptr.To(30 * time.Second),
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	syncMetrics, err := metrics.NewSync(ctrlmetrics.Registry)
	if err != nil {
		return fmt.Errorf("registering metrics: %w", err)
	}
	cfg.cloud.Observer = syncMetrics
	// One store of budgets: the controller admits syncs with it, and the
	// client holds calls back in it after a 429.
	budgets := cloudapi.NewReservingBudgets(ratebudget.RateLimit(cfg.budgets.managementRate), ratebudget.RateLimit(cfg.budgets.alertRate), cfg.budgets.reservedShare)
	cfg.cloud.Budgets = budgets
	stateMetrics := metrics.NewState(cfg.metrics.itemMetrics, metrics.WithMaxItemBytes(cfg.metrics.itemMetricsMaxBytes))
	if err := ctrlmetrics.Registry.Register(stateMetrics); err != nil {
		return fmt.Errorf("registering state metrics: %w", err)
	}
	// Without the ClusterCloudAccount CRD the manager runs all the same,
	// serving accounts once it appears; the metric says which.
	accounts := &accountcontroller.Accounts{Client: mgr.GetClient(), Namespace: cfg.accounts.namespace, Budgets: budgets,
		DefaultReserve: cfg.budgets.reservedShare, Served: syncMetrics.SetAccountsEnabled}
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
		Recorder:     mgr.GetEventRecorder(controller.ReportingController),
		Metrics:      syncMetrics,
		StateMetrics: stateMetrics,
		StatusBudget: cfg.statusBudget.Ledger(),
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
	if cfg.storageMigration.enabled {
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
		"watchNamespaces", cfg.reconciler.Scope.Namespaces, "watchLabelSelector", selectorString(cfg.reconciler.Scope.WatchSelector), "accountNamespace", cfg.accounts.namespace, "leaderElectionId", cfg.leaderElection.id, "storageMigration", cfg.storageMigration.enabled,
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
	migrationMetrics, err := storagemigration.NewMetrics(ctrlmetrics.Registry)
	if err != nil {
		return fmt.Errorf("registering storage migration metrics: %w", err)
	}
	migrator, err := storagemigration.New(mgr.GetConfig(), swv1.CRDNames(), migrationMetrics, ctrl.Log.WithName("storage-migration"))
	if err != nil {
		return err
	}
	return mgr.Add(migrator)
}
