package storagemigration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/servicewatch/servicewatch/internal/managedfields"
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
// (package managedfields says why renaming, not dropping). It writes the
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
	served := func(v string) bool { return slices.Contains(p.served, v) }
	log := m.Log.WithValues("crd", name)
	gvk := schema.GroupVersionKind{Group: p.group, Version: p.storage, Kind: crd.Spec.Names.Kind}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(crd.Spec.Names.ListKind))
	var failures []error
	for {
		if err := m.Client.List(ctx, list, client.Limit(m.pageSize()), client.Continue(list.GetContinue())); err != nil {
			return r, fmt.Errorf("listing %s: %w", crd.Spec.Names.Plural, classifyRights(err))
		}
		for i := range list.Items {
			obj := &list.Items[i]
			obj.SetGroupVersionKind(gvk)
			r.Objects++
			if managedfields.CountStale(obj.ManagedFields, p.group, served) == 0 {
				continue
			}
			r.Stale++
			if err := m.renameStale(ctx, obj, p, served); err != nil {
				log.Error(err, "Could not move the managed fields of an object off versions no longer served", "object", client.ObjectKeyFromObject(obj).String())
				failures = append(failures, fmt.Errorf("%s: %w", client.ObjectKeyFromObject(obj), err))
				continue
			}
			r.Renamed++
		}
		if list.GetContinue() == "" {
			break
		}
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
func (m *Migrator) renameStale(ctx context.Context, obj *metav1.PartialObjectMetadata, p plan, served func(string) bool) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		entries, _, err := managedfields.Rename(obj.ManagedFields, p.group, served, p.storage)
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
