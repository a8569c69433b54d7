package controller_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/accountcontroller"
	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// A cluster where only the ServiceWatch CRD was applied, on a control plane
// of its own: the manager runs
// (before, its account watches never synced and it exited after the cache
// sync timeout, scaled down here to 10 s, then crash-looped), its watches
// with their own Secrets become Ready, a watch that refers to an account
// says the CRD is not installed, and servicewatch_accounts_enabled is 0.
// Once the CRD and an account are applied, the same manager, not
// restarted, serves the account: the watch becomes Ready and the metric 1.
func TestAccountsCRDIsOptional(t *testing.T) {
	testenv.SkipShort(t)
	crds := filepath.Join(testenv.RepoRoot(), "config", "crd", "bases")
	onlyWatches := t.TempDir()
	raw, err := os.ReadFile(filepath.Join(crds, "cloud.servicewatch.io_servicewatches.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(onlyWatches, "servicewatches.yaml"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	bare, err := testenv.StartWith(testenv.Options{CRDs: onlyWatches, StartTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := bare.Stop(); err != nil {
			t.Errorf("stopping envtest: %v", err)
		}
	})
	ctx := t.Context()
	const operatorNS, tenantNS = "servicewatch-system", "team-a"
	create := func(obj client.Object) {
		t.Helper()
		if err := bare.Client.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
	for _, ns := range []string{operatorNS, tenantNS} {
		create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	data := fakecloud.DefaultData()
	data.ManagementKey = fakecloud.ManagementKey{KeyID: "key", KeySecret: "secret"}
	fake := fakecloud.Start(data)
	t.Cleanup(fake.Close)
	key := map[string]string{"keyId": "key", "keySecret": "secret"}
	create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "own-key", Namespace: tenantNS}, StringData: key})

	reg := prometheus.NewRegistry()
	syncMetrics, err := metrics.NewSync(reg)
	if err != nil {
		t.Fatal(err)
	}
	opts := bare.ManagerOptions()
	opts.Cache = controller.CacheOptions(controller.Scope{})
	const cacheSyncTimeout = 10 * time.Second
	opts.Controller = config.Controller{CacheSyncTimeout: cacheSyncTimeout, SkipNameValidation: ptr.To(true)}
	mgr, err := ctrl.NewManager(bare.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := testenv.Reconciler(mgr, syncMetrics, "", controller.Options{})
	budgets, ok := r.Budgets.(accountcontroller.Budgets)
	if !ok {
		t.Fatalf("budgets %T", r.Budgets)
	}
	r.Accounts = &accountcontroller.Accounts{Client: mgr.GetClient(), Namespace: operatorNS, Budgets: budgets, Served: syncMetrics.SetAccountsEnabled}
	if err := r.Accounts.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	mgrCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{}) // closed when the manager stopped, with mgrErr
	var mgrErr error
	started := time.Now()
	go func() {
		defer close(done)
		mgrErr = mgr.Start(mgrCtx)
	}()
	t.Cleanup(func() {
		stop()
		<-done
	})

	watch := func(name string, spec swv1.ManagementAPISpec) {
		create(&swv1.ServiceWatch{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenantNS}, Spec: swv1.ServiceWatchSpec{
			OrganizationID: fakecloud.DefaultOrganizationID, ServiceID: fakecloud.DefaultServiceID, ManagementAPI: spec}})
	}
	waitFor := func(name, what string, within time.Duration, check func(*swv1.ServiceWatch) bool) *swv1.ServiceWatch {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			select {
			case <-done:
				t.Fatalf("waiting for %s %s: the manager stopped: %v", name, what, mgrErr)
			default:
			}
			w := testenv.Get[swv1.ServiceWatch](ctx, t, bare.Client, client.ObjectKey{Namespace: tenantNS, Name: name})
			if check(w) {
				return w
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s is not %s within %v: %+v", name, what, within, w.Status.Conditions)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	watch("own", swv1.ManagementAPISpec{URL: fake.URL, SecretRef: swv1.SecretReference{Name: "own-key"}})
	watch("shared", swv1.ManagementAPISpec{AccountRef: &swv1.AccountRef{Name: "org-main"}})
	waitFor("own", "Ready", 30*time.Second, isReady)
	refused := waitFor("shared", "Stalled AccountNotFound", 30*time.Second, func(w *swv1.ServiceWatch) bool {
		return w.ConditionIs(swv1.ConditionStalled, metav1.ConditionTrue, swv1.ReasonAccountNotFound)
	})
	if msg := refused.Condition(swv1.ConditionStalled).Message; !strings.Contains(msg, "ClusterCloudAccount CRD is not installed") {
		t.Errorf("the watch of an account says %q: want that the CRD is not installed", msg)
	}
	if v := gauge(t, reg, "servicewatch_accounts_enabled", nil); v != 0 {
		t.Errorf("servicewatch_accounts_enabled = %v without the CRD, want 0", v)
	}
	// Past the cache sync timeout, the manager still runs and syncs. The
	// timeout is controller-runtime's, on the real clock: the test waits
	// until it has passed (what the waits above took counts), and fails as
	// soon as the manager stops.
	select {
	case <-done:
		t.Fatalf("the manager stopped within the cache sync timeout: %v", mgrErr)
	case <-time.After(time.Until(started.Add(cacheSyncTimeout + 2*time.Second))):
	}
	own := testenv.Get[swv1.ServiceWatch](ctx, t, bare.Client, client.ObjectKey{Namespace: tenantNS, Name: "own"})
	patch := client.MergeFrom(own.DeepCopy())
	own.Annotations = map[string]string{swv1.RequestedAtAnnotation: "again"}
	if err := bare.Client.Patch(ctx, own, patch); err != nil {
		t.Fatal(err)
	}
	waitFor("own", "synced again", 30*time.Second, func(w *swv1.ServiceWatch) bool {
		return w.Status.LastHandledRequestedAt == "again" && w.IsReady()
	})

	if _, err := envtest.InstallCRDs(bare.Config, envtest.CRDInstallOptions{Paths: []string{filepath.Join(crds, "cloud.servicewatch.io_clustercloudaccounts.yaml")}}); err != nil {
		t.Fatal(err)
	}
	create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "main-key", Namespace: operatorNS}, StringData: key})
	create(&swv1.ClusterCloudAccount{ObjectMeta: metav1.ObjectMeta{Name: "org-main"}, Spec: swv1.ClusterCloudAccountSpec{
		ManagementAPI: swv1.AccountAPISpec{URL: fake.URL, SecretRef: swv1.SecretReference{Name: "main-key"}},
		Conditions:    []swv1.AccountCondition{{Namespaces: []string{tenantNS}}},
	}})
	waitFor("shared", "Ready through the account", 60*time.Second, isReady)
	if v := gauge(t, reg, "servicewatch_accounts_enabled", nil); v != 1 {
		t.Errorf("servicewatch_accounts_enabled = %v once the CRD is installed, want 1", v)
	}
	// The account controller runs too: it counts the account's watches.
	deadline := time.Now().Add(30 * time.Second)
	for {
		a := testenv.Get[swv1.ClusterCloudAccount](ctx, t, bare.Client, client.ObjectKey{Name: "org-main"})
		if a.Status.Watches == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the account's status counts %d watches, want 1: %+v", a.Status.Watches, a.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
