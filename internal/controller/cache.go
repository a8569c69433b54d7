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
// ServiceWatches of the shard, and the metadata of Secrets, both only in the
// scope's namespaces, and Secrets stripped of everything but what the
// reconciler reads.
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
// enters the cache. Managed fields go from every object. Metadata-only
// objects, which in this manager are Secrets, keep only their identity and
// version: a Secret's annotations may hold the whole Secret (kubectl apply's
// last-applied-configuration), and its labels and owners are of no use here.
func stripForCache(obj any) (any, error) {
	if meta, ok := obj.(*metav1.PartialObjectMetadata); ok {
		return &metav1.PartialObjectMetadata{
			TypeMeta: meta.TypeMeta,
			ObjectMeta: metav1.ObjectMeta{
				Name: meta.Name, Namespace: meta.Namespace, UID: meta.UID, ResourceVersion: meta.ResourceVersion,
				DeletionTimestamp: meta.DeletionTimestamp,
			},
		}, nil
	}
	if o, ok := obj.(metav1.Object); ok {
		o.SetManagedFields(nil)
	}
	return obj, nil
}
