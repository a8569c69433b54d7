package controller_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// A watch deleted while its read ran has no status left to write: the write
// that follows the read forgets it quietly, with no error in the log (an
// uninstall deletes every watch, some of them mid-sync) and no retry.
func TestAWatchDeletedDuringItsSyncIsForgottenQuietly(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.createSecrets()
	// The watch as the reconcile read it, then deleted while its read ran.
	f.create(f.newWatch("deleted-mid-sync"))
	w := f.get("deleted-mid-sync")
	if err := env.Client.Delete(f.ctx, w); err != nil {
		t.Fatal(err)
	}
	syncMetrics, err := metrics.NewSync(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	cloud := &refusingCloud{}
	r := controller.NewTestReconciler(t.Context(), env.Client, env.Client, cloud, cloud, syncMetrics)
	logs := &testenv.LockedBuffer{}
	ctx := log.IntoContext(f.ctx, zap.New(zap.WriteTo(logs), zap.UseDevMode(true)))

	if got := r.WriteInterruptedSync(ctx, w); got != (ctrl.Result{}) {
		t.Errorf("the write of a deleted watch returned %+v, want nothing scheduled", got)
	}
	if text := logs.String(); strings.Contains(text, "ERROR") {
		t.Errorf("the write of a deleted watch logged an error:\n%s", text)
	}
}
