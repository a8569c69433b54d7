// Package testenv starts a real kube-apiserver and etcd (controller-runtime's
// envtest) with the ServiceWatch CRD installed, for the project's tests.
//
// The binaries come from bin/k8s, where `make envtest` builds them from Go
// modules; KUBEBUILDER_ASSETS overrides that location.
package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// Env is a running control plane with a client for it.
type Env struct {
	// Config reaches the API server as a cluster admin.
	Config *rest.Config
	// Client is a direct (uncached) client with the project's scheme.
	Client client.Client
	// WatchClient can also watch, to see every write to an object.
	WatchClient client.WithWatch
	// Scheme knows the built-in types and the ServiceWatch types.
	Scheme *apiruntime.Scheme

	env *envtest.Environment
	// auditLog is the API server's audit log (Options.AuditSecretReads).
	auditLog string
}

// RepoRoot is the root of this repository, found from this file's location so
// that tests work from any package directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Options say where a control plane's parts are and how its client behaves.
// The zero value is what the test suites use.
type Options struct {
	// Assets is the directory of kube-apiserver and etcd; default
	// KUBEBUILDER_ASSETS, else bin/k8s of this checkout.
	Assets string
	// CRDs is the directory of the CRDs to install; default
	// config/crd/bases of this checkout.
	CRDs string
	// StartTimeout bounds the start; default envtest's. A loaded machine
	// can take longer than its 20 s.
	StartTimeout time.Duration
	// Unlimited turns the client's own rate limit off, so that creating a
	// thousand objects measures the API server and not the client.
	Unlimited bool
	// AuditSecretReads has the API server write an audit event for every
	// read of a Secret (get, list, watch) into a file, so that a test can
	// count the reads the API server itself saw (Env.SecretReads).
	AuditSecretReads bool
}

// auditPolicy records reads of Secrets (their metadata: who read which,
// never the data) and nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  resources: [{group: "", resources: [secrets]}]
  verbs: [get, list, watch]
- level: None
`

// Start starts kube-apiserver and etcd and installs the CRDs of config/crd/bases.
func Start() (*Env, error) { return StartWith(Options{}) }

// StartWith starts kube-apiserver and etcd as o says and installs the CRDs.
// It is the one envtest starter of the project: the test suites, the demo
// and the scale benchmark all start their control plane here.
func StartWith(o Options) (*Env, error) {
	assets := o.Assets
	if assets == "" {
		var err error
		if assets, err = binaryAssets(); err != nil {
			return nil, err
		}
	}
	crds := o.CRDs
	if crds == "" {
		crds = filepath.Join(RepoRoot(), "config", "crd", "bases")
	}
	scheme, err := controller.NewScheme()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		CRDDirectoryPaths:        []string{crds},
		ErrorIfCRDPathMissing:    true,
		Scheme:                   scheme,
		ControlPlaneStartTimeout: o.StartTimeout,
	}
	var auditLog string
	if o.AuditSecretReads {
		if auditLog, err = configureAudit(env); err != nil {
			return nil, err
		}
	}
	cfg, err := env.Start()
	if err != nil {
		// Start can fail after etcd or the API server came up (installing
		// the CRD, say); Stop ends whatever is running.
		return nil, errors.Join(fmt.Errorf("starting envtest from %s: %w", assets, err), env.Stop())
	}
	if o.Unlimited {
		cfg = rest.CopyConfig(cfg)
		cfg.QPS, cfg.Burst = -1, -1
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("creating client: %w", err), env.Stop())
	}
	return &Env{Config: cfg, Client: c, WatchClient: c, Scheme: scheme, env: env, auditLog: auditLog}, nil
}

// configureAudit writes the audit policy into a directory of its own and
// has env's API server log to a file beside it, which it returns.
func configureAudit(env *envtest.Environment) (string, error) {
	dir, err := os.MkdirTemp("", "servicewatch-audit-")
	if err != nil {
		return "", err
	}
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return "", err
	}
	log := filepath.Join(dir, "audit.log")
	env.ControlPlane.GetAPIServer().Configure().
		Set("audit-policy-file", policy).
		Set("audit-log-path", log).
		Set("audit-log-mode", "blocking") // each event written before the answer: a test reads it at once
	return log, nil
}

// SecretReads counts the gets of the Secret namespace/name that the API
// server's audit log holds so far (Options.AuditSecretReads). The manager
// reads a Secret's data only with a get; its list and watch of Secrets
// carry their metadata alone (see internal/controller/credentials), so they are not
// reads of a key.
func (e *Env) SecretReads(namespace, name string) (int, error) {
	if e.auditLog == "" {
		return 0, errors.New("the control plane was started without AuditSecretReads")
	}
	raw, err := os.ReadFile(e.auditLog)
	if err != nil {
		return 0, err
	}
	n := 0
	for line := range bytes.Lines(raw) {
		var ev struct {
			Verb      string `json:"verb"`
			ObjectRef struct {
				Resource  string `json:"resource"`
				Namespace string `json:"namespace"`
				Name      string `json:"name"`
			} `json:"objectRef"`
		}
		if json.Unmarshal(line, &ev) != nil || ev.ObjectRef.Resource != "secrets" {
			continue
		}
		if ev.Verb == "get" && ev.ObjectRef.Namespace == namespace && ev.ObjectRef.Name == name {
			n++
		}
	}
	return n, nil
}

// StartForTest starts a control plane for one test (and its subtests),
// failing it when the start fails, and stops it when the test ends.
func StartForTest(t testing.TB) *Env {
	t.Helper()
	e, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("stopping envtest: %v", err)
		}
	})
	return e
}

// ManagerOptions are the options of a manager that a test runs in-process
// on e: the project's scheme, and no metrics or health listener (tests read
// the registries directly, and several managers may run at once).
func (e *Env) ManagerOptions() ctrl.Options {
	return ctrl.Options{
		Scheme:                 e.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	}
}

// Reconciler is the reconciler a test's manager runs: the real cloud client
// (its User-Agent userAgent, or the default when empty) observed by metrics,
// with per-key rate limits far above production's, since a test's watches
// share its few keys and ratebudget tests the limits.
func Reconciler(mgr ctrl.Manager, syncMetrics *metrics.Sync, userAgent string, o controller.Options) *controller.ServiceWatchReconciler {
	fast := ratebudget.RateLimit{Requests: 1000, Per: time.Second, Burst: 1000}
	budgets := cloudapi.NewBudgets(fast, fast)
	return &controller.ServiceWatchReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Cloud: cloudapi.New(cloudapi.Options{
			Timeout: 5 * time.Second, UserAgent: userAgent, Observer: syncMetrics,
			Budgets: budgets,
		}),
		Budgets:  budgets,
		Recorder: mgr.GetEventRecorder(controller.ReportingController),
		Metrics:  syncMetrics,
		Options:  o,
	}
}

// WriteKubeconfig adds the user u to the control plane and writes a
// kubeconfig of theirs to path, readable by its owner only (it holds the
// user's client certificate).
func (e *Env) WriteKubeconfig(u envtest.User, path string) error {
	user, err := e.env.AddUser(u, nil)
	if err != nil {
		return fmt.Errorf("adding user %s: %w", u.Name, err)
	}
	b, err := user.KubeConfig()
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// Main is the body of the TestMain of a package whose tests share one
// control plane; TestMain exits with what it returns. Under -short it runs
// the tests without one (those that need it skip); otherwise it starts one,
// hands it to suite, which runs m (with whatever it starts around the tests)
// and returns m's code, and stops it. An error of suite, or a failure to
// start, fails the run.
func Main(m *testing.M, suite func(*Env) (int, error)) int {
	return MainWith(m, Options{}, suite)
}

// MainWith is Main with a control plane started as o says.
func MainWith(m *testing.M, o Options, suite func(*Env) (int, error)) int {
	code, err := runMain(m, o, suite)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}

func runMain(m *testing.M, o Options, suite func(*Env) (int, error)) (int, error) {
	flag.Parse() //nolint:revive // TestMain must parse the test flags before it can read -short
	if testing.Short() {
		return m.Run(), nil
	}
	env, err := StartWith(o)
	if err != nil {
		return 0, err
	}
	defer func() { _ = env.Stop() }()
	return suite(env)
}

// Get reads the object of type T named key from the API server, failing t
// when it cannot.
func Get[T any, P interface {
	*T
	client.Object
}](ctx context.Context, t testing.TB, c client.Reader, key client.ObjectKey) P {
	t.Helper()
	obj := P(new(T))
	if err := c.Get(ctx, key, obj); err != nil {
		t.Fatalf("getting %T %s: %v", obj, key, err)
	}
	return obj
}

// SkipShort skips a test that needs the control plane when run under
// -short, where Main starts none.
func SkipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a control plane (envtest); run without -short")
	}
}

// Stop stops the control plane.
func (e *Env) Stop() error {
	err := e.env.Stop()
	if e.auditLog != "" {
		err = errors.Join(err, os.RemoveAll(filepath.Dir(e.auditLog)))
	}
	return err
}

// binaryAssets finds kube-apiserver and etcd, and says how to get them when
// they are missing instead of letting envtest fail obscurely.
func binaryAssets() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir = filepath.Join(RepoRoot(), "bin", "k8s")
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", errors.New("envtest binaries not found in " + dir + ": run `make envtest` (or `make test`) first")
		}
	}
	return dir, nil
}

// EtcdURL is the client URL of the control plane's etcd, for tests that
// prove what the API server stored (the storage migration's).
func (e *Env) EtcdURL() *url.URL { return e.env.ControlPlane.Etcd.URL }
