package controller

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/accountcontroller"
	"github.com/servicewatch/servicewatch/internal/controller/credentials"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/pacing"
)

// NewTestReconciler is a reconciler outside any manager, whose background
// reads run until ctx ends, for tests that drive its steps one by one.
func NewTestReconciler(ctx context.Context, c client.Client, reader client.Reader, cloud Cloud, budgets Budgets, syncMetrics *metrics.Sync) *ServiceWatchReconciler {
	r := &ServiceWatchReconciler{Client: c, APIReader: reader, Cloud: cloud, Budgets: budgets, Metrics: syncMetrics}
	r.defaults()
	r.credentials.Secrets = readerVersions{reader}
	go func() { _ = r.fetches.Start(ctx) }()
	return r
}

// StartSync runs what a reconcile of a due watch runs, and returns how long
// it was told to wait (0 when the sync started).
func (r *ServiceWatchReconciler) StartSync(ctx context.Context, watch *swv1.ServiceWatch) time.Duration {
	return r.start(ctx, r.newScope(ctx, watch)).RequeueAfter
}

// WriteInterruptedSync writes what a sync of watch whose read was cut short
// writes when its read ends, and returns what the reconcile returns.
func (r *ServiceWatchReconciler) WriteInterruptedSync(ctx context.Context, watch *swv1.ServiceWatch) ctrl.Result {
	s := r.newScope(ctx, watch)
	s.allowed.Every = watch.Spec.SyncInterval()
	s.ended(nil, time.Time{}, time.Time{})
	return r.write(ctx, watch, s.p, s)
}

// TestSecretWatch is a credentials.Watch outside any manager, for tests.
type TestSecretWatch struct {
	w *credentials.Watch
	// Changed receives the Secrets it told of.
	Changed <-chan types.NamespacedName
}

// StartSecretWatch starts a credentials.Watch of namespaces (all when empty) whose
// watches reference the Secrets referenced says, until ctx ends.
func StartSecretWatch(ctx context.Context, cfg *rest.Config, namespaces []string, referenced func(types.NamespacedName) bool) (*TestSecretWatch, error) {
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	events := make(chan ctrlevent.GenericEvent)
	changed := make(chan types.NamespacedName, 1000)
	w := credentials.New(md, namespaces, func(_ context.Context, k types.NamespacedName) bool { return referenced(k) }, events)
	go func() { _ = w.Start(ctx) }()
	go func() {
		for {
			select {
			case e := <-events:
				changed <- client.ObjectKeyFromObject(e.Object)
			case <-ctx.Done():
				return
			}
		}
	}()
	return &TestSecretWatch{w: w, Changed: changed}, nil
}

// Kept is what it keeps: the versions of the referenced Secrets it saw.
func (t *TestSecretWatch) Kept() map[types.NamespacedName]string {
	return t.w.Kept()
}

// Version is the version a reconcile reads.
func (t *TestSecretWatch) Version(ctx context.Context, key types.NamespacedName) string {
	return t.w.Version(ctx, key)
}

// Suspend runs what a reconcile of a suspended watch runs.
func (r *ServiceWatchReconciler) Suspend(ctx context.Context, watch *swv1.ServiceWatch) error {
	return r.suspend(ctx, watch)
}

// BudgetedInterval notes what watch asks of its budgets, as the start of its
// sync does, and returns the interval the budgets allow it.
func (r *ServiceWatchReconciler) BudgetedInterval(ctx context.Context, watch *swv1.ServiceWatch) time.Duration {
	s := r.newScope(ctx, watch)
	s.management, s.alerts = r.accessOf(ctx, watch, s.secretVersions)
	return r.demandEvery(s.p, s)
}

// admitAt is what the budgets admit of in's calls for work at level, the
// scope keyed by its watch as newScope keys it.
func (r *ServiceWatchReconciler) admitAt(in *syncScope, level pacing.Level) admission {
	in.p.Key, in.level = client.ObjectKeyFromObject(in.watch), level
	return r.admission(in)
}

// demandEvery notes what in asks of its budgets as the watch p, and returns
// the interval they allow it.
func (r *ServiceWatchReconciler) demandEvery(p paced, in *syncScope) time.Duration {
	in.p = p
	_, _ = r.noteDemand(context.Background(), in)
	return in.allowed.Every
}

// endedScope is a sync of the parts that ended at endedAt with results.
func endedScope(results []partResult, reachedCloud bool, endedAt time.Time, every time.Duration) *syncScope {
	return &syncScope{parts: syncParts(), results: results, outcome: assess(results), reachedCloud: reachedCloud, endedAt: endedAt, allowed: pacing.Allowance{Every: every}}
}

// readerVersions reads Secrets' versions from the API server, for a
// reconciler that runs without a manager and so without a Secret watch.
type readerVersions struct{ reader client.Reader }

func (v readerVersions) Version(ctx context.Context, secret types.NamespacedName) string {
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := v.reader.Get(ctx, secret, meta); err != nil {
		return ""
	}
	return meta.ResourceVersion
}

// applyResults is applyResultsAt without following the items' states: the
// tests of lists, conditions and truncation that predate since.
func applyResults(watch *swv1.ServiceWatch, parts []part, results []partResult, sizeLimit int) {
	applyResultsAt(watch, parts, results, sizeLimit, time.Time{})
}

// UseAccounts serves accounts to a reconciler built already (NewTestReconciler).
func (r *ServiceWatchReconciler) UseAccounts(a *accountcontroller.Accounts) {
	r.Accounts, r.credentials.Accounts = a, a
}
