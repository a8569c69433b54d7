package controller

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
)

// referencedBy tells whether a ServiceWatch in the cache references the
// Secret, through the index of watches by Secret: what secretwatch.Watch
// keeps the versions of.
func referencedBy(c client.Reader) func(context.Context, types.NamespacedName) bool {
	return func(ctx context.Context, secret types.NamespacedName) bool {
		var watches swv1.ServiceWatchList
		if err := c.List(ctx, &watches, client.InNamespace(secret.Namespace),
			client.MatchingFields{secretNamesIndex: secret.Name}, client.Limit(1), client.UnsafeDisableDeepCopy); err != nil {
			return true // keep it: better a version too many than a change missed
		}
		return len(watches.Items) > 0
	}
}
