package storagemigration_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The objects here are written as the previous release's users and
// manager wrote them, in v1alpha1: a user creates a watch (an Update of
// v1alpha1 in its managed fields), the manager writes its status (an
// Update of v1alpha1's /status).
const (
	userManager     = "kubectl-create"
	previousManager = "servicewatch-manager"
)

func newNamespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{}
	ns.GenerateName = "migration-"
	if err := env.Client.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// serviceIDOf is the i-th watch's service, one per watch, so that the fake
// cloud's log tells the watches' calls apart.
func serviceIDOf(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

const organizationID = "7f0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d"

// previousWatch is watch i of ns in v1alpha1, with the spec a user wrote.
func previousWatch(ns string, i int, apiURL string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1alpha1",
		"kind":       "ServiceWatch",
		"metadata":   map[string]any{"name": fmt.Sprintf("w-%03d", i), "namespace": ns, "labels": map[string]any{"team": "a"}},
		"spec": map[string]any{
			"organizationId": organizationID,
			"serviceId":      serviceIDOf(i),
			"interval":       "30s",
			"managementApi":  map[string]any{"url": apiURL, "secretRef": map[string]any{"name": "warehouse-api-key"}},
		},
	}}
	return u
}

// previousStatus is what the previous manager wrote after a sync at
// lastSync that found one running pipe.
func previousStatus(lastSync time.Time) map[string]any {
	at := lastSync.UTC().Format(time.RFC3339)
	return map[string]any{
		"observedGeneration": int64(1),
		"lastSyncTime":       at,
		"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "Synced", "message": "Synced 1 pipe",
			"lastTransitionTime": at, "observedGeneration": int64(1),
		}},
		"pipes":   []any{map[string]any{"id": "pipe-1", "name": "orders", "state": "Running"}},
		"summary": map[string]any{"pipes": int64(1), "pipesByState": map[string]any{"Running": int64(1)}, "reversePrivateEndpoints": int64(0), "alerts": int64(0)},
	}
}

// createPrevious creates u and then writes status as the previous manager
// did, both in v1alpha1.
func createPrevious(t testing.TB, u *unstructured.Unstructured, status map[string]any) {
	t.Helper()
	ctx := t.Context()
	if err := env.Client.Create(ctx, u, client.FieldOwner(userManager)); err != nil {
		t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	if status == nil {
		return
	}
	u.Object["status"] = status
	if err := env.Client.Status().Update(ctx, u, client.FieldOwner(previousManager)); err != nil {
		t.Fatalf("writing the status of %s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

// createPreviousWatches creates n watches in ns with a status each.
func createPreviousWatches(t testing.TB, ns string, n int) []string {
	t.Helper()
	names := make([]string, n)
	for i := range n {
		u := previousWatch(ns, i, "http://127.0.0.1:1")
		createPrevious(t, u, previousStatus(time.Now().Add(-time.Minute)))
		names[i] = u.GetName()
	}
	return names
}

// upgradedWatches is n watches created and synced under the previous
// release, then today's CRDs installed over them, nothing migrated yet: the
// start of most tests here.
func upgradedWatches(t *testing.T, n int) (ns string, names []string) {
	t.Helper()
	installPrevious(t)
	ns = newNamespace(t)
	names = createPreviousWatches(t, ns, n)
	installToday(t)
	return ns, names
}

// createPreviousAccounts creates n ClusterCloudAccounts (cluster-scoped).
func createPreviousAccounts(t testing.TB, n int) []string {
	t.Helper()
	names := make([]string, n)
	for i := range n {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": group + "/v1alpha1",
			"kind":       "ClusterCloudAccount",
			"metadata":   map[string]any{"name": fmt.Sprintf("account-%d", i)},
			"spec": map[string]any{
				"managementApi": map[string]any{"url": "https://api.example.com", "secretRef": map[string]any{"name": "key"}},
				"conditions":    []any{map[string]any{"namespaces": []any{"team-a"}}},
			},
		}}
		createPrevious(t, u, map[string]any{"observedGeneration": int64(1), "conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "Ready", "message": "ok",
			"lastTransitionTime": metav1.Now().UTC().Format(time.RFC3339),
		}}})
		names[i] = u.GetName()
	}
	return names
}
