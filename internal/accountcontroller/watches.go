package accountcontroller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

// accountIndex indexes ServiceWatches by the account they refer to, so that
// an account's change finds its watches without listing them all.
const accountIndex = ".spec.managementApi.accountRef.name"

// IndexWatches adds the index of watches by account to the manager's cache.
func IndexWatches(ctx context.Context, indexer client.FieldIndexer) error {
	err := indexer.IndexField(ctx, &swv1.ServiceWatch{}, accountIndex, func(obj client.Object) []string {
		if name := accountOf(obj); name != "" {
			return []string{name}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("indexing ServiceWatches by ClusterCloudAccount: %w", err)
	}
	return nil
}

// accountOf is the name of the account a watch refers to, "" for none.
func accountOf(obj client.Object) string {
	watch, ok := obj.(*swv1.ServiceWatch)
	if !ok || watch.Spec.ManagementAPI.AccountRef == nil {
		return ""
	}
	return watch.Spec.ManagementAPI.AccountRef.Name
}

// WatchesOfAccount are the watches that refer to the account: an account
// created, changed or deleted decides their grants anew.
func (a *Accounts) WatchesOfAccount(ctx context.Context, account client.Object) []reconcile.Request {
	var watches swv1.ServiceWatchList
	if err := a.Client.List(ctx, &watches, client.MatchingFields{accountIndex: account.GetName()}); err != nil {
		log.FromContext(ctx).Error(err, "listing the ServiceWatches of a ClusterCloudAccount", "account", account.GetName())
		return nil
	}
	return requestsOf(watches.Items, func(*swv1.ServiceWatch) bool { return true })
}

// WatchesOfSecret are the watches that use the Secret through an account,
// wherever they are: the watches of every account whose management key it
// holds, and those that read alerts with it of every account whose alert
// token it holds. A change to the Secret syncs them, so a rotated key is
// used at once. None for a Secret outside the operator's namespace. a may
// be nil.
func (a *Accounts) WatchesOfSecret(ctx context.Context, secret client.Object) []reconcile.Request {
	if !a.Enabled() || secret.GetNamespace() != a.Namespace {
		return nil
	}
	var accounts swv1.ClusterCloudAccountList
	if err := a.Client.List(ctx, &accounts); err != nil {
		log.FromContext(ctx).Error(err, "listing the ClusterCloudAccounts of a Secret", "secret", secret.GetName())
		return nil
	}
	var requests []reconcile.Request
	for i := range accounts.Items {
		spec := &accounts.Items[i].Spec
		key := spec.ManagementAPI.SecretRef.Name == secret.GetName()
		token := spec.AlertAPI != nil && spec.AlertAPI.SecretRef.Name == secret.GetName()
		if !key && !token {
			continue
		}
		var watches swv1.ServiceWatchList
		if err := a.Client.List(ctx, &watches, client.MatchingFields{accountIndex: accounts.Items[i].Name}); err != nil {
			log.FromContext(ctx).Error(err, "listing the ServiceWatches of a ClusterCloudAccount", "account", accounts.Items[i].Name)
			continue
		}
		requests = append(requests, requestsOf(watches.Items, func(w *swv1.ServiceWatch) bool { return key || ReadsAlertToken(w) })...)
	}
	return requests
}

// WatchesInNamespace are the watches of the namespace that refer to an
// account: its labels may select it or not.
func (a *Accounts) WatchesInNamespace(ctx context.Context, ns client.Object) []reconcile.Request {
	var watches swv1.ServiceWatchList
	if err := a.Client.List(ctx, &watches, client.InNamespace(ns.GetName())); err != nil {
		log.FromContext(ctx).Error(err, "listing the ServiceWatches of a namespace", "namespace", ns.GetName())
		return nil
	}
	return requestsOf(watches.Items, func(w *swv1.ServiceWatch) bool { return accountOf(w) != "" })
}

// AccountsInNamespace are the accounts the namespace's watches refer to:
// its labels may change how many of them are allowed.
func (a *Accounts) AccountsInNamespace(ctx context.Context, ns client.Object) []reconcile.Request {
	var watches swv1.ServiceWatchList
	if err := a.Client.List(ctx, &watches, client.InNamespace(ns.GetName())); err != nil {
		log.FromContext(ctx).Error(err, "listing the ServiceWatches of a namespace", "namespace", ns.GetName())
		return nil
	}
	seen := map[string]bool{}
	var requests []reconcile.Request
	for i := range watches.Items {
		if name := accountOf(&watches.Items[i]); name != "" && !seen[name] {
			seen[name] = true
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKey{Name: name}})
		}
	}
	return requests
}

// AccountOfWatch is the account a watch refers to, for the account's counts.
func AccountOfWatch(_ context.Context, watch client.Object) []reconcile.Request {
	if name := accountOf(watch); name != "" {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: name}}}
	}
	return nil
}

func requestsOf(watches []swv1.ServiceWatch, keep func(*swv1.ServiceWatch) bool) []reconcile.Request {
	requests := make([]reconcile.Request, 0, len(watches))
	for i := range watches {
		if keep(&watches[i]) {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&watches[i])})
		}
	}
	return requests
}

// Wire lets the ServiceWatch controller b hear of namespaces: a change to
// one's labels decides the grants of its watches anew (WatchAccounts adds
// the accounts, once their CRD is served). A manager that serves no
// accounts watches no namespaces (a namespaced install may not list them).
func (a *Accounts) Wire(ctx context.Context, mgr ctrl.Manager, b *builder.Builder) (*builder.Builder, error) {
	if !a.Enabled() {
		return b, nil
	}
	if err := IndexWatches(ctx, mgr.GetFieldIndexer()); err != nil {
		return nil, err
	}
	return b.Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(a.WatchesInNamespace),
		builder.WithPredicates(predicate.LabelChangedPredicate{})), nil
}
