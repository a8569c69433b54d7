package storagemigration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// errConversionNotNone is a CRD whose versions may differ in schema: an
// entry's field set cannot be assumed true of another version.
var errConversionNotNone = errors.New("the CRD converts between versions with a webhook, so a managed-fields entry cannot be moved to another version")

// Renamed is what CleanManagedFields did to one CRD's objects.
type Renamed struct {
	// Objects is how many objects were read.
	Objects int
	// Stale is how many of them had managed fields of versions the CRD no
	// longer serves; Renamed how many of those were written.
	Stale, Renamed int
}

// CleanManagedFields moves the managed fields entries of every object of
// the CRD that name a version it no longer serves to its storage version
// (staleentries.go says why renaming, not dropping). It writes the
// main resource, not status, so it needs rights the manager does not have:
// `kubectl servicewatch migrate` runs it with the user's. Safe to run
// twice: an object without such entries is not written.
func (m *Migrator) CleanManagedFields(ctx context.Context, name string) (Renamed, error) {
	var r Renamed
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := m.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		return r, fmt.Errorf("reading CRD %s: %w", name, classifyRights(err))
	}
	p, err := planFor(crd)
	if err != nil {
		return r, err
	}
	if c := crd.Spec.Conversion; c != nil && c.Strategy != apiextensionsv1.NoneConverter {
		return r, fmt.Errorf("%s: %w", name, errConversionNotNone)
	}
	log := m.Log.WithValues("crd", name)
	var failures []error
	err = m.eachObject(ctx, crd, p, func(obj *metav1.PartialObjectMetadata) error {
		r.Objects++
		if countStaleEntries(obj.ManagedFields, p.group, p.isServed) == 0 {
			return nil
		}
		r.Stale++
		if err := m.renameStale(ctx, obj, p); err != nil {
			log.Error(err, "Could not move the managed fields of an object off versions no longer served", "object", client.ObjectKeyFromObject(obj).String())
			failures = append(failures, fmt.Errorf("%s: %w", client.ObjectKeyFromObject(obj), err))
			return nil
		}
		r.Renamed++
		return nil
	})
	if err != nil {
		return r, err
	}
	logRenamed(log, r, p)
	if len(failures) > 0 {
		return r, fmt.Errorf("%d of %d objects keep managed fields of versions no longer served: %w", len(failures), r.Stale, errors.Join(failures[:min(len(failures), maxFailuresShown)]...))
	}
	return r, nil
}

func logRenamed(log logr.Logger, r Renamed, p plan) {
	if r.Stale == 0 {
		log.Info("Managed fields: no object names a version that is no longer served; nothing written", "objects", r.Objects, "servedVersions", p.served)
		return
	}
	log.Info("Managed fields of versions no longer served moved to the storage version", "objects", r.Objects, "stale", r.Stale, "renamed", r.Renamed, "storageVersion", p.storage)
}

// renameStale writes obj's managed fields with its stale entries renamed,
// on the condition that obj did not change since it was read (its
// resourceVersion is in the patch); on a conflict it reads obj again and
// computes anew. An object deleted meanwhile needs nothing.
func (m *Migrator) renameStale(ctx context.Context, obj *metav1.PartialObjectMetadata, p plan) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		entries, _, err := renameStaleEntries(obj.ManagedFields, p.group, p.isServed, p.storage)
		if err != nil {
			return err
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": obj.ResourceVersion, "managedFields": entries}})
		if err != nil {
			return fmt.Errorf("writing the patch: %w", err)
		}
		err = m.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(FieldOwner))
		if apierrors.IsConflict(err) {
			if getErr := m.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); getErr != nil {
				return getErr
			}
		}
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// reportStale counts the objects of the CRD whose managed fields name a
// version it lists but no longer serves, and says so in the metrics and,
// when there are any, in the log: the release that removes that version
// would break applies to them, and the manager, which writes status only,
// cannot clean them (CleanManagedFields can, with the user's rights). A
// CRD that serves every version it lists has none worth counting, and
// costs no list.
func (m *Migrator) reportStale(ctx context.Context, name string) {
	log := m.Log.WithValues("crd", name)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := m.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		log.Error(err, "Could not read the CRD to count the objects with managed fields of versions no longer served")
		return
	}
	p, err := planFor(crd)
	if err != nil {
		log.Error(err, "Could not count the objects with managed fields of versions no longer served")
		return
	}
	if len(p.unserved) == 0 {
		m.Metrics.setStale(name, 0)
		return
	}
	stale := 0
	err = m.eachObject(ctx, crd, p, func(obj *metav1.PartialObjectMetadata) error {
		if countStaleEntries(obj.ManagedFields, p.group, p.isServed) > 0 {
			stale++
		}
		return nil
	})
	if err != nil {
		log.Error(err, "Could not count the objects with managed fields of versions no longer served")
		return
	}
	m.Metrics.setStale(name, stale)
	if stale > 0 {
		log.Info("Objects keep managed fields of versions no longer served: applies to them will fail once those versions are removed from the CRD; run `kubectl servicewatch migrate` before", "objects", stale, "unservedVersions", p.unserved)
	}
}
