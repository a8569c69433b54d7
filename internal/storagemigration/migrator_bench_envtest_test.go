package storagemigration_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/servicewatch/servicewatch/internal/storagemigration"
	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// BenchmarkMigrationLiveHeap measures the live heap while the watches of
// a cluster are rewritten: by the migrator, which lists 500 at a time, and
// by a migrator without paging, which lists them all in one call (what
// lists without Limit, or a cache of every object, hold). The heap is
// measured after a GC every 100 objects; the peak above the heap before
// the run is reported in MiB.
func BenchmarkMigrationLiveHeap(b *testing.B) {
	testenv.SkipShort(b)
	for _, n := range []int{1000, 3000} {
		b.Run(fmt.Sprintf("watches=%d", n), func(b *testing.B) {
			installPrevious(b)
			ns := newNamespace(b)
			createPreviousWatches(b, ns, n)
			installToday(b)
			var paged, allAtOnce float64
			for b.Loop() {
				paged = max(paged, peakLiveHeap(func(sample func(done int)) error {
					resetStoredVersions(b)
					m, _, _ := newMigrator(b)
					m.PageSize = storagemigration.DefaultPageSize
					m.ProgressEvery = n + 1
					m.SetAfterObject(func(_ string, done int) { sample(done) })
					_, err := m.Migrate(b.Context(), watchesCRD)
					return err
				}, b))
				allAtOnce = max(allAtOnce, peakLiveHeap(func(sample func(done int)) error {
					return rewriteAllAtOnce(b.Context(), sample)
				}, b))
			}
			b.ReportMetric(paged, "MiB-paged")
			b.ReportMetric(allAtOnce, "MiB-all-at-once")
		})
	}
}

// peakLiveHeap runs run, which calls sample after each object, and returns
// the largest live heap it saw above the heap before, in MiB.
func peakLiveHeap(run func(sample func(done int)) error, b *testing.B) float64 {
	var stats runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&stats)
	base, peak := stats.HeapAlloc, uint64(0)
	err := run(func(done int) {
		if done%100 != 0 {
			return
		}
		runtime.GC()
		runtime.ReadMemStats(&stats)
		if stats.HeapAlloc > base {
			peak = max(peak, stats.HeapAlloc-base)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	return float64(peak) / (1 << 20)
}

// rewriteAllAtOnce is the migration without paging: one list of every
// watch's metadata, then the same write of each.
func rewriteAllAtOnce(ctx context.Context, sample func(done int)) error {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("PartialObjectMetadataList"))
	list.APIVersion, list.Kind = group+"/v1beta1", "ServiceWatchList"
	if err := crds.List(ctx, list); err != nil {
		return err
	}
	for i := range list.Items {
		obj := &list.Items[i]
		obj.APIVersion, obj.Kind = group+"/v1beta1", "ServiceWatch"
		if err := crds.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte("{}"))); err != nil {
			return err
		}
		sample(i + 1)
	}
	return nil
}

// resetStoredVersions lists v1alpha1 in storedVersions again, so that the
// migrator runs (its objects are already v1beta1: the writes cost what a
// skipped write costs, the lists what they always cost).
func resetStoredVersions(b *testing.B) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := crds.Get(b.Context(), client.ObjectKey{Name: watchesCRD}, crd); err != nil {
		b.Fatal(err)
	}
	before := crd.DeepCopy()
	crd.Status.StoredVersions = []string{"v1alpha1", "v1beta1"}
	if err := crds.Status().Patch(b.Context(), crd, client.MergeFrom(before)); err != nil {
		b.Fatal(err)
	}
}
