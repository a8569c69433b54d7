package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/testsupport/childproc"
)

// runEnv is everything one scenario runs against with one manager binary:
// a fresh control plane (so that no watch of an earlier run is synced), the
// fake cloud and the manager, each started by the scenario with its flags.
type runEnv struct {
	paths      paths
	manager    string // the manager binary under test
	dir        string // logs and files of this run
	rssCap     int64
	cp         *controlPlane
	track      *readiness
	kubeconfig string
	cloud      cloudAdmin
	cloudURL   string
	stops      childproc.Cleanup
	managers   int
}

// newRun starts the control plane and follows the ServiceWatches in it.
func newRun(ctx context.Context, p paths, manager, dir string, rssCap int64) (_ *runEnv, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	e := &runEnv{paths: p, manager: manager, dir: dir, rssCap: rssCap}
	defer func() {
		if err != nil {
			err = errors.Join(err, e.close())
		}
	}()
	cp, err := startControlPlane(p)
	if err != nil {
		return nil, err
	}
	e.cp = cp
	e.stops.Add(cp.stop)
	e.kubeconfig = filepath.Join(dir, "manager.kubeconfig")
	if err := cp.writeAdminKubeconfig(e.kubeconfig); err != nil {
		return nil, err
	}
	trackCtx, cancel := context.WithCancel(ctx)
	e.stops.Add(func() error { cancel(); return nil })
	if e.track, err = trackReadiness(trackCtx, cp.client); err != nil {
		return nil, err
	}
	return e, nil
}

// close stops everything the run started, the manager first.
func (e *runEnv) close() error { return e.stops.Run() }

// startCloud starts the fake cloud serving data, with extra flags such as a
// budget or a latency.
func (e *runEnv) startCloud(ctx context.Context, data fakecloud.Data, args ...string) error {
	dataPath := filepath.Join(e.dir, "cloud.json")
	if err := writeCloudData(dataPath, data); err != nil {
		return err
	}
	args = append([]string{"--listen", "127.0.0.1:0", "--admin", "--data", dataPath}, args...)
	logPath := filepath.Join(e.dir, "fakecloud.log")
	c, err := childproc.Start("fakecloud", e.paths.fakecloud, args, nil, logPath)
	if err != nil {
		return err
	}
	e.stops.Add(func() error { return c.Stop(10 * time.Second) })
	if e.cloudURL, err = c.FirstLine(ctx, 30*time.Second); err != nil {
		return fmt.Errorf("fake cloud: %w (log: %s)", err, logPath)
	}
	e.cloud = cloudAdmin{url: e.cloudURL, http: newAdminHTTPClient()}
	return nil
}

// managerProc is a running manager whose memory is watched.
type managerProc struct {
	child  *childproc.Child
	mu     sync.Mutex
	peak   int64 // highest VmHWM read
	killed bool  // for passing the RSS cap
	halt   chan struct{}
	halted sync.WaitGroup
}

// runFleet starts the manager with args and then creates watches, so that
// they come due while it runs, as a fleet applied to a running operator does.
func (e *runEnv) runFleet(ctx context.Context, watches []*swv1.ServiceWatch, args ...string) (*managerProc, error) {
	m, err := e.startManager(ctx, args...)
	if err != nil {
		return nil, err
	}
	return m, e.cp.createWatches(ctx, watches)
}

// startManager starts the manager under test with its API URLs, no metrics
// listener, and the scenario's flags; it returns once /readyz answers.
func (e *runEnv) startManager(ctx context.Context, args ...string) (*managerProc, error) {
	probe, err := childproc.FreeAddr(ctx)
	if err != nil {
		return nil, err
	}
	e.managers++
	logPath := filepath.Join(e.dir, fmt.Sprintf("manager-%d.log", e.managers))
	args = append([]string{
		"--management-api-url", e.cloudURL,
		"--alert-api-url", e.cloudURL,
		"--metrics-bind-address", "0",
		"--health-probe-bind-address", probe,
	}, args...)
	c, err := childproc.Start("manager", e.manager, args, []string{"KUBECONFIG=" + e.kubeconfig}, logPath)
	if err != nil {
		return nil, err
	}
	m := &managerProc{child: c, halt: make(chan struct{})}
	e.stops.Add(func() error { _, err := m.stop(); return err })
	m.halted.Add(1)
	go m.guard(e.rssCap)
	if err := c.AwaitHTTP(ctx, "http://"+probe+"/readyz", time.Minute); err != nil {
		return nil, fmt.Errorf("manager not ready: %w (log: %s)", err, logPath)
	}
	return m, nil
}

// guard samples the manager's memory until it stops, remembering the peak,
// and kills it if it passes rssCap: a leak must not take the machine down.
func (m *managerProc) guard(rssCap int64) {
	defer m.halted.Done()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-m.halt:
			return
		case <-m.child.Done():
			return
		case <-tick.C:
		}
		rss, peak, err := memoryOf(m.child.Pid())
		if err != nil {
			continue
		}
		m.mu.Lock()
		m.peak = max(m.peak, peak)
		over := rssCap > 0 && rss > rssCap
		if over {
			m.killed = true
		}
		m.mu.Unlock()
		if over {
			_ = syscall.Kill(-m.child.Pid(), syscall.SIGKILL)
			return
		}
	}
}

// peakRSS is the manager's peak resident memory so far, and whether it was
// killed for passing the cap.
func (m *managerProc) peakRSS() (int64, bool) {
	if _, peak, err := memoryOf(m.child.Pid()); err == nil {
		m.mu.Lock()
		m.peak = max(m.peak, peak)
		m.mu.Unlock()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peak, m.killed
}

// exited reports whether the manager has stopped on its own (or was killed
// by the guard).
func (m *managerProc) exited() bool { return m.child.Exited() }

// stop stops the manager and returns its peak resident memory; stopping
// twice is harmless.
func (m *managerProc) stop() (int64, error) {
	peak, _ := m.peakRSS()
	select {
	case <-m.halt:
	default:
		close(m.halt)
	}
	m.halted.Wait()
	return peak, m.child.Stop(40 * time.Second)
}

// managerFlagDefaults reads the defaults of the manager's integer flags from
// its --help, so that a scenario can tell what a binary will do without its
// own flags: each build is measured as a black box, and the before and after
// binaries need not have the same flags.
func (e *runEnv) managerFlagDefaults(ctx context.Context) (map[string]int, error) {
	out, err := exec.CommandContext(ctx, e.manager, "--help").CombinedOutput()
	if len(out) == 0 {
		return nil, fmt.Errorf("%s --help printed nothing: %w", e.manager, err)
	}
	return parseFlagDefaults(string(out)), nil
}

// flagLine matches a flag's line of Go's flag help: "  -name int".
var flagLine = regexp.MustCompile(`^\s+--?([a-z0-9-]+) int$`)

// flagDefault matches the default on the line of usage after it.
var flagDefault = regexp.MustCompile(`\(default (-?\d+)\)`)

// parseFlagDefaults returns each integer flag of Go flag help text with its
// default (0 when the help shows none, as the flag package does for zero).
func parseFlagDefaults(help string) map[string]int {
	defaults := map[string]int{}
	name := ""
	for line := range strings.Lines(help) {
		line = strings.TrimRight(line, "\n")
		if m := flagLine.FindStringSubmatch(line); m != nil {
			name = m[1]
			defaults[name] = 0
			continue
		}
		if name == "" || !strings.HasPrefix(strings.TrimLeft(line, " "), "\t") {
			name = ""
			continue
		}
		if m := flagDefault.FindStringSubmatch(line); m != nil {
			if v, err := strconv.Atoi(m[1]); err == nil {
				defaults[name] = v
			}
		}
	}
	return defaults
}
