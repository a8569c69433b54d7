package sharding

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// shardLabel is the label whose value names a watch's shard, as the README
// tells users to set it.
const shardLabel = "sharding.servicewatch.io/shard"

// Leader election much faster than production's 15s/10s/2s, so that a
// takeover fits in a test; the ratios are production's.
const (
	leaseDuration = 4 * time.Second
	renewDeadline = 3 * time.Second
	retryPeriod   = 500 * time.Millisecond
)

// syncInterval is every watch's interval: long enough that no periodic sync
// falls within a test, so every call the fake cloud sees was a first sync,
// or a sync that should not have happened.
const syncInterval = 5 * time.Minute

// userAgentPrefix starts the User-Agent of each test manager's cloud client;
// the manager's name follows, so the fake cloud's call log says which
// manager made each call.
const userAgentPrefix = "servicewatch-test/"

// world is one test's namespace, fake cloud and credentials. Each watch
// reads a service of its own, so the fake cloud's calls for a service are the
// calls for one watch (watches of one service would share their reads).
type world struct {
	t    *testing.T
	ctx  context.Context
	ns   string
	fake *fakecloud.Server

	mu        sync.Mutex
	serviceOf map[string]string // watch name → service ID
	watchOf   map[string]string // service ID → watch name
}

const (
	keyID       = "key-sharding"
	keySecret   = "secret-sharding"
	secretName  = "warehouse-api-key"
	orgID       = fakecloud.DefaultOrganizationID
	serviceTmpl = "00000000-0000-4000-8000-%012d"
)

func newWorld(t *testing.T, ns string) *world {
	t.Helper()
	testenv.SkipShort(t)
	data := fakecloud.DefaultData()
	data.ManagementKey = fakecloud.ManagementKey{KeyID: keyID, KeySecret: keySecret}
	w := &world{
		t: t, ctx: context.Background(), ns: ns,
		fake:      fakecloud.Start(data),
		serviceOf: map[string]string{},
		watchOf:   map[string]string{},
	}
	t.Cleanup(w.fake.Close)
	w.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	w.create(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: ns},
		StringData: map[string]string{"keyId": keyID, "keySecret": keySecret},
	})
	return w
}

func (w *world) create(obj client.Object) {
	w.t.Helper()
	if err := env.Client.Create(w.ctx, obj); err != nil {
		w.t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// createWatch creates a watch of a new service of the fake cloud, labeled
// for shard (no label when shard is "").
func (w *world) createWatch(name, shard string) {
	w.t.Helper()
	service := w.newService(name)
	watch := &swv1.ServiceWatch{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: swv1.ServiceWatchSpec{
			OrganizationID: orgID,
			ServiceID:      service,
			Interval:       metav1.Duration{Duration: syncInterval},
			ManagementAPI: swv1.ManagementAPISpec{
				URL:       w.fake.URL,
				SecretRef: swv1.SecretReference{Name: secretName},
			},
		},
	}
	if shard != "" {
		watch.Labels = map[string]string{shardLabel: shard}
	}
	w.create(watch)
}

// createWatches creates count watches named prefix-0, prefix-1… for shard.
func (w *world) createWatches(prefix, shard string, count int) []string {
	w.t.Helper()
	names := make([]string, count)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", prefix, i)
		w.createWatch(names[i], shard)
	}
	return names
}

// newService adds a service with the default data's pipes and endpoints to
// the fake cloud, for the named watch only.
func (w *world) newService(watch string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	id := fmt.Sprintf(serviceTmpl, len(w.serviceOf)+1)
	w.serviceOf[watch] = id
	w.watchOf[id] = watch
	w.fake.SetService(orgID, id, fakecloud.DefaultData().Organizations[orgID][fakecloud.DefaultServiceID])
	return id
}

// callsByWatch is the fake cloud's calls received at or after since, by the
// watch whose service they read.
func (w *world) callsByWatch(since time.Time) map[string][]fakecloud.Call {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string][]fakecloud.Call{}
	for _, c := range w.fake.CallLog() {
		if c.Time.Before(since) {
			continue
		}
		name, ok := w.watchOf[c.ServiceID]
		if !ok {
			name = "<unknown service " + c.ServiceID + ">"
		}
		out[name] = append(out[name], c)
	}
	return out
}

func (w *world) get(name string) *swv1.ServiceWatch {
	w.t.Helper()
	return testenv.Get[swv1.ServiceWatch](w.ctx, w.t, env.Client, client.ObjectKey{Namespace: w.ns, Name: name})
}

// waitUntil polls the named watches until check passes for every one, and
// fails the test naming those it does not pass for within timeout.
func (w *world) waitUntil(what string, timeout time.Duration, check func(*swv1.ServiceWatch) bool, names ...string) {
	w.t.Helper()
	deadline := time.Now().Add(timeout)
	pending := slices.Clone(names)
	for {
		pending = slices.DeleteFunc(pending, func(name string) bool { return check(w.get(name)) })
		if len(pending) == 0 {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("%s: not reached within %v by %d watches: %v", what, timeout, len(pending), pending)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func isReady(watch *swv1.ServiceWatch) bool { return watch.IsReady() }

func (w *world) lease(name string) *coordinationv1.Lease {
	w.t.Helper()
	return testenv.Get[coordinationv1.Lease](w.ctx, w.t, env.Client, client.ObjectKey{Namespace: w.ns, Name: name})
}

// shardManager is one manager of a test, configured as cmd/manager
// configures it from --watch-namespaces, --watch-label-selector,
// --leader-elect and --leader-election-id.
type shardManager struct {
	t    *testing.T
	name string
	mgr  ctrl.Manager

	stopOnce sync.Once
	cancel   context.CancelFunc
	done     chan error
}

// startManager starts a manager named name (its cloud client's User-Agent
// carries the name) for the watches of w's namespace that selector matches,
// electing its leader with the lease leaseID. It stops at the end of the test.
func (w *world) startManager(name, selector, leaseID string) *shardManager {
	w.t.Helper()
	sel, err := labels.Parse(selector)
	if err != nil {
		w.t.Fatal(err)
	}
	opts := env.ManagerOptions()
	opts.Logger = ctrl.Log.WithName(name)
	opts.Cache = controller.CacheOptions(controller.Scope{Namespaces: []string{w.ns}, WatchSelector: sel})
	opts.LeaderElection, opts.LeaderElectionID, opts.LeaderElectionNamespace = true, leaseID, w.ns
	// Stopping a manager here simulates a crash: the lease stays held until
	// it expires, as when a pod is killed or its node is lost.
	opts.LeaderElectionReleaseOnCancel = false
	opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = ptr.To(leaseDuration), ptr.To(renewDeadline), ptr.To(retryPeriod)
	// One process holds several managers of the same controller, which a
	// real deployment never does.
	opts.Controller = config.Controller{SkipNameValidation: ptr.To(true)}
	mgr, err := ctrl.NewManager(env.Config, opts)
	if err != nil {
		w.t.Fatalf("creating manager %s: %v", name, err)
	}
	syncMetrics, err := metrics.NewSync(prometheus.NewRegistry())
	if err != nil {
		w.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := testenv.Reconciler(mgr, syncMetrics, userAgentPrefix+name, controller.Options{MaxConcurrentReconciles: 4})
	if err := r.SetupWithManager(mgr); err != nil {
		cancel()
		w.t.Fatalf("setting up manager %s: %v", name, err)
	}
	m := &shardManager{t: w.t, name: name, mgr: mgr, cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(ctx) }()
	w.t.Cleanup(m.crash)
	return m
}

// crash stops the manager without releasing its lease, and waits until it
// has stopped.
func (m *shardManager) crash() {
	m.stopOnce.Do(func() {
		m.cancel()
		select {
		case err := <-m.done:
			// A leader that stops without releasing its lease reports it
			// as lost: that is the crash, not a failure.
			if err != nil && !strings.Contains(err.Error(), "leader election lost") && !errors.Is(err, context.Canceled) {
				m.t.Errorf("manager %s: %v", m.name, err)
			}
		case <-time.After(30 * time.Second):
			m.t.Errorf("manager %s did not stop within 30s", m.name)
		}
	})
}

// waitElected waits until the manager leads its shard, and says how long
// that took; it fails the test when that takes longer than timeout.
func (m *shardManager) waitElected(timeout time.Duration) time.Duration {
	m.t.Helper()
	start := time.Now()
	select {
	case <-m.mgr.Elected():
		return time.Since(start)
	case <-time.After(timeout):
		m.t.Fatalf("manager %s was not elected within %v", m.name, timeout)
		return 0
	}
}

// isLeader says whether the manager leads its shard now.
func (m *shardManager) isLeader() bool {
	select {
	case <-m.mgr.Elected():
		return true
	default:
		return false
	}
}

// madeCall says whether the manager made the call.
func (m *shardManager) madeCall(c fakecloud.Call) bool {
	return c.UserAgent == userAgentPrefix+m.name
}

// callers names the managers that made the calls, for failure messages.
func callers(calls []fakecloud.Call) string {
	var names []string
	for _, c := range calls {
		names = append(names, fmt.Sprintf("%s %s at %s", strings.TrimPrefix(c.UserAgent, userAgentPrefix), c.Operation, c.Time.Format("15:04:05.000")))
	}
	return strings.Join(names, "; ")
}
