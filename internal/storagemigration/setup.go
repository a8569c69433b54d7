package storagemigration

import (
	"fmt"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RBAC of the migration: read the two CRDs, write their status (to trim
// storedVersions), nothing else of them. Their objects are listed and
// their /status patched under the rights the controllers hold already.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get,resourceNames=servicewatches.cloud.servicewatch.io;clustercloudaccounts.cloud.servicewatch.io
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions/status,verbs=patch,resourceNames=servicewatches.cloud.servicewatch.io;clustercloudaccounts.cloud.servicewatch.io

// New is the manager's migrator of the CRDs named crds, with a client of
// its own on cfg: direct (no cache of every object), and with its own rate
// limiter, so that a migration of ten thousand objects does not hold back
// the controllers' requests.
func New(cfg *rest.Config, crds []string, metrics *Metrics, log logr.Logger) (*Migrator, error) {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(rest.CopyConfig(cfg), client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating the storage migration's client: %w", err)
	}
	return &Migrator{Client: c, CRDs: crds, Metrics: metrics, Log: log}, nil
}
