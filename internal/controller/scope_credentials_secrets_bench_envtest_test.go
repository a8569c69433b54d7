package controller_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/servicewatch/servicewatch/internal/controller"
)

// BenchmarkUnrelatedSecrets measures what Secrets that no ServiceWatch
// references cost the manager (issue 17: Helm keeps every release as a
// Secret), side by side in one run: before, the metadata informer the
// manager ran until then (every Secret of the cluster cached, stripped to its
// identity by the transform it had); after, credentials.Watch, which lists them a
// page at a time and keeps only the referenced ones. retained-B is the live
// heap once the list is done; peak-B the most the heap grew while listing;
// both are for all the Secrets, and per Secret in B/secret. The Secrets
// (1 KiB of data each, as Helm's are larger) are created once, in a
// namespace of their own; SECRETS sets how many (default 100,000).
//
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s go test -run='^$' -bench=UnrelatedSecrets -benchtime=1x ./internal/controller/
func BenchmarkUnrelatedSecrets(b *testing.B) {
	if testing.Short() {
		b.Skip("needs a control plane (envtest)")
	}
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("SECRETS")); err == nil {
		n = v
	}
	ctx := context.Background()
	ns := "bench-unrelated-secrets"
	createSecrets(ctx, b, ns, n)
	// The last Secret listed, in name order: once it is known, the list is
	// done.
	last := types.NamespacedName{Namespace: ns, Name: "zz-referenced"}
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: last.Name}}); err != nil {
		b.Fatal(err)
	}

	b.Run(fmt.Sprintf("before-informer/secrets=%d", n), func(b *testing.B) {
		for b.Loop() {
			measureSecretMemory(b, n, func(ctx context.Context) {
				c, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme, DefaultTransform: identityOnly})
				if err != nil {
					b.Fatal(err)
				}
				meta := &metav1.PartialObjectMetadata{}
				meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
				if _, err := c.GetInformer(ctx, meta); err != nil {
					b.Fatal(err)
				}
				go func() { _ = c.Start(ctx) }()
				if !c.WaitForCacheSync(ctx) {
					b.Fatal("the informer never synced")
				}
			})
		}
	})
	b.Run(fmt.Sprintf("after-secretWatch/secrets=%d", n), func(b *testing.B) {
		for b.Loop() {
			measureSecretMemory(b, n, func(ctx context.Context) {
				sw, err := controller.StartSecretWatch(ctx, env.Config, nil, func(k types.NamespacedName) bool { return k == last })
				if err != nil {
					b.Fatal(err)
				}
				for sw.Kept()[last] == "" {
					time.Sleep(10 * time.Millisecond)
				}
			})
		}
	})
}

// identityOnly is the transform the manager's cache applied to Secrets'
// metadata before credentials.Watch: name, namespace, UID, version and deletion
// time.
func identityOnly(obj any) (any, error) {
	if meta, ok := obj.(*metav1.PartialObjectMetadata); ok {
		return &metav1.PartialObjectMetadata{TypeMeta: meta.TypeMeta, ObjectMeta: metav1.ObjectMeta{
			Name: meta.Name, Namespace: meta.Namespace, UID: meta.UID, ResourceVersion: meta.ResourceVersion,
			DeletionTimestamp: meta.DeletionTimestamp,
		}}, nil
	}
	return obj, nil
}

// measureSecretMemory runs start, which must return once what it watches
// is listed, and reports the heap it grew by at most meanwhile and kept
// after; what start began runs until the measure ends.
func measureSecretMemory(b *testing.B, n int, start func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base := liveHeap()
	var peak atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(sample)
			if v := int64(sample[0].Value.Uint64()); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	})
	start(ctx)
	close(stop)
	wg.Wait()
	retained := liveHeap() - base
	b.ReportMetric(float64(retained), "retained-B")
	b.ReportMetric(float64(peak.Load()-base), "peak-B")
	b.ReportMetric(float64(retained)/float64(n), "B/secret")
}

func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// createSecrets makes sure namespace holds n Secrets of 1 KiB that nothing
// references, created 16 at a time.
func createSecrets(ctx context.Context, b *testing.B, namespace string, n int) {
	b.Helper()
	err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	if err = client.IgnoreAlreadyExists(err); err != nil {
		b.Fatal(err)
	}
	data := map[string][]byte{"release": make([]byte, 1024)}
	next := atomic.Int64{}
	var wg sync.WaitGroup
	var failed atomic.Value
	for range 16 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("sh.helm.release.v1.app-%06d.v1", i),
					Labels: map[string]string{"owner": "helm", "name": fmt.Sprintf("app-%06d", i), "status": "deployed", "version": "1"}}, Data: data}
				if err := client.IgnoreAlreadyExists(env.Client.Create(ctx, s)); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
}
