package controller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
)

// Options tune the reconciler; the manager's flags set them.
type Options struct {
	// ManagementAPIURL is used when a watch's spec.managementApi.url is empty.
	ManagementAPIURL string
	// AlertAPIURL is used when a watch's spec.alertApi.url is empty.
	AlertAPIURL string
	// MaxConcurrentReconciles is how many watches sync at once.
	MaxConcurrentReconciles int
	// AlertConcurrency is how many alerts of one watch are fetched at once.
	AlertConcurrency int
	// StatusSizeLimit bounds the JSON size of a status; lists are truncated
	// past it. Default DefaultStatusSizeLimit.
	StatusSizeLimit int
	// SyncTimeout bounds one whole sync, rate-limiter waits included.
	SyncTimeout time.Duration
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
	Metrics   *Metrics
	Options   Options

	schedules *scheduleBook
	now       func() time.Time
}

// secretNamesIndex indexes ServiceWatches by the Secrets they reference, so a
// change to a Secret finds its watches without listing them all.
const secretNamesIndex = ".spec.secretRefNames"

// +kubebuilder:rbac:groups=cloud.servicewatch.io,resources=servicewatches,verbs=get;list;watch
// +kubebuilder:rbac:groups=cloud.servicewatch.io,resources=servicewatches/status,verbs=get;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the reconciler with mgr.
func (r *ServiceWatchReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	r.defaults()
	if err := mgr.GetFieldIndexer().IndexField(ctx, &swv1.ServiceWatch{}, secretNamesIndex, referencedSecrets); err != nil {
		return fmt.Errorf("indexing ServiceWatches by Secret: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("servicewatch").
		// Status writes change neither generation nor annotations, so the
		// operator's own writes never trigger a sync.
		For(&swv1.ServiceWatch{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		// Metadata only: a Secret's data never sits in the manager's cache.
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.watchesForSecret), builder.OnlyMetadata,
			builder.WithPredicates(predicate.ResourceVersionChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Options.MaxConcurrentReconciles}).
		Complete(r)
}

func (r *ServiceWatchReconciler) defaults() {
	if r.Options.StatusSizeLimit == 0 {
		r.Options.StatusSizeLimit = DefaultStatusSizeLimit
	}
	if r.Options.AlertConcurrency == 0 {
		r.Options.AlertConcurrency = 4
	}
	if r.Options.MaxConcurrentReconciles == 0 {
		r.Options.MaxConcurrentReconciles = 4
	}
	if r.Options.SyncTimeout == 0 {
		r.Options.SyncTimeout = 2 * time.Minute
	}
	if r.schedules == nil {
		r.schedules = newScheduleBook()
	}
	if r.now == nil {
		r.now = time.Now
	}
}

func referencedSecrets(obj client.Object) []string {
	watch := obj.(*swv1.ServiceWatch)
	names := []string{watch.Spec.ManagementAPI.SecretRef.Name}
	if watch.Spec.AlertAPI != nil && watch.Spec.AlertAPI.SecretRef.Name != names[0] {
		names = append(names, watch.Spec.AlertAPI.SecretRef.Name)
	}
	return names
}

func (r *ServiceWatchReconciler) watchesForSecret(ctx context.Context, secret client.Object) []reconcile.Request {
	var watches swv1.ServiceWatchList
	if err := r.Client.List(ctx, &watches, client.InNamespace(secret.GetNamespace()),
		client.MatchingFields{secretNamesIndex: secret.GetName()}); err != nil {
		log.FromContext(ctx).Error(err, "listing ServiceWatches that reference a Secret", "secret", secret.GetName())
		return nil
	}
	requests := make([]reconcile.Request, len(watches.Items))
	for i := range watches.Items {
		requests[i].NamespacedName = client.ObjectKeyFromObject(&watches.Items[i])
	}
	return requests
}

// Reconcile syncs one ServiceWatch when a sync is due, and says when the next
// one is.
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
	if watch.Spec.Suspend {
		return ctrl.Result{}, r.suspend(ctx, &watch)
	}
	trigger := r.currentTrigger(ctx, &watch)
	if wait := r.untilDue(req.NamespacedName, &watch, trigger); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	return r.sync(ctx, &watch, trigger)
}

func (r *ServiceWatchReconciler) forget(key types.NamespacedName) {
	r.schedules.forget(key)
	r.Metrics.forget(key)
}

// suspend acknowledges a suspended watch: Ready turns False with reason
// Suspended, a requested sync is echoed as handled, and no call is made.
func (r *ServiceWatchReconciler) suspend(ctx context.Context, watch *swv1.ServiceWatch) error {
	before := watch.DeepCopy()
	markSuspended(&watch.Status, watch.Generation)
	watch.Status.LastHandledRequestedAt = requestedAt(watch)
	r.schedules.forget(client.ObjectKeyFromObject(watch)) // resuming syncs at once
	return r.finish(ctx, before, watch)
}

// currentTrigger fingerprints what a user may change to ask for a sync now.
// Secret versions come from the metadata cache.
func (r *ServiceWatchReconciler) currentTrigger(ctx context.Context, watch *swv1.ServiceWatch) string {
	versions := make([]string, 0, 2)
	for _, name := range referencedSecrets(watch) {
		meta := &metav1.PartialObjectMetadata{}
		meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: watch.Namespace, Name: name}, meta); err == nil {
			versions = append(versions, meta.ResourceVersion)
		} else {
			versions = append(versions, "")
		}
	}
	return triggerOf(watch, versions...)
}

func triggerOf(watch *swv1.ServiceWatch, secretVersions ...string) string {
	return fmt.Sprintf("%d|%s|%v", watch.Generation, requestedAt(watch), secretVersions)
}

func requestedAt(watch *swv1.ServiceWatch) string {
	return watch.Annotations[swv1.RequestedAtAnnotation]
}

// untilDue returns how long until the watch's next sync, 0 when it is due.
func (r *ServiceWatchReconciler) untilDue(key types.NamespacedName, watch *swv1.ServiceWatch, trigger string) time.Duration {
	if requestedWork(watch) != "" {
		return 0
	}
	s, known := r.schedules.get(key)
	switch {
	case known && s.trigger != trigger:
		return 0
	case known:
		return s.nextSync.Sub(r.now())
	}
	// First sight since the manager started: a healthy watch synced recently
	// waits for its interval, so a restart does not call the cloud for every
	// watch at once.
	if watch.Status.LastSyncTime == nil || !isReady(watch) {
		return 0
	}
	next := watch.Status.LastSyncTime.Add(interval(watch))
	r.schedules.set(key, watchSchedule{trigger: trigger, nextSync: next})
	return next.Sub(r.now())
}

// requestedWork says why a sync is owed to the user right now, or "" when
// none is: a new generation, or a new value of the requested-at annotation.
func requestedWork(watch *swv1.ServiceWatch) string {
	switch {
	case watch.Status.ObservedGeneration != watch.Generation:
		return fmt.Sprintf("syncing generation %d", watch.Generation)
	case requestedAt(watch) != "" && requestedAt(watch) != watch.Status.LastHandledRequestedAt:
		return fmt.Sprintf("syncing as requested at %s", requestedAt(watch))
	}
	return ""
}

// interval is the watch's sync interval. The CRD defaults it and forbids
// values under 30s; the floor here keeps an object that predates those rules
// from turning into a tight loop.
func interval(watch *swv1.ServiceWatch) time.Duration {
	if d := watch.Spec.Interval.Duration; d >= minInterval {
		return d
	}
	return defaultInterval
}

const (
	minInterval     = 30 * time.Second
	defaultInterval = 5 * time.Minute
)

func isReady(watch *swv1.ServiceWatch) bool {
	for _, c := range watch.Status.Conditions {
		if c.Type == swv1.ConditionReady {
			return c.Status == metav1.ConditionTrue && c.ObservedGeneration == watch.Generation
		}
	}
	return false
}

// sync reads the Secrets and the cloud and writes the result into status.
func (r *ServiceWatchReconciler) sync(ctx context.Context, watch *swv1.ServiceWatch, trigger string) (ctrl.Result, error) {
	key := client.ObjectKeyFromObject(watch)
	if work := requestedWork(watch); work != "" {
		if err := r.announce(ctx, watch, work); err != nil {
			return ctrl.Result{}, err
		}
	}
	before := watch.DeepCopy()

	ctx, cancel := context.WithTimeout(ctx, r.Options.SyncTimeout)
	defer cancel()
	mgmt := r.admitManagement(r.managementAccess(ctx, watch))
	alerts := r.admitAlerts(watch, r.alertAccess(ctx, watch))
	results := r.readCloud(ctx, watch, mgmt, alerts)

	applyResults(&watch.Status, watch, results, r.Options.StatusSizeLimit)
	watch.Status.ObservedGeneration = watch.Generation
	watch.Status.LastHandledRequestedAt = requestedAt(watch)
	if reachedCloud(watch, mgmt, alerts) {
		watch.Status.LastSyncTime = &metav1.Time{Time: r.now().Truncate(time.Second)}
	}
	if err := r.finish(ctx, before, watch); err != nil {
		return ctrl.Result{}, err
	}
	r.record(key, watch)

	delay := r.scheduleNext(key, watch, trigger, results)
	log.FromContext(ctx).V(1).Info("synced", "nextSyncIn", delay.Round(time.Second).String())
	return ctrl.Result{RequeueAfter: delay}, nil
}

// scheduleNext remembers when the watch is next due after a sync with these
// results, and returns the wait.
func (r *ServiceWatchReconciler) scheduleNext(key types.NamespacedName, watch *swv1.ServiceWatch, trigger string, results cloudResults) time.Duration {
	failures := 0
	failed, transient, retryAfter := assess(results)
	if failed {
		prev, _ := r.schedules.get(key)
		failures = prev.failures + 1
	}
	delay := nextDelay(interval(watch), failures, transient, retryAfter)
	r.schedules.set(key, watchSchedule{trigger: trigger, nextSync: r.now().Add(delay), failures: failures})
	return delay
}

// reachedCloud tells whether this sync got as far as calling the cloud;
// lastSyncTime records only such attempts.
func reachedCloud(watch *swv1.ServiceWatch, mgmt managementAccess, alerts alertAccess) bool {
	return mgmt.failure == nil || (len(watch.Spec.AlertIDs) > 0 && alerts.failure == nil)
}

// assess sums up a sync's results for the schedule.
func assess(res cloudResults) (failed, transient bool, retryAfter time.Duration) {
	consider := func(f *failure) {
		if f == nil {
			return
		}
		failed = true
		transient = transient || !isStalledReason(f.reason)
		retryAfter = max(retryAfter, f.retryAfter)
	}
	consider(res.pipes.failure)
	consider(res.endpoints.failure)
	consider(res.alertsFailure)
	for _, a := range res.alerts {
		consider(a.failure)
	}
	return failed, transient, retryAfter
}

// announce marks the watch Reconciling before slow cloud calls, so that
// `kubectl get` and kstatus show the new generation is being worked on.
func (r *ServiceWatchReconciler) announce(ctx context.Context, watch *swv1.ServiceWatch, work string) error {
	before := watch.DeepCopy()
	markReconciling(&watch.Status, watch.Generation, work)
	return r.patchStatus(ctx, before, watch)
}

// finish writes the status and emits events for what changed.
func (r *ServiceWatchReconciler) finish(ctx context.Context, before, watch *swv1.ServiceWatch) error {
	if err := r.patchStatus(ctx, before, watch); err != nil {
		return err
	}
	r.emitEvents(ctx, before, watch)
	return nil
}

// patchStatus sends a merge patch of the status subresource with only what
// changed, so an unchanged cloud costs at most a patch of lastSyncTime and a
// concurrent writer of other fields is never overwritten.
func (r *ServiceWatchReconciler) patchStatus(ctx context.Context, before, watch *swv1.ServiceWatch) error {
	if equality.Semantic.DeepEqual(before.Status, watch.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, watch, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("patching status: %w", err)
	}
	return nil
}

// record updates the metrics after a sync. Each part's result is the reason
// its condition now shows, so metrics and status cannot disagree.
func (r *ServiceWatchReconciler) record(key types.NamespacedName, watch *swv1.ServiceWatch) {
	parts := map[string]string{
		partPipes:     swv1.ConditionPipesSynced,
		partEndpoints: swv1.ConditionReversePrivateEndpointsSynced,
	}
	if len(watch.Spec.AlertIDs) > 0 {
		parts[partAlerts] = swv1.ConditionAlertsSynced
	}
	for part, condType := range parts {
		if c := apimeta.FindStatusCondition(watch.Status.Conditions, condType); c != nil {
			r.Metrics.recordSync(part, c.Reason)
		}
	}
	r.Metrics.recordItems(key, partPipes, watch.Status.Summary.Pipes)
	r.Metrics.recordItems(key, partEndpoints, watch.Status.Summary.ReversePrivateEndpoints)
	r.Metrics.recordItems(key, partAlerts, watch.Status.Summary.Alerts)
}
