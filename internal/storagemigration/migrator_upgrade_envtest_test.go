package storagemigration_test

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/storagemigration"
	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// upgradeWatches is how many live watches the upgrade carries.
const upgradeWatches = 200

// watchInterval is the watches' spec.interval, the shortest the CRD
// allows, so that every watch is due within the test.
const watchInterval = 30 * time.Second

// The upgrade as a user meets it: the previous release's CRDs with 200
// watches that its manager synced (each with a status and a lastSyncTime
// spread over the last interval), then today's CRDs, and today's manager
// (the storage migration and the controller) against the fake cloud. Every
// object is then stored in v1beta1, reads the same in both versions, none
// is lost, and every watch is Ready again after a sync at its own time:
// the upgrade makes no watch call the cloud before lastSyncTime + interval.
func TestUpgradeWithLiveWatches(t *testing.T) {
	testenv.SkipShort(t)
	installPrevious(t)
	ns := newNamespace(t)
	fake := startCloud(t, upgradeWatches)
	if err := env.Client.Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "warehouse-api-key", Namespace: ns},
		StringData: map[string]string{"keyId": fakecloud.DefaultKeyID, "keySecret": fakecloud.DefaultKeySecret},
	}); err != nil {
		t.Fatal(err)
	}
	names := make([]string, upgradeWatches)
	lastSync := map[string]time.Time{} // by service ID
	specs := map[string]any{}          // by name
	for i := range upgradeWatches {
		// Synced by the previous manager 10 to 29 s ago (its status keeps
		// whole seconds): due 1 to 20 s from now, some before today's
		// manager starts, some after.
		synced := time.Now().Add(-watchInterval + time.Duration(1+i%20)*time.Second).Truncate(time.Second)
		u := previousWatch(ns, i, fake.URL)
		createPrevious(t, u, previousStatus(synced))
		names[i], lastSync[serviceIDOf(i)], specs[u.GetName()] = u.GetName(), synced, u.Object["spec"]
	}
	checkStored(t, "servicewatches", ns, names[:1], "v1alpha1")

	installToday(t)
	stop := startManager(t)
	poll(t, time.Minute, "storedVersions == [v1beta1]", func() bool {
		return slices.Equal(storedVersions(t, watchesCRD), []string{"v1beta1"}) &&
			slices.Equal(storedVersions(t, accountsCRD), []string{"v1beta1"})
	})
	checkStored(t, "servicewatches", ns, names, "v1beta1")

	// Every watch syncs again, at its time, and is Ready.
	poll(t, 2*time.Minute, "every watch synced again by today's manager", func() bool {
		for i, name := range names {
			u := object(t, "v1beta1", "ServiceWatch", ns, name)
			last, _, _ := unstructured.NestedString(u.Object, "status", "lastSyncTime")
			at, err := time.Parse(time.RFC3339, last)
			if err != nil || !at.After(lastSync[serviceIDOf(i)]) || !readyAndCurrent(u) {
				return false
			}
		}
		return true
	})
	stop()

	for _, call := range fake.CallLog() {
		due := lastSync[call.ServiceID].Add(watchInterval)
		if call.Time.Before(due) {
			t.Errorf("service %s was called at %s, %v before its watch was due (lastSyncTime %s + %v)",
				call.ServiceID, call.Time.Format(time.RFC3339Nano), due.Sub(call.Time), lastSync[call.ServiceID].Format(time.RFC3339), watchInterval)
		}
	}
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(group + "/v1beta1")
	list.SetKind("ServiceWatchList")
	if err := env.Client.List(t.Context(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != upgradeWatches {
		t.Errorf("%d watches after the upgrade, want %d", len(list.Items), upgradeWatches)
	}
	for _, name := range names {
		alpha, beta := object(t, "v1alpha1", "ServiceWatch", ns, name), object(t, "v1beta1", "ServiceWatch", ns, name)
		if !reflect.DeepEqual(userView(alpha), userView(beta)) {
			t.Errorf("%s reads differently in v1alpha1 and v1beta1:\n%v\n%v", name, userView(alpha), userView(beta))
		}
		if !reflect.DeepEqual(beta.Object["spec"], specs[name]) {
			t.Errorf("%s: spec changed in the upgrade:\n got %v\nwant %v", name, beta.Object["spec"], specs[name])
		}
	}
}

// startCloud starts a fake cloud with n services, one per watch.
func startCloud(t *testing.T, n int) *fakecloud.Server {
	t.Helper()
	data := fakecloud.DefaultData()
	services := data.Organizations[fakecloud.DefaultOrganizationID]
	for i := range n {
		services[serviceIDOf(i)] = services[fakecloud.DefaultServiceID]
	}
	fake := fakecloud.Start(data)
	t.Cleanup(fake.Close)
	return fake
}

// startManager runs today's manager as cmd/manager wires it: the storage
// migration and the ServiceWatch controller, on the project's scheme. The
// returned func stops it and waits until it has.
func startManager(t *testing.T) func() {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, env.ManagerOptions())
	if err != nil {
		t.Fatal(err)
	}
	syncMetrics, err := metrics.NewSync(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if err := testenv.Reconciler(mgr, syncMetrics, "", controller.DefaultOptions()).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	migrationMetrics, err := storagemigration.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	log := &testenv.LockedBuffer{}
	migrator, err := storagemigration.New(env.Config, ourCRDs, migrationMetrics, testLogger(t, log))
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.Add(migrator); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// readyAndCurrent: Ready is True for the watch's generation.
func readyAndCurrent(u *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		m, ok := c.(map[string]any)
		if ok && m["type"] == "Ready" {
			return m["status"] == "True" && m["observedGeneration"] == u.GetGeneration()
		}
	}
	return false
}
