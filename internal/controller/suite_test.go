package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/accountcontroller"
	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/egress"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/tenancy"
	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// The suite runs one real manager, with the real cloud client, against a real
// API server; each test gets its own namespace, fake cloud and credentials,
// so tests run in parallel without seeing each other.
var (
	env        *testenv.Env
	managerLog = &testenv.LockedBuffer{}
	// managerCache reads the manager's cache, as the reconciler does.
	managerCache client.Reader
	// stateMetrics and syncMetrics are what the manager's metrics endpoint
	// would serve: the state metrics and the sync and request metrics.
	stateMetrics = metrics.NewState(true)
	syncMetrics  = prometheus.NewRegistry()
)

// suiteNamespaceStatusBudget is the manager's --namespace-status-budget:
// room for two statuses at the status size limit and half of a third.
const suiteNamespaceStatusBudget = 5 * controller.DefaultStatusSizeLimit / 2

// secretMarker starts every credential the tests create, so that a sweep of
// everything the operator wrote can prove none of them leaked.
const secretMarker = "s3cr3t-"

// TestMain runs the suite against one control plane and one manager; under
// -short only the rules' unit tests run (the envtest tests skip).
func TestMain(m *testing.M) {
	// The API server audits Secret reads, so that tests can count what it
	// saw rather than what the manager's own reader says it asked.
	os.Exit(testenv.MainWith(m, testenv.Options{AuditSecretReads: true}, func(e *testenv.Env) (int, error) { return runSuite(m, e) }))
}

func runSuite(m *testing.M, e *testenv.Env) (int, error) {
	env = e

	// Every level, debug included: no level may print a credential.
	ctrl.SetLogger(zap.New(zap.WriteTo(managerLog), zap.UseDevMode(true), zap.Level(zapcore.Level(-10))))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := env.ManagerOptions()
	// The watches a test's own manager syncs (ownManagerLabel) are left to it.
	leaveOwn, err := labels.Parse("!" + ownManagerLabel)
	if err != nil {
		return 0, err
	}
	opts.Cache = controller.CacheOptions(controller.Scope{WatchSelector: leaveOwn})
	mgr, err := ctrl.NewManager(env.Config, opts)
	if err != nil {
		return 0, err
	}
	recorded, err := metrics.NewSync(syncMetrics)
	if err != nil {
		return 0, err
	}
	// The fake clouds listen on 127.0.0.1; any other host is refused
	// (TestURLNotAllowed), the fallback URLs too.
	allowed, err := egress.ParseURLAllowList([]string{"127.0.0.1"})
	if err != nil {
		return 0, err
	}
	// A host without an alert list route is tried again after
	// suiteAlertListRetry, so that a test sees it gain one.
	r := testenv.Reconciler(mgr, recorded, "", controller.Options{MaxConcurrentReconciles: 8, AllowedAPIURLs: allowed,
		ManagementAPIURL: notAllowedFallbackURL, AlertAPIURL: notAllowedFallbackURL, AlertListRetry: suiteAlertListRetry})
	r.StateMetrics = stateMetrics
	// Every Secret the reconciler reads is counted, by namespace and name.
	r.APIReader = suiteSecretReads.wrap(r.APIReader)
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}); err != nil {
		return 0, err
	}
	budgets, ok := r.Budgets.(accountcontroller.Budgets)
	if !ok {
		return 0, fmt.Errorf("the suite's budgets %T cannot show an account's budget", r.Budgets)
	}
	r.Accounts = &accountcontroller.Accounts{Client: mgr.GetClient(), Namespace: operatorNamespace, Budgets: budgets}
	if err := r.Accounts.SetupWithManager(mgr); err != nil {
		return 0, err
	}
	// Room for two statuses at the limit in one namespace, so that
	// TestNamespaceStatusBudget cuts its later watches; no test but that one
	// has more than one large status in a namespace. No bound in all: the
	// suite's namespaces add up.
	r.StatusBudget = tenancy.NewStatusLedger(tenancy.StatusBudget{Bytes: suiteNamespaceStatusBudget, Setting: "--namespace-status-budget"}, tenancy.StatusBudget{})
	if err := r.SetupWithManager(mgr); err != nil {
		return 0, err
	}
	managerCache = mgr.GetCache()
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(ctx) }()

	code := m.Run()
	cancel()
	if err := <-mgrDone; err != nil {
		return 0, fmt.Errorf("manager: %w", err)
	}
	if strings.Contains(managerLog.String(), secretMarker) {
		return 0, fmt.Errorf("FAIL: a credential appeared in the manager's log:\n%s", linesWith(managerLog.String(), secretMarker))
	}
	return code, nil
}

func linesWith(text, needle string) string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		if strings.Contains(line, needle) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// fixture is one test's world: a namespace, a fake cloud with credentials of
// its own, and the Secrets that hold them.
type fixture struct {
	t         *testing.T
	ctx       context.Context
	ns        string
	fake      *fakecloud.Server
	keyID     string
	keySecret string
	token     string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newNamedFixture(t, t.Name())
}

// newNamedFixture is a fixture whose namespace and credentials derive from
// name, for tests that need several.
func newNamedFixture(t *testing.T, name string) *fixture {
	t.Helper()
	testenv.SkipShort(t)
	name = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, strings.ToLower(name))
	if len(name) > 50 {
		name = name[len(name)-50:] // the end tells fixtures of one test apart
	}
	f := &fixture{
		t: t, ctx: context.Background(), ns: strings.Trim(name, "-"),
		keyID:     "key-" + name,
		keySecret: secretMarker + "management-" + name,
		token:     secretMarker + "token-" + name,
	}
	data := fakecloud.DefaultData()
	data.ManagementKey = fakecloud.ManagementKey{KeyID: f.keyID, KeySecret: f.keySecret}
	data.AlertToken = f.token
	f.fake = fakecloud.Start(data)
	t.Cleanup(f.fake.Close)
	f.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}})
	return f
}

func (f *fixture) create(obj client.Object) {
	f.t.Helper()
	if err := env.Client.Create(f.ctx, obj); err != nil {
		f.t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func (f *fixture) managementSecret() *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "warehouse-api-key", Namespace: f.ns},
		StringData: map[string]string{"keyId": f.keyID, "keySecret": f.keySecret},
	}
}

func (f *fixture) alertSecret() *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "alerts-token", Namespace: f.ns},
		StringData: map[string]string{"token": f.token},
	}
}

func (f *fixture) createSecrets() {
	f.create(f.managementSecret())
	f.create(f.alertSecret())
}

// newWatch returns a watch of the fake's default service and alerts.
func (f *fixture) newWatch(name string, alertIDs ...string) *swv1.ServiceWatch {
	w := &swv1.ServiceWatch{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec: swv1.ServiceWatchSpec{
			OrganizationID: fakecloud.DefaultOrganizationID,
			ServiceID:      fakecloud.DefaultServiceID,
			AlertIDs:       alertIDs,
			ManagementAPI: swv1.ManagementAPISpec{
				URL:       f.fake.URL,
				SecretRef: swv1.SecretReference{Name: "warehouse-api-key"},
			},
		},
	}
	if len(alertIDs) > 0 {
		w.Spec.AlertAPI = &swv1.AlertAPISpec{URL: f.fake.URL, SecretRef: swv1.SecretReference{Name: "alerts-token"}}
	}
	return w
}

// faultyWatch sets fault on op of the fixture's fake cloud, then creates
// the Secrets and a watch of the fake's default service and alerts.
func (f *fixture) faultyWatch(name string, op fakecloud.Operation, fault fakecloud.Fault, alertIDs ...string) {
	f.t.Helper()
	f.fake.SetFault(op, fault)
	f.createSecrets()
	f.create(f.newWatch(name, alertIDs...))
}

// readyWatch creates the Secrets and a watch of the fake's default service
// and alerts, and waits until it is Ready.
func (f *fixture) readyWatch(name string, alertIDs ...string) *swv1.ServiceWatch {
	f.t.Helper()
	f.createSecrets()
	f.create(f.newWatch(name, alertIDs...))
	return f.waitFor(name, 20*time.Second, "Ready", isReady)
}

func (f *fixture) get(name string) *swv1.ServiceWatch {
	f.t.Helper()
	return testenv.Get[swv1.ServiceWatch](f.ctx, f.t, env.Client, client.ObjectKey{Namespace: f.ns, Name: name})
}

// waitFor polls the watch until check passes, and fails the test with the
// last status when it does not within timeout.
func (f *fixture) waitFor(name string, timeout time.Duration, what string, check func(*swv1.ServiceWatch) bool) *swv1.ServiceWatch {
	f.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		w := f.get(name)
		if check(w) {
			return w
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%s: not reached within %v; status:\n%s", what, timeout, indentedJSON(w.Status))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// conditionIs returns a check that the condition has the status and reason.
func conditionIs(condType string, status metav1.ConditionStatus, reason string) func(*swv1.ServiceWatch) bool {
	return func(w *swv1.ServiceWatch) bool { return w.ConditionIs(condType, status, reason) }
}

func isReady(w *swv1.ServiceWatch) bool { return w.IsReady() }

// requestSync sets the requested-at annotation, as `kubectl annotate` would.
func (f *fixture) requestSync(name, value string) {
	f.t.Helper()
	w := f.get(name)
	patch := client.MergeFrom(w.DeepCopy())
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[swv1.RequestedAtAnnotation] = value
	if err := env.Client.Patch(f.ctx, w, patch); err != nil {
		f.t.Fatalf("annotating %s: %v", name, err)
	}
}

func (f *fixture) requestSyncAndWait(name string) *swv1.ServiceWatch {
	f.t.Helper()
	value := time.Now().Format(time.RFC3339Nano)
	f.requestSync(name, value)
	return f.waitFor(name, 20*time.Second, "requested sync "+value, func(w *swv1.ServiceWatch) bool {
		return w.Status.LastHandledRequestedAt == value
	})
}

// events returns the notes of the events about the named watch.
func (f *fixture) events(name string) []eventsv1.Event {
	f.t.Helper()
	var list eventsv1.EventList
	if err := env.Client.List(f.ctx, &list, client.InNamespace(f.ns)); err != nil {
		f.t.Fatalf("listing events: %v", err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// waitForEvent waits until an event with the reason is recorded about the
// watch (events are sent asynchronously), and returns all its events.
func (f *fixture) waitForEvent(name, reason string) []eventsv1.Event {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		events := f.events(name)
		for _, e := range events {
			if e.Reason == reason {
				return events
			}
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("no %s event about %s within 10s: %s", reason, name, mustJSON(f.t, events))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// callTimes are the times of the fake cloud's calls of op, in order.
func (f *fixture) callTimes(op fakecloud.Operation) []time.Time {
	var times []time.Time
	for _, c := range f.fake.CallLog() {
		if c.Operation == op {
			times = append(times, c.Time)
		}
	}
	return times
}

// rawStatus reads the watch as kubectl does, as plain JSON.
func (f *fixture) rawStatus(name string) map[string]any {
	f.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(swv1.GroupVersion.WithKind("ServiceWatch"))
	if err := env.Client.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, u); err != nil {
		f.t.Fatal(err)
	}
	status, _ := u.Object["status"].(map[string]any)
	return status
}

// indentedJSON renders v for a failure message.
func indentedJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprintf("%#v (not JSON: %v)", v, err)
	}
	return string(b)
}

// asObject is v as a decoded JSON object, or the test fails.
func asObject(t *testing.T, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%T is not a JSON object: %v", v, v)
	}
	return m
}

// asList is v as a decoded JSON array, or the test fails.
func asList(t *testing.T, v any) []any {
	t.Helper()
	l, ok := v.([]any)
	if !ok {
		t.Fatalf("%T is not a JSON array: %v", v, v)
	}
	return l
}
