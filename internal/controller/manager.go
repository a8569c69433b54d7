package controller

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
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
	"github.com/servicewatch/servicewatch/internal/controller/credentials"
	"github.com/servicewatch/servicewatch/internal/controller/fairqueue"
	"github.com/servicewatch/servicewatch/internal/controller/reads"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/pacing"
)

// Scope confines a manager to some namespaces and, for shards, to the
// watches that carry some labels.
type Scope struct {
	// Namespaces to watch; empty means all.
	Namespaces []string
	// WatchSelector selects the ServiceWatches of this shard; nil means all.
	WatchSelector labels.Selector
}

// CacheOptions returns the manager's cache options for the scope: the
// ServiceWatches of the shard, only in the scope's namespaces, stripped of
// what the reconciler never reads. Secrets are not in the cache at all: see
// credentials.Watch.
func CacheOptions(scope Scope) cache.Options {
	opts := cache.Options{DefaultTransform: stripForCache}
	if len(scope.Namespaces) > 0 {
		opts.DefaultNamespaces = make(map[string]cache.Config, len(scope.Namespaces))
		for _, ns := range scope.Namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	if scope.WatchSelector != nil && !scope.WatchSelector.Empty() {
		opts.ByObject = map[client.Object]cache.ByObject{&swv1.ServiceWatch{}: {Label: scope.WatchSelector}}
	}
	return opts
}

// maxCachedStatusBytes bounds the decoded status of a watch in the cache.
// The manager writes statuses within --status-size-limit charged at their
// decoded size (see DefaultStatusSizeLimit), far under this; a status over it
// was written otherwise (by a version of the operator that charged only
// JSON: 800 KiB, the limit then, of empty items decoded to 37 MiB), and
// would fill the manager's memory before its watch's next sync rewrote it.
const maxCachedStatusBytes = 4 * DefaultStatusSizeLimit

// stripForCache drops what the reconciler never reads before an object
// enters the cache: managed fields, and the lists of a status over
// maxCachedStatusBytes. Without the lists, a part that fails at the next
// sync keeps its list in the API server (the status patch leaves it out) and
// the other parts' lists are written anew.
func stripForCache(obj any) (any, error) {
	if o, ok := obj.(metav1.Object); ok {
		o.SetManagedFields(nil)
	}
	if watch, ok := obj.(*swv1.ServiceWatch); ok && bound.GoSize(&watch.Status) > maxCachedStatusBytes {
		watch.Status.Pipes, watch.Status.ReversePrivateEndpoints, watch.Status.Alerts = nil, nil, nil
	}
	return obj, nil
}

// NewScheme returns a scheme with the built-in types and the ServiceWatch
// types: what the manager and the tests talk to the API server with.
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := swv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return scheme, nil
}

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
		r.StateMetrics = metrics.NewState(true)
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
