package accountcontroller

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// +kubebuilder:rbac:groups=cloud.servicewatch.io,resources=clustercloudaccounts,verbs=get;list;watch
// +kubebuilder:rbac:groups=cloud.servicewatch.io,resources=clustercloudaccounts/status,verbs=get;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// maxNamespacesShown bounds status.namespaces; status.namespaceCount counts
// them all.
const maxNamespacesShown = 100

// learnedBuffer is how many accounts' new keys may wait for the status
// reconciler; more are shown at their next refresh.
const learnedBuffer = 64

// budgetRefresh is how often the status of an account in use is written
// again, for its key's budget, which changes without any event.
const budgetRefresh = time.Minute

// SetupWithManager registers the account status reconciler, once the
// ClusterCloudAccount CRD is served (at once when it is).
func (a *Accounts) SetupWithManager(mgr ctrl.Manager) error {
	learned := make(chan event.GenericEvent, learnedBuffer)
	a.mu.Lock()
	a.learned = learned
	a.mu.Unlock()
	return a.whenInstalled(mgr, func() error { return a.register(mgr, learned) })
}

// register builds the account status reconciler into mgr.
func (a *Accounts) register(mgr ctrl.Manager, learned chan event.GenericEvent) error {
	err := ctrl.NewControllerManagedBy(mgr).
		Named("clustercloudaccount").
		// Its own status writes change no generation: they never wake it.
		For(&swv1.ClusterCloudAccount{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		// Watches created, deleted or pointed elsewhere (status writes of
		// syncs do not change a generation).
		Watches(&swv1.ServiceWatch{}, handler.EnqueueRequestsFromMapFunc(AccountOfWatch),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(a.AccountsInNamespace),
			builder.WithPredicates(predicate.LabelChangedPredicate{})).
		// A key first used, or changed: its budget can be shown.
		WatchesRawSource(source.Channel(learned, &handler.EnqueueRequestForObject{})).
		Complete(a)
	if err != nil {
		return fmt.Errorf("setting up the ClusterCloudAccount controller: %w", err)
	}
	return nil
}

// Reconcile writes an account's status: whether its conditions are valid,
// who uses it, and its key's budget.
func (a *Accounts) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var account swv1.ClusterCloudAccount
	if err := a.Client.Get(ctx, req.NamespacedName, &account); err != nil {
		if apierrors.IsNotFound(err) {
			a.forget(req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	var watches swv1.ServiceWatchList
	if err := a.Client.List(ctx, &watches, client.MatchingFields{accountIndex: account.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the account's watches: %w", err)
	}
	before := account.DeepCopy()
	account.Status.ObservedGeneration = account.Generation
	setReady(&account)
	a.noteShares(&account)
	a.setUse(ctx, &account, watches.Items)
	account.Status.Budget = a.budgetOf(&account)
	if !equality.Semantic.DeepEqual(before.Status, account.Status) {
		if err := a.Client.Status().Patch(ctx, &account, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, fmt.Errorf("patching the account's status: %w", err)
		}
	}
	if len(watches.Items) == 0 {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{RequeueAfter: budgetRefresh}, nil
}

func setReady(account *swv1.ClusterCloudAccount) {
	c := metav1.Condition{Type: swv1.ConditionReady, Status: metav1.ConditionTrue, Reason: swv1.ReasonAccountValid,
		Message: fmt.Sprintf("%d conditions, all valid", len(account.Spec.Conditions)), ObservedGeneration: account.Generation}
	if err := ValidateAccount(account); err != nil {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, swv1.ReasonInvalidConditions, err.Error()+": that condition selects no namespace"
	}
	meta.SetStatusCondition(&account.Status.Conditions, c)
}

// setUse counts the watches that refer to the account by namespace, and
// how many of them its conditions allow.
func (a *Accounts) setUse(ctx context.Context, account *swv1.ClusterCloudAccount, watches []swv1.ServiceWatch) {
	byNamespace := map[string]*swv1.AccountNamespaceUse{}
	for i := range watches {
		w := &watches[i]
		use := byNamespace[w.Namespace]
		if use == nil {
			use = &swv1.AccountNamespaceUse{Name: w.Namespace}
			byNamespace[w.Namespace] = use
		}
		use.Watches++
		if subject, err := a.subjectOf(ctx, w); err == nil && DecideUse(account, subject) == nil {
			use.Allowed++
		}
	}
	names := make([]string, 0, len(byNamespace))
	for name := range byNamespace {
		names = append(names, name)
	}
	slices.Sort(names)
	account.Status.Watches, account.Status.NamespaceCount = int32(len(watches)), int32(len(names))
	account.Status.Namespaces = nil
	shares := SharePercents(account, slices.DeleteFunc(slices.Clone(names), func(ns string) bool { return byNamespace[ns].Allowed == 0 }))
	for _, name := range names[:min(len(names), maxNamespacesShown)] {
		use := byNamespace[name]
		use.Weight, use.SharePercent = NamespaceWeight(account, name), shares[name]
		account.Status.Namespaces = append(account.Status.Namespaces, *use)
	}
}

// budgetOf is the budget of the management key last used through the
// account, as the manager's store has it; nil before any watch used it.
func (a *Accounts) budgetOf(account *swv1.ClusterCloudAccount) *swv1.AccountBudget {
	key, ok := a.usedKey(account.Name)
	if !ok || a.Budgets == nil {
		return nil
	}
	allowance := a.Budgets.Allowance(cloudapi.APIManagement, ratebudget.BudgetID(cloudapi.APIManagement, key.url, key.digest))
	b := &swv1.AccountBudget{Allowance: strconv.FormatFloat(allowance, 'g', 4, 64), ReservedPercent: a.reservePercent(account)}
	if until := a.Budgets.HeldUntil(cloudapi.APIManagement, key.url, key.digest); !until.IsZero() {
		b.HeldUntil = &metav1.Time{Time: until.Truncate(time.Second)}
	}
	return b
}
