package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
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
// secretWatch.
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

// stripForCache drops what the reconciler never reads before an object
// enters the cache: managed fields.
func stripForCache(obj any) (any, error) {
	if o, ok := obj.(metav1.Object); ok {
		o.SetManagedFields(nil)
	}
	return obj, nil
}
