package storagemigration

import (
	"errors"
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// errNoStorageVersion is a CRD without a storage version, which the API
// server itself would refuse: nothing can be migrated to it.
var errNoStorageVersion = errors.New("no version of the CRD is its storage version")

// plan is what one CRD needs: the version its objects are written in, the
// versions it serves, and whether any object may still be stored in another.
type plan struct {
	group   string
	storage string
	served  []string
	// unserved are the versions the CRD lists but no longer serves: the
	// managed fields of its objects may still name them.
	unserved []string
	// rewrite: status.storedVersions names a version besides the storage
	// version, so some objects may still be encoded in it.
	rewrite bool
	// subresourceStatus: writes go to /status, the one subresource the
	// manager may write, and that no admission webhook of a user's guards.
	subresourceStatus bool
}

// planFor reads what crd needs.
func planFor(crd *apiextensionsv1.CustomResourceDefinition) (plan, error) {
	p := plan{group: crd.Spec.Group}
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			p.storage = v.Name
			p.subresourceStatus = v.Subresources != nil && v.Subresources.Status != nil
		}
		if v.Served {
			p.served = append(p.served, v.Name)
		} else {
			p.unserved = append(p.unserved, v.Name)
		}
	}
	if p.storage == "" {
		return p, fmt.Errorf("%s: %w", crd.Name, errNoStorageVersion)
	}
	p.rewrite = !slices.Equal(crd.Status.StoredVersions, []string{p.storage})
	return p, nil
}

// isServed says whether the CRD serves version.
func (p plan) isServed(version string) bool { return slices.Contains(p.served, version) }
