// Command demo runs servicewatch end to end on this machine, with nothing but
// processes on loopback: a kube-apiserver and etcd (the ones the tests use,
// from bin/k8s), the fake cloud with its sample data, and the manager. It
// creates the sample Secrets and ServiceWatch, waits until the watch is
// Ready, and shows it.
//
//	make demo         # stays up until Ctrl-C, then stops everything it started
//	make demo-check   # exits 0 only when the sample is Ready with the expected counts
//
// It expects bin/manager, bin/fakecloud and bin/k8s/{kube-apiserver,etcd};
// the make targets build them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/servicewatch/servicewatch/internal/testsupport/childproc"
)

type options struct {
	root      string // repository root
	check     bool
	timeout   time.Duration
	namespace string
}

func main() {
	var o options
	flag.StringVar(&o.root, "root", ".", "repository root (where bin/, config/ and hack/ are)")
	flag.BoolVar(&o.check, "check", false, "check the result and exit instead of waiting for Ctrl-C")
	flag.DurationVar(&o.timeout, "timeout", 3*time.Minute, "how long to wait for the ServiceWatch to become Ready")
	flag.StringVar(&o.namespace, "namespace", "demo", "namespace of the sample Secrets and ServiceWatch")
	flag.Parse()
	os.Exit(childproc.Drive("demo", func(ctx context.Context) error { return run(ctx, newProgress(os.Stdout), o) }))
}

// progress prints numbered steps with the time since the start, so a slow
// step is visible as such.
type progress struct {
	w     io.Writer
	start time.Time
}

func newProgress(w io.Writer) *progress { return &progress{w: w, start: time.Now()} }

// sayf prints one step. A failed write is dropped: the terminal or pipe is
// gone (see SIGPIPE in demo), and the demo must still stop its children.
func (p *progress) sayf(format string, args ...any) {
	_, _ = fmt.Fprintf(p.w, "[%5.1fs] %s\n", time.Since(p.start).Seconds(), fmt.Sprintf(format, args...))
}

func run(ctx context.Context, p *progress, o options) (err error) {
	root, err := filepath.Abs(o.root)
	if err != nil {
		return err
	}
	paths := newPaths(root)
	if err := paths.check(); err != nil {
		return err
	}
	if err := os.MkdirAll(paths.work, 0o755); err != nil {
		return err
	}

	pids := childproc.PIDFile{Path: filepath.Join(paths.work, "pids"), Bin: filepath.Join(root, "bin")}
	stopped, err := pids.Reap()
	if err != nil {
		return err
	}
	if len(stopped) > 0 {
		p.sayf("stopped processes an earlier demo left behind when it was killed: %s", strings.Join(stopped, ", "))
	}

	var stops childproc.Cleanup
	stops.Add(func() error { pids.Remove(); return nil })
	defer func() {
		p.sayf("stopping everything the demo started")
		if cerr := stops.Run(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		if left := childproc.Leftover(); len(left) > 0 {
			err = errors.Join(err, fmt.Errorf("processes still running after the demo stopped them: %v", left))
			return
		}
		p.sayf("stopped; no process the demo started is left running")
	}()

	// 1. Control plane.
	p.sayf("starting kube-apiserver and etcd on loopback (from %s)", rel(root, paths.k8s))
	cp, err := startControlPlane(paths)
	if err != nil {
		return err
	}
	stops.Add(cp.stop)
	if err := pids.Record(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p.sayf("control plane up at %s; CRD servicewatches.cloud.servicewatch.io installed", cp.cfg.Host)
	p.sayf("kubeconfig written to %s", rel(root, paths.kubeconfig))

	// 2. Fake cloud.
	data, expect, err := loadExpectations(paths.data, paths.sampleWatch)
	if err != nil {
		return err
	}
	p.sayf("starting the fake cloud with %s", rel(root, paths.data))
	fake, err := childproc.Start("fakecloud", paths.fakecloud,
		[]string{"--listen", "127.0.0.1:0", "--data", paths.data}, nil, filepath.Join(paths.work, "fakecloud.log"))
	if err != nil {
		return err
	}
	stops.Add(func() error { return fake.Stop(10 * time.Second) })
	if err := pids.Record(); err != nil {
		return err
	}
	cloudURL, err := fake.FirstLine(ctx, 30*time.Second)
	if err != nil {
		return fmt.Errorf("fake cloud: %w (log: %s)", err, filepath.Join(paths.work, "fakecloud.log"))
	}
	p.sayf("fake cloud serving at %s", cloudURL)

	// 3. Sample Secrets and ServiceWatch.
	watch, err := cp.createSamples(ctx, paths, o.namespace, data)
	if err != nil {
		return err
	}
	managed, err := cp.createWatch(ctx, paths.managedWatch, o.namespace)
	if err != nil {
		return err
	}
	p.sayf("created namespace %q, Secrets %s and ServiceWatches %q and %q (from config/samples, with the fake cloud's credentials)",
		o.namespace, strings.Join(expect.secretNames, ", "), watch.Name, managed.Name)

	// 4. Manager, with only the RBAC of config/rbac/role.yaml.
	metricsAddr, err := childproc.FreeAddr(ctx)
	if err != nil {
		return err
	}
	probeAddr, err := childproc.FreeAddr(ctx)
	if err != nil {
		return err
	}
	managerLog := filepath.Join(paths.work, "manager.log")
	p.sayf("starting the manager (logs: %s)", rel(root, managerLog))
	mgr, err := childproc.Start("manager", paths.manager, []string{
		"--management-api-url", cloudURL,
		"--alert-api-url", cloudURL,
		"--metrics-bind-address", metricsAddr,
		// Plain HTTP, so that curl can read it: the demo's API server has
		// no token for a scraper. A cluster gets HTTPS with authn/authz.
		"--metrics-secure=false",
		"--health-probe-bind-address", probeAddr,
	}, []string{"KUBECONFIG=" + paths.managerKubeconfig}, managerLog)
	if err != nil {
		return err
	}
	// The manager stops before the API server (cleanup runs in reverse), so
	// it can release what it holds and its log ends cleanly.
	stops.Add(func() error { return mgr.Stop(40 * time.Second) })
	if err := pids.Record(); err != nil {
		return err
	}
	if err := mgr.AwaitHTTP(ctx, "http://"+probeAddr+"/readyz", time.Minute); err != nil {
		return fmt.Errorf("manager not ready: %w (log: %s)", err, managerLog)
	}
	p.sayf("manager ready; metrics at http://%s/metrics", metricsAddr)

	// 5. Ready.
	p.sayf("waiting for ServiceWatch %s/%s to become Ready (timeout %s)", o.namespace, watch.Name, o.timeout)
	ready, err := cp.awaitReady(ctx, p, watch, mgr, o.timeout)
	if err != nil {
		return fmt.Errorf("%w (manager log: %s)", err, managerLog)
	}
	p.sayf("ServiceWatch %s/%s is Ready", o.namespace, watch.Name)
	readyManaged, err := cp.awaitReady(ctx, p, managed, mgr, o.timeout)
	if err != nil {
		return fmt.Errorf("%w (manager log: %s)", err, managerLog)
	}
	p.sayf("ServiceWatch %s/%s is Ready: %s", o.namespace, managed.Name, describeManagedAlerts(readyManaged))
	fmt.Println()
	showWatch(ctx, os.Stdout, paths.kubeconfig, o.namespace, ready)
	fmt.Println()
	metricsURL := "http://" + metricsAddr + "/metrics"
	if err := showStateMetrics(ctx, os.Stdout, metricsURL, ready); err != nil {
		return err
	}
	fmt.Println()

	if o.check {
		if err := checkManagedAlerts(readyManaged, data); err != nil {
			return err
		}
		p.sayf("%s's alerts are every alert the fake's management API serves for the service, read with the management key", managed.Name)
		if err := checkDemo(ctx, p, cp, paths.kubeconfig, ready, expect, metricsURL); err != nil {
			return err
		}
		p.sayf("demo-check passed")
		return nil
	}

	fmt.Printf(`The demo is running. In another terminal:

  export KUBECONFIG=%s
  kubectl get sw -A -o wide
  kubectl get sw -n %s %s -o yaml
  TOKEN=$(date -u +%%FT%%TZ); kubectl annotate sw -n %s %s --overwrite %s=$TOKEN   # sync now
  kubectl wait sw/%s -n %s --for=jsonpath='{.status.lastHandledRequestedAt}'=$TOKEN  # and wait for that sync
  make plugin && PATH=$PWD/bin:$PATH kubectl servicewatch why -n %s %s
  curl -s %s | grep ^servicewatch_
  tail -f %s

Press Ctrl-C to stop everything.
`, paths.kubeconfig, o.namespace, watch.Name, o.namespace, watch.Name, requestedAtAnnotation, watch.Name, o.namespace, o.namespace, watch.Name, metricsURL, managerLog)
	select {
	case <-ctx.Done():
		fmt.Println()
		return nil
	case <-mgr.Done():
		return fmt.Errorf("%w (log: %s)", exitedError("the manager", mgr), managerLog)
	}
}

// paths are the files the demo reads and writes, all under the repository.
type paths struct {
	k8s, manager, fakecloud       string
	crds, role, data              string
	sampleSecrets, sampleWatch    string
	managedWatch                  string // a watch whose alerts come from the management API
	work                          string // bin/demo.d: logs, the manager's kubeconfig
	kubeconfig, managerKubeconfig string
}

func newPaths(root string) paths {
	bin := filepath.Join(root, "bin")
	work := filepath.Join(bin, "demo.d")
	return paths{
		k8s:               filepath.Join(bin, "k8s"),
		manager:           filepath.Join(bin, "manager"),
		fakecloud:         filepath.Join(bin, "fakecloud"),
		crds:              filepath.Join(root, "config", "crd", "bases"),
		role:              filepath.Join(root, "config", "rbac", "role.yaml"),
		data:              filepath.Join(root, "hack", "fakecloud", "data.yaml"),
		sampleSecrets:     filepath.Join(root, "config", "samples", "secrets.yaml"),
		sampleWatch:       filepath.Join(root, "config", "samples", "cloud_v1beta1_servicewatch.yaml"),
		managedWatch:      filepath.Join(root, "config", "samples", "cloud_v1beta1_servicewatch_managed.yaml"),
		work:              work,
		kubeconfig:        filepath.Join(bin, "demo.kubeconfig"),
		managerKubeconfig: filepath.Join(work, "manager.kubeconfig"),
	}
}

// check says which make target builds a missing binary, rather than letting
// a start fail with a bare "no such file".
func (p paths) check() error {
	for _, f := range []string{
		filepath.Join(p.k8s, "kube-apiserver"), filepath.Join(p.k8s, "etcd"), p.manager, p.fakecloud,
		p.role, p.data, p.sampleSecrets, p.sampleWatch, p.managedWatch,
	} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("%s is missing: run `make demo` (it builds what the demo needs) from the repository root", f)
		}
	}
	return nil
}

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}

// showWatch prints `kubectl get sw -o wide` when kubectl is there, then the
// status in short. Failed writes are dropped, as in progress.sayf.
func showWatch(ctx context.Context, w io.Writer, kubeconfig, namespace string, sw *serviceWatch) {
	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		_, _ = fmt.Fprintf(w, "$ kubectl get sw -n %s -o wide\n", namespace)
		cmd := exec.CommandContext(ctx, kubectl, "get", "sw", "-n", namespace, "-o", "wide")
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		cmd.Stdout, cmd.Stderr = w, w
		if err := cmd.Run(); err != nil {
			_, _ = fmt.Fprintf(w, "(kubectl failed: %v)\n", err)
		}
		_, _ = fmt.Fprintln(w)
	} else {
		_, _ = fmt.Fprintln(w, "(kubectl not found on PATH: install it to look around)")
	}
	_, _ = fmt.Fprint(w, describeStatus(sw))
}
