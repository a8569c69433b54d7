package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/egress"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// ownManagerLabel marks the watches a test's own manager syncs (see
// startOwnManager); the suite's manager leaves them alone.
const ownManagerLabel = "test.servicewatch.io/manager"

// Three namespaces draw on one key at one host (each holds it in a Secret
// of its own): one with 10 watches, one with 2, one with 1, at 30 s, of a
// key whose budget (scaled down to 6 calls per 10 s, which the fake cloud
// enforces too) they overrun together 1.6 times. Each namespace gets a fair
// share: the small ones fit theirs and keep their interval, and their new
// watches are not queued behind the big one's calls; the big namespace
// alone is stretched, and its watches say by how much and why. Before, the
// key's one factor stretched every watch, and the small namespaces' new
// watches waited behind the big one's 20 queued calls (about 37 s).
func TestNamespacesShareOneKeyFairly(t *testing.T) {
	t.Parallel()
	big := newNamedFixture(t, t.Name()+"-big")
	mid := newNamedFixture(t, t.Name()+"-mid")
	one := newNamedFixture(t, t.Name()+"-one")
	for _, f := range []*fixture{mid, one} { // one key, one host
		f.fake, f.keyID, f.keySecret, f.token = big.fake, big.keyID, big.keySecret, big.token
	}
	_, budgets := scaledDownKey(big.fake, 6, 13)
	reg := startOwnManager(t, "keyshare", budgets)
	budget := ratebudget.Fingerprint(cloudapi.APIManagement, big.fake.URL, cloudapi.NewBasicCredentials(big.keyID, big.keySecret))

	watch := func(f *fixture, name string, service int) {
		w := f.newWatch(name)
		w.Labels = map[string]string{ownManagerLabel: "keyshare"}
		w.Spec.ServiceID = distinctService(service)
		w.Spec.Interval = metav1.Duration{Duration: 30 * time.Second}
		f.create(w)
	}
	big.createSecrets()
	for i := range 10 {
		watch(big, fmt.Sprintf("w%02d", i), i)
	}
	// The big namespace's watches have all asked for their calls (2 per 30 s
	// each, 1.22 times the key's 6 per 11 s) before the others come.
	waitForGauge(t, reg, "servicewatch_budget_demand_ratio", map[string]string{"budget": budget}, func(v float64) bool { return v > 1.2 })
	mid.createSecrets()
	one.createSecrets()
	created := time.Now()
	watch(mid, "w0", 10)
	watch(mid, "w1", 11)
	watch(one, "w0", 12)

	// Their first syncs take their turns with the big namespace's 20 queued
	// calls: 1 turn (2 calls, 3.7 s) for the one watch, up to 4 for the
	// second of two; behind all 20 they took 37 s.
	for _, w := range []struct {
		f      *fixture
		name   string
		within time.Duration
	}{{one, "w0", 15 * time.Second}, {mid, "w0", 20 * time.Second}, {mid, "w1", 30 * time.Second}} {
		got := w.f.waitFor(w.name, time.Until(created.Add(w.within)), "Ready within "+w.within.String()+" of creation, while another namespace's 20 calls wait for the key", isReady)
		t.Logf("%s/%s Ready after %v", w.f.ns, w.name, time.Since(created).Round(time.Millisecond))
		if c := got.Condition(swv1.ConditionIntervalMet); c != nil {
			t.Errorf("%s/%s is stretched though its namespace fits its share of the key: %s", w.f.ns, w.name, c.Message)
		}
	}

	// The big namespace is stretched, and says why: its share and its need.
	var stretched *swv1.ServiceWatch
	deadline := time.Now().Add(30 * time.Second)
	for stretched == nil && time.Now().Before(deadline) {
		for i := range 10 {
			if w := big.get(fmt.Sprintf("w%02d", i)); w.ConditionIs(swv1.ConditionIntervalMet, metav1.ConditionFalse, swv1.ReasonBudgetExceeded) {
				stretched = w
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if stretched == nil {
		t.Fatal("no watch of the big namespace says IntervalMet False within 30 s")
	}
	if msg := stretched.Condition(swv1.ConditionIntervalMet).Message; !strings.Contains(msg, "this namespace's share of the key is") || !strings.Contains(msg, "its watches need 40.0") {
		t.Errorf("IntervalMet message %q does not give the namespace's share and its need (40 calls/min)", msg)
	}

	// The metrics say each namespace's share and need.
	shares := map[string]float64{}
	for _, f := range []*fixture{big, mid, one} {
		share := gauge(t, reg, "servicewatch_budget_namespace_share", map[string]string{"budget": budget, "namespace": f.ns})
		need := gauge(t, reg, "servicewatch_budget_namespace_need", map[string]string{"budget": budget, "namespace": f.ns})
		shares[f.ns] = share
		if f == big && !(share < need) || f != big && share != need {
			t.Errorf("namespace %s: share %.3f of need %.3f calls/s", f.ns, share, need)
		}
	}
	if sum := shares[big.ns] + shares[mid.ns] + shares[one.ns]; sum > 6.0/11+1e-9 {
		t.Errorf("the shares add up to %.3f calls/s, more than the key's 6 per 11 s", sum)
	}
	for _, c := range big.fake.CallLog() {
		if c.Status == 429 {
			t.Errorf("the cloud answered 429 at %v: the namespaces together went over the key's budget", c.Time)
		}
	}
}

// startOwnManager runs a manager of its own for the test, syncing only the
// watches with the label ownManagerLabel=name, with budgets, until the test ends;
// it returns the registry of its metrics. setup, if any, completes the
// reconciler before it starts.
func startOwnManager(t *testing.T, name string, budgets *ratebudget.Store, setup ...func(ctrl.Manager, *controller.ServiceWatchReconciler)) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	syncMetrics, err := metrics.NewSync(reg)
	if err != nil {
		t.Fatal(err)
	}
	opts := env.ManagerOptions()
	opts.Cache = controller.CacheOptions(controller.Scope{WatchSelector: labels.SelectorFromSet(labels.Set{ownManagerLabel: name})})
	opts.Controller = config.Controller{SkipNameValidation: ptr.To(true)} // the suite's manager runs one of the same name
	mgr, err := ctrl.NewManager(env.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	allowed, err := egress.ParseURLAllowList([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	r := testenv.Reconciler(mgr, syncMetrics, "", controller.Options{AllowedAPIURLs: allowed, ManagementAPIURL: notAllowedFallbackURL, AlertAPIURL: notAllowedFallbackURL})
	r.Budgets = budgets
	r.Cloud = cloudapi.New(cloudapi.Options{Timeout: 5 * time.Second, Observer: syncMetrics, Budgets: budgets})
	for _, s := range setup {
		s(mgr, r)
	}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the test's manager: %v", err)
		}
	})
	return reg
}

// gauge is the value of the gauge name whose labels include want; the test
// fails when there is none.
func gauge(t *testing.T, reg prometheus.Gatherer, name string, want map[string]string) float64 {
	t.Helper()
	v, ok := findGauge(reg, name, want)
	if !ok {
		t.Fatalf("no %s with labels %v", name, want)
	}
	return v
}

// waitForGauge waits up to 20 s until the gauge name with labels want
// passes check.
func waitForGauge(t *testing.T, reg prometheus.Gatherer, name string, want map[string]string, check func(float64) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if v, ok := findGauge(reg, name, want); ok && check(v) {
			return
		}
		if time.Now().After(deadline) {
			v, _ := findGauge(reg, name, want)
			t.Fatalf("%s%v is %v after 20 s", name, want, v)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func findGauge(reg prometheus.Gatherer, name string, want map[string]string) (float64, bool) {
	families, err := reg.Gather()
	if err != nil {
		return 0, false
	}
	for _, fam := range families {
		if fam.GetName() != name {
			continue
		}
		for _, m := range fam.GetMetric() {
			if hasLabels(m, want) {
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(want)
}
