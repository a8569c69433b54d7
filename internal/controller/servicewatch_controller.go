package controller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/accountcontroller"
	"github.com/servicewatch/servicewatch/internal/alerts"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/changes"
	"github.com/servicewatch/servicewatch/internal/controller/credentials"
	"github.com/servicewatch/servicewatch/internal/controller/fairqueue"
	"github.com/servicewatch/servicewatch/internal/controller/reads"
	"github.com/servicewatch/servicewatch/internal/egress"
	"github.com/servicewatch/servicewatch/internal/metrics/statemetrics"
	"github.com/servicewatch/servicewatch/internal/metrics/syncmetrics"
	"github.com/servicewatch/servicewatch/internal/pacing"
	"github.com/servicewatch/servicewatch/internal/tenancy"
)

// Options tune the reconciler; the manager's flags set them.
type Options struct {
	// ManagementAPIURL is used when a watch's spec.managementApi.url is empty.
	ManagementAPIURL string
	// AlertAPIURL is used when a watch's spec.alertApi.url is empty.
	AlertAPIURL string
	// AllowedAPIURLs is where watches may send their credentials: a watch
	// whose API URL is not on it is Stalled (URLNotAllowed) before its
	// Secret is read. The zero value allows every URL.
	AllowedAPIURLs egress.URLAllowList
	// Scope is what the manager watches: its cache (CacheOptions) and the
	// Secrets it watches are confined to the same namespaces.
	Scope Scope
	// MaxConcurrentReconciles is how many reconcile workers run. They do
	// only Kubernetes work: cloud reads run in the background.
	MaxConcurrentReconciles int
	// MaxConcurrentSyncs bounds the syncs calling the cloud at once, each
	// counted once per API host it is calling (a sync holds a host's slot
	// only while it calls that host). Default DefaultMaxConcurrentSyncs.
	MaxConcurrentSyncs int
	// MaxSyncsPerHost bounds the syncs calling one API host at once, so
	// that a host that hangs holds at most that many of MaxConcurrentSyncs.
	// Default DefaultMaxSyncsPerHost.
	MaxSyncsPerHost int
	// MaxSyncsPerNamespace bounds the syncs of one namespace's watches
	// calling the cloud at once, on all hosts together, so that one
	// namespace (however many watches and hosts it has) leaves the rest of
	// the slots to the others. Default DefaultMaxSyncsPerNamespace.
	MaxSyncsPerNamespace int
	// AlertConcurrency is how many alerts of one watch are fetched at once.
	AlertConcurrency int
	// StatusSizeLimit bounds the JSON size of a status; lists are truncated
	// past it. Default DefaultStatusSizeLimit.
	StatusSizeLimit int
	// SyncTimeout bounds one whole sync.
	SyncTimeout time.Duration
	// AlertListRetry is how long a host without an alert list route is read
	// one alert at a time before its list is tried again. Default 10m.
	AlertListRetry time.Duration
}

// ServiceWatchReconciler syncs ServiceWatches with the cloud.
type ServiceWatchReconciler struct {
	// Client reads ServiceWatches and Secret metadata from the cache and
	// patches status.
	Client client.Client
	// APIReader reads Secrets straight from the API server.
	APIReader client.Reader
	Cloud     Cloud
	Recorder  events.EventRecorder
	Metrics   *syncmetrics.Metrics
	// Budgets admits each sync's calls; the Cloud's client holds its calls
	// back in the same store after a 429.
	Budgets Budgets
	// StateMetrics shows each watch's status as metrics; default: a
	// collector no registry reads.
	StateMetrics *statemetrics.Collector
	// StatusBudget bounds what statuses keep by namespace; nil: no bound.
	StatusBudget *tenancy.StatusLedger
	// WorkShares defer the syncs of a namespace whose answers cost more than its share to decode; nil: none.
	WorkShares *tenancy.WorkShares
	// Accounts resolves the ClusterCloudAccounts watches refer to; nil: none.
	Accounts *accountcontroller.Accounts
	// ShareWeights weigh the namespaces that share a key; nil: equal.
	ShareWeights tenancy.Weights
	// ChangeSink is offered the item state changes of every sync, besides
	// their Events; nil: none.
	ChangeSink changes.Sink
	Options    Options

	// parts are the parts of every sync (syncParts), built once.
	parts []part
	// pacer decides when each watch syncs and whether it may call now.
	pacer   *pacing.Pacer[types.NamespacedName, readKey]
	fetches *fetches
	// credentials reads what the syncs read with, from Secrets whose
	// versions a credentials.Watch (which SetupWithManager starts) knows.
	credentials *credentials.Reader
	// shared lets watches that read the same thing share the calls.
	shared *reads.Shared[readKey]
	// routes know which hosts serve the alert list.
	routes *alerts.Routes
	// alertNeeds are what the watches sharing each alert list use of it.
	alertNeeds *alerts.Needs[readKey]
	// listPages are the pages the last read of each alert list took: a
	// sync reserves them all (see admission).
	listPages *alerts.PageCounts[readKey]
	// clock reads the time and tells the wall clock's steps to the pacer;
	// default: the machine's (pacing.SystemClock).
	clock *pacing.Clock
	// episodes bound the events of each watch's failure episode.
	episodes episodes
	// changeBudgets bound each watch's Events of item changes over time;
	// reportingInstance names this manager in them.
	changeBudgets     changeBudgets
	reportingInstance string
	// holdsRestored is set once the persisted Retry-After holds were given
	// back to the client (restoreHolds); holdsMu orders the restoring.
	holdsRestored atomic.Bool
	holdsMu       sync.Mutex
}

// The default read slots. A sync holds a host's slot only while it calls
// that host (see reads.Slots), and the namespaces that wait take turns, so the
// bounds are chosen from what one tenant must not be able to take from the
// others (issue 17), as well as from the API server's load:
//
//   - DefaultMaxSyncsPerNamespace: one namespace's watches hold at most 3
//     slots, whatever hosts they name and however many they are. 3 syncs in
//     flight is the most at which 1,000 new watches still sync at the
//     cloud's pace on a 2-core control plane (make bench-scale: 1.08 to
//     1.11 times the bound N × latency / slots; 1.10 to 1.61 at 4, no faster
//     at 8 or 16, where status writes saturate the API server), and what the
//     previous default of 3 per host gave a namespace on one host: a
//     namespace alone loses nothing by it.
//   - DefaultMaxSyncsPerHost: 16, five namespaces' worth. The real
//     management API is one host for every tenant: per-host slots alone do
//     not separate tenants there, and a namespace whose calls hang until
//     the client gives up must leave the others most of that host.
//   - DefaultMaxConcurrentSyncs: 32, ten namespaces' worth and two hosts'
//     worth: a host that hangs for everyone holds at most half of all.
//
// A cluster whose many namespaces sync at once, or whose cloud answers
// slowly, raises them (servicewatch_sync_slot_wait_seconds tells).
const (
	// DefaultMaxConcurrentSyncs is the default bound on syncs calling the
	// cloud at once, on all hosts.
	DefaultMaxConcurrentSyncs = 32
	// DefaultMaxSyncsPerHost is the default bound on syncs calling one API
	// host at once.
	DefaultMaxSyncsPerHost = 16
	// DefaultMaxSyncsPerNamespace is the default bound on syncs of one
	// namespace calling the cloud at once.
	DefaultMaxSyncsPerNamespace = 3
)

// secretNamesIndex indexes ServiceWatches by the Secrets they reference, so a
// change to a Secret finds its watches without listing them all.
const secretNamesIndex = ".spec.secretRefNames"

// +kubebuilder:rbac:groups=cloud.servicewatch.io,resources=servicewatches,verbs=get;list;watch
// +kubebuilder:rbac:groups=cloud.servicewatch.io,resources=servicewatches/status,verbs=get;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the reconciler with mgr, and the background
// reads as a runnable of mgr.
func (r *ServiceWatchReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.defaults()
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &swv1.ServiceWatch{}, secretNamesIndex, credentials.ReferencedSecrets); err != nil {
		return fmt.Errorf("indexing ServiceWatches by Secret: %w", err)
	}
	if err := mgr.Add(r.fetches); err != nil {
		return fmt.Errorf("adding the background reads: %w", err)
	}
	md, err := metadata.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return fmt.Errorf("creating a metadata client for Secrets: %w", err)
	}
	secretChanged := make(chan ctrlevent.GenericEvent)
	secrets := credentials.New(md, r.Options.Scope.Namespaces, referencedBy(mgr.GetCache(), r.Accounts), secretChanged)
	r.credentials.Secrets = secrets
	if err := mgr.Add(secrets); err != nil {
		return fmt.Errorf("adding the Secret watch: %w", err)
	}
	if r.ShareWeights == nil && r.Accounts.Enabled() { // an account's namespace weights
		r.ShareWeights = r.Accounts.WeightOf
	}
	b, err := r.Accounts.Wire(context.Background(), mgr, ctrl.NewControllerManagedBy(mgr))
	if err != nil {
		return err
	}
	c, err := b.Named("servicewatch").
		// Status writes change neither generation nor annotations, so the
		// operator's own writes never trigger a sync.
		For(&swv1.ServiceWatch{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		// Changes to referenced Secrets (see secretwatch.Watch: metadata only, and
		// nothing kept of the Secrets no watch references). A Secret's change
		// is served after the users' own changes and before periodic
		// refreshes (see pacing.Level).
		WatchesRawSource(source.Channel(secretChanged,
			fairqueue.WithPriority(handler.EnqueueRequestsFromMapFunc(r.watchesForSecret), func(client.Object) int { return fairqueue.PriorityOf(pacing.Secret) }))).
		// The end of a background read wakes its watch, at the level of the
		// work the read was for: a periodic refresh writes its result behind
		// a user's new watch.
		WatchesRawSource(source.Channel(r.fetches.Wake(), fairqueue.WithPriority(fairqueue.EnqueueKey(),
			func(key types.NamespacedName) int { return fairqueue.PriorityOf(r.fetches.Level(key)) }))).
		// A Secret's change puts at most as many of a namespace's watches
		// ahead of the others' work as the namespace may read at once.
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Options.MaxConcurrentReconciles,
			NewQueue: fairqueue.NewQueue(fairqueue.Options{SecretShare: r.Options.MaxSyncsPerNamespace})}).
		Build(r)
	if err != nil {
		return err
	}
	// Accounts are heard of once their CRD is served: a manager without it
	// runs, and starts serving accounts when it appears.
	return r.Accounts.WatchAccounts(mgr, c)
}

// DefaultOptions are the options' defaults: the manager's flags show them,
// and the reconciler fills in any option left zero with them.
func DefaultOptions() Options {
	return Options{
		MaxConcurrentReconciles: 4,
		MaxConcurrentSyncs:      DefaultMaxConcurrentSyncs,
		MaxSyncsPerHost:         DefaultMaxSyncsPerHost,
		MaxSyncsPerNamespace:    DefaultMaxSyncsPerNamespace,
		AlertConcurrency:        4,
		StatusSizeLimit:         DefaultStatusSizeLimit,
		SyncTimeout:             2 * time.Minute,
	}
}

// withDefaults is o with its zero tunables set to DefaultOptions'.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	for _, v := range []struct {
		field *int
		def   int
	}{
		{&o.MaxConcurrentReconciles, d.MaxConcurrentReconciles}, {&o.MaxConcurrentSyncs, d.MaxConcurrentSyncs},
		{&o.MaxSyncsPerHost, d.MaxSyncsPerHost}, {&o.MaxSyncsPerNamespace, d.MaxSyncsPerNamespace}, {&o.AlertConcurrency, d.AlertConcurrency}, {&o.StatusSizeLimit, d.StatusSizeLimit},
	} {
		if *v.field == 0 {
			*v.field = v.def
		}
	}
	if o.SyncTimeout == 0 {
		o.SyncTimeout = d.SyncTimeout
	}
	return o
}

func (r *ServiceWatchReconciler) defaults() {
	r.Options = r.Options.withDefaults()
	r.parts = syncParts()
	if r.clock == nil {
		r.clock = pacing.SystemClock()
	}
	if r.pacer == nil {
		r.pacer = pacing.New[types.NamespacedName, readKey](r.clock, nil)
	}
	if r.credentials == nil {
		r.credentials = credentials.NewReader(credentials.Reader{Client: r.APIReader, Accounts: r.Accounts,
			Fallbacks: accountcontroller.Fallbacks{ManagementURL: r.Options.ManagementAPIURL, AlertURL: r.Options.AlertAPIURL},
			Allowed:   r.Options.AllowedAPIURLs, Namespaces: r.Options.Scope.Namespaces})
	}
	if r.fetches == nil {
		r.fetches = newFetches(reads.SlotLimits{All: r.Options.MaxConcurrentSyncs, PerHost: r.Options.MaxSyncsPerHost,
			PerTenant: r.Options.MaxSyncsPerNamespace}, r.Options.SyncTimeout, r.clock.Now, r.Metrics.ObserveSlotWait)
	}
	if r.shared == nil {
		r.shared = newSharedReads(sharedFreshness, r.clock.Now)
	}
	if r.alertNeeds == nil {
		r.alertNeeds = alerts.NewNeeds[readKey](r.clock.Now)
	}
	if r.listPages == nil {
		r.listPages = alerts.NewPageCounts[readKey](r.clock.Now)
	}
	if r.routes == nil {
		r.routes = alerts.NewRoutes(r.clock.Now, cmp.Or(r.Options.AlertListRetry, 10*time.Minute))
	}
	if r.StateMetrics == nil {
		r.StateMetrics = statemetrics.NewCollector(true)
	}
	if r.reportingInstance == "" {
		host, _ := os.Hostname()
		r.reportingInstance = bound.Bytes(ReportingController+"-"+cmp.Or(host, "unknown"), 128)
	}
}

func (r *ServiceWatchReconciler) watchesForSecret(ctx context.Context, secret client.Object) []reconcile.Request {
	var watches swv1.ServiceWatchList
	if err := r.Client.List(ctx, &watches, client.InNamespace(secret.GetNamespace()),
		client.MatchingFields{secretNamesIndex: secret.GetName()}); err != nil {
		log.FromContext(ctx).Error(err, "listing ServiceWatches that reference a Secret", "secret", secret.GetName())
		return nil
	}
	requests := make([]reconcile.Request, 0, len(watches.Items))
	for i := range watches.Items {
		requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&watches.Items[i])})
	}
	return append(requests, r.Accounts.WatchesOfSecret(ctx, secret)...) // an account's: its watches are in any namespace
}

// Reconcile syncs one ServiceWatch when a sync is due, and says when the next
// one is. A sync runs in two reconciles: one starts the cloud reads in the
// background (start), the next, woken by their end, writes what they read
// (write).
func (r *ServiceWatchReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var watch swv1.ServiceWatch
	if err := r.Client.Get(ctx, req.NamespacedName, &watch); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !watch.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	r.StatusBudget.HoldIfNew(watch.Namespace, watch.Name, func() int { return fixedSize(&watch.Status) })
	if watch.Spec.Suspend {
		return ctrl.Result{}, r.suspend(ctx, &watch)
	}
	s := r.newScope(ctx, &watch)
	if read, ok := r.takeRead(req.NamespacedName); ok && read.p.Trigger == s.p.Trigger {
		return r.write(ctx, &watch, s.p, read), nil
	}
	if r.fetches.Busy(req.NamespacedName) {
		return ctrl.Result{}, nil // the read's end wakes the watch
	}
	if wait := r.pacer.Due(s.p); wait > 0 {
		// A watch first seen after a restart may not be due for a while;
		// its state metrics show its status until then.
		r.StateMetrics.SetIfAbsent(stateMetricsOf(&watch))
		return periodic(wait), nil
	}
	return r.start(ctx, s), nil
}

// newScope is the scope of a sync of watch as this reconcile sees it.
func (r *ServiceWatchReconciler) newScope(ctx context.Context, watch *swv1.ServiceWatch) *syncScope {
	versions := r.credentials.Versions(ctx, watch)
	return &syncScope{p: pacedOf(watch, versions, r.Options.ManagementAPIURL), watch: watch, secretVersions: versions,
		parts: r.parts, alertConcurrency: r.Options.AlertConcurrency, keepBytes: r.Options.StatusSizeLimit,
		metricBytes: r.StateMetrics.MaxItemBytes(), shared: r.shared, budgets: r.Budgets,
		chargeWork: func(units int64) { r.WorkShares.Charge(watch.Namespace, units) },
		spent:      func(budget string, calls int) { r.pacer.Spent(budget, watch.Namespace, calls) }}
}

// periodic requeues a watch for a periodic sync, behind anything a user
// asked for.
func periodic(wait time.Duration) ctrl.Result {
	return ctrl.Result{RequeueAfter: wait, Priority: ptr.To(handler.LowPriority)}
}

func (r *ServiceWatchReconciler) forget(key types.NamespacedName) {
	r.alertNeeds.Forget(key.String())
	r.pacer.Forget(key)
	r.fetches.Forget(key)
	r.Metrics.PublishBudgetDemands(r.pacer.TakeDemandChanges)
	r.Metrics.Forget(key)
	r.StateMetrics.Delete(key.Namespace, key.Name)
	r.episodes.forget(key)
	r.changeBudgets.forget(key)
	r.StatusBudget.Release(key.Namespace, key.Name)
}

// suspend acknowledges a suspended watch: Ready turns False with reason
// Suspended, a requested sync is echoed as handled, and no call is made.
func (r *ServiceWatchReconciler) suspend(ctx context.Context, watch *swv1.ServiceWatch) error {
	r.fetches.Forget(client.ObjectKeyFromObject(watch)) // a read under way is not written
	// A suspended watch makes no call: it leaves the budget book, its claims
	// and its lines, so the watches on its credentials are no longer
	// stretched for it; resuming syncs at once and asks again.
	r.pacer.Forget(client.ObjectKeyFromObject(watch))
	r.alertNeeds.Forget(client.ObjectKeyFromObject(watch).String())
	r.Metrics.PublishBudgetDemands(r.pacer.TakeDemandChanges)
	before, err := r.writeStatus(ctx, watch, statusChange{suspended: true})
	if err != nil {
		// A watch deleted meanwhile is forgotten by its delete event.
		return client.IgnoreNotFound(err)
	}
	r.StateMetrics.Set(stateMetricsOf(watch))
	r.emit(ctx, watch, r.episodes.events(before, watch, r.parts))
	return nil
}

// syncStep is one step of starting a sync. It says whether to go on; when
// it does not, the sync waits (for room in a budget, a Secret that changed)
// and result says when to come back: nothing was sent and nothing written.
type syncStep func(ctx context.Context, s *syncScope) (result ctrl.Result, goOn bool)

// start begins a sync, in the order of its steps: the persisted Retry-After
// holds are restored (once per process); the credentials are known by their
// digests, reading a Secret only when its digest at its current version is
// unknown; the watch's demand on its budgets is noted and the budgets are
// asked for the calls; the credentials themselves are read for the calls
// admitted; work the user asked for is announced; the reads start in the
// background.
func (r *ServiceWatchReconciler) start(ctx context.Context, s *syncScope) ctrl.Result {
	for _, step := range []syncStep{r.restoreHolds, r.learnAccess, r.noteDemand, r.admit, r.readCredentials, r.announce, r.startReads} {
		if result, goOn := step(ctx, s); !goOn {
			return result
		}
	}
	return ctrl.Result{}
}

// learnAccess learns what the parts need of the referenced Secrets (see
// accessOf) and what the pacer says of the sync: whether it must read fresh,
// and the level of its work.
func (r *ServiceWatchReconciler) learnAccess(ctx context.Context, s *syncScope) (ctrl.Result, bool) {
	s.management, s.alerts = r.accessOf(ctx, s.watch, s.secretVersions)
	s.routes, s.alertsByList = r.routes, r.routes.UseList(alerts.RouteOf(s.alertSource(), s.alerts.digest))
	s.alertNeeds, s.pageCounts = r.alertNeeds, r.listPages
	if s.alertsByList && s.alerts.failure == nil && alerts.InUse(&s.watch.Spec) {
		// Before any read of the list begins, so that it keeps this need.
		r.alertNeeds.Register(s.p.Key.String(), s.alertListRead(), alerts.NeedOf(&s.watch.Spec), needKeptFor(s.watch))
	}
	r.pacer.ReadsList(s.p.Key, s.sharedListGroup())
	s.fresh, s.level = r.pacer.Fresh(s.p), r.pacer.Level(s.p)
	return ctrl.Result{}, true
}

// readCredentials reads the credentials that admission knew only by their
// digests, for the parts that will call: a sync reads its Secrets at most
// once more after it was admitted, however long it waited. When a Secret
// changed since its digest was admitted, the sync starts again (the change
// wakes the watch anyway).
func (r *ServiceWatchReconciler) readCredentials(ctx context.Context, s *syncScope) (ctrl.Result, bool) {
	sameManagement, sameAlerts := true, true
	var wg sync.WaitGroup
	if m := s.management; m.unread && m.failure == nil {
		wg.Go(func() {
			s.management = managementOf(r.credentials.ReadManagement(ctx, s.watch))
			sameManagement = s.management.failure != nil || s.management.digest == m.digest
		})
	}
	if a := s.alerts; a.unread && a.failure == nil && !s.alertsDeferred {
		wg.Go(func() {
			s.alerts = alertOf(r.credentials.ReadAlert(ctx, s.watch))
			sameAlerts = s.alerts.failure != nil || s.alerts.digest == a.digest
		})
	}
	wg.Wait()
	return ctrl.Result{RequeueAfter: time.Second}, sameManagement && sameAlerts
}

// announce marks the watch Reconciling before slow cloud calls when the
// user asked for the sync, so that `kubectl get` and kstatus show it is
// being worked on. It is best effort: the sync's own write follows. A new
// watch reads observedGeneration -1, which kstatus already shows as in
// progress: it costs no write of its own.
func (r *ServiceWatchReconciler) announce(ctx context.Context, s *syncScope) (ctrl.Result, bool) {
	if !s.p.Asked() || s.watch.Status.ObservedGeneration <= 0 {
		return ctrl.Result{}, true
	}
	if _, err := r.writeStatus(ctx, s.watch, statusChange{announce: requestedWork(s.watch)}); err != nil && !apierrors.IsNotFound(err) {
		// A deleted watch's write forgets it; any other failure is the
		// sync's own write's to retry.
		log.FromContext(ctx).Error(err, "announcing the sync")
	}
	return ctrl.Result{}, true
}

// startReads starts the cloud reads in the background; their end wakes the
// watch to write what they found.
func (r *ServiceWatchReconciler) startReads(ctx context.Context, s *syncScope) (ctrl.Result, bool) {
	r.fetches.Run(ctx, readRequest(s, func(ctx context.Context, slots *reads.Slots) []partResult {
		return readCloud(ctx, slottedCloud{Cloud: r.Cloud, slots: slots}, s)
	}))
	return ctrl.Result{}, true
}

// write ends a sync: build and patch the status, then tell of what changed
// (events, metrics, state metrics), then schedule the next sync. Its
// failures are the watch's, never the workqueue's: they are in status and
// in the schedule. p is the watch as the pacer sees it now.
func (r *ServiceWatchReconciler) write(ctx context.Context, watch *swv1.ServiceWatch, p paced, s *syncScope) ctrl.Result {
	before, err := r.writeStatus(ctx, watch, statusChange{synced: s})
	record := s.record()
	switch {
	case apierrors.IsNotFound(err):
		// Deleted while its read ran: there is no status left to write, no
		// event to emit and nothing to schedule. Its delete event may have
		// been handled before this write, so it is forgotten here too.
		log.FromContext(ctx).V(1).Info("the watch was deleted during its sync; nothing written")
		r.forget(p.Key)
		return ctrl.Result{}
	case errors.Is(err, errChangedDuringSync):
		log.FromContext(ctx).V(1).Info(err.Error())
		record.Outcome.Failed, record.Outcome.Transient = true, true
	case err != nil:
		// Retrying at once would call the cloud again for a status the API
		// server may refuse again: the write waits for the schedule's backoff
		// like any transient failure.
		log.FromContext(ctx).Error(err, "writing status; retrying on the backoff schedule")
		record.Outcome.Failed, record.Outcome.Transient = true, true
	default:
		r.tell(ctx, before, watch, s)
	}
	return periodic(r.pacer.Synced(p, record))
}

// tell reports a status written: events of what changed, the sync metrics,
// and the state metrics, with the items of the parts that just synced in
// full (s.results), within the room the status had.
func (r *ServiceWatchReconciler) tell(ctx context.Context, before, watch *swv1.ServiceWatch, s *syncScope) {
	r.emit(ctx, watch, r.episodes.events(before, watch, r.parts))
	recordSync(r.Metrics, watch, r.parts)
	fills := make([]func(*statemetrics.Watch), 0, len(s.results))
	for _, res := range s.results {
		fills = append(fills, res.metricItems)
	}
	shown := stateMetricsOf(watch, fills...)
	showSince(&shown, s.parts, s.tracking)
	shown.MaxItemBytes = s.statusRoom
	r.StateMetrics.Set(shown)
}

// fetches run the cloud reads of syncs in the background (reads): a
// worker starts a read and moves on, and the read's end wakes the watch
// again to write what was read. The calls of the reads are bounded per API
// host, per namespace and in all (slotQueue): a sync holds a host's slot
// only while it calls that host, work a user asked for goes first, and the
// namespaces that wait take turns.
type fetches = reads.Runner[types.NamespacedName, fetched]

// fetched is a sync whose read ended, and what the read found; results are
// nil when it ended without an answer (it panicked, or got no slot before
// the sync timeout).
type fetched struct {
	scope   *syncScope
	results []partResult
}

func newFetches(limits reads.SlotLimits, timeout time.Duration, now func() time.Time, slotWait func(pacing.Level, time.Duration)) *fetches {
	return reads.NewRunner[types.NamespacedName, fetched](limits, timeout, now, slotWait)
}

// readRequest is the background read of the sync s: read calls the cloud.
func readRequest(s *syncScope, read func(ctx context.Context, slots *reads.Slots) []partResult) reads.Request[types.NamespacedName, fetched] {
	return reads.Request[types.NamespacedName, fetched]{Key: s.p.Key, Tenant: s.p.Key.Namespace, Level: s.level,
		Interrupted: fetched{scope: s},
		Read: func(ctx context.Context, slots *reads.Slots) fetched {
			return fetched{scope: s, results: read(ctx, slots)}
		}}
}

// takeRead returns the sync of the watch whose read ended, if there is one,
// with what it found, and forgets it.
func (r *ServiceWatchReconciler) takeRead(key types.NamespacedName) (*syncScope, bool) {
	ended, ok := r.fetches.Take(key)
	if !ok {
		return nil, false
	}
	ended.Result.scope.ended(ended.Result.results, ended.StartedAt, ended.EndedAt)
	return ended.Result.scope, true
}

// referencedBy tells whether a ServiceWatch in the cache references the
// Secret, through the index of watches by Secret: what secretwatch.Watch
// keeps the versions of; or an account's.
func referencedBy(c client.Reader, accounts *accountcontroller.Accounts) func(context.Context, types.NamespacedName) bool {
	return func(ctx context.Context, secret types.NamespacedName) bool {
		if accounts.References(ctx, secret) {
			return true
		}
		var watches swv1.ServiceWatchList
		if err := c.List(ctx, &watches, client.InNamespace(secret.Namespace),
			client.MatchingFields{secretNamesIndex: secret.Name}, client.Limit(1), client.UnsafeDisableDeepCopy); err != nil {
			return true // keep it: better a version too many than a change missed
		}
		return len(watches.Items) > 0
	}
}

// syncParts are the parts of a sync, in the order their failures are
// reported in Ready and Stalled.
func syncParts() []part {
	return []part{pipesPart(), endpointsPart(), alertsPart()}
}
