package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/bound"
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
