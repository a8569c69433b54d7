package storagemigration

import (
	"errors"
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	// rewrite: status.storedVersions names a version besides the storage
	// version, so some objects may still be encoded in it.
	rewrite bool
	// cleanFields: the CRD lists a version it no longer serves, so objects
	// may carry managed fields of it, which break server-side apply.
	cleanFields bool
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
			p.cleanFields = true
		}
	}
	if p.storage == "" {
		return p, fmt.Errorf("%s: %w", crd.Name, errNoStorageVersion)
	}
	p.rewrite = !slices.Equal(crd.Status.StoredVersions, []string{p.storage})
	return p, nil
}

// pending says whether the CRD needs any write at all.
func (p plan) pending() bool { return p.rewrite || p.cleanFields }

// servedFields keeps the managed-fields entries of served versions. An
// entry of a version the API server no longer serves cannot be converted,
// and server-side apply then fails on the object
// (kubernetes/kubernetes#111937); cluster-api drops them the same way. When
// nothing would be left, one entry of the first manager owning only
// metadata.name stays, so that the next apply does not take the object for
// one without managed fields and give an "Update" manager co-ownership of
// everything. removed is false when every entry stays.
func (p plan) servedFields(entries []metav1.ManagedFieldsEntry, now metav1.Time) (kept []metav1.ManagedFieldsEntry, removed bool) {
	for _, e := range entries {
		if p.servesAPIVersion(e.APIVersion) {
			kept = append(kept, e)
		} else {
			removed = true
		}
	}
	if removed && len(kept) == 0 {
		kept = append(kept, metav1.ManagedFieldsEntry{
			Manager:    entries[0].Manager,
			Operation:  entries[0].Operation,
			APIVersion: p.group + "/" + p.storage,
			Time:       &now,
			FieldsType: "FieldsV1",
			FieldsV1:   &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:name":{}}}`)},
		})
	}
	return kept, removed
}

func (p plan) servesAPIVersion(apiVersion string) bool {
	for _, v := range p.served {
		if apiVersion == p.group+"/"+v {
			return true
		}
	}
	return false
}
