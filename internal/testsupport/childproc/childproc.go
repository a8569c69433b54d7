// Package childproc runs the project's programs (the fake cloud, the
// manager) as child processes of a driver such as the demo or the scale
// benchmark, and makes sure they stop: each child has its own process group
// and dies with its parent, stops are run in reverse order of starts, and a
// pid file lets a later run stop what a SIGKILLed run left behind.
package childproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Child is a process that was started and must be stopped.
type Child struct {
	name  string
	cmd   *exec.Cmd
	log   *os.File
	first chan string   // the first line of standard output, once
	done  chan struct{} // closed when the process has exited and been reaped
	err   error         // Wait's result, set before done is closed
}

// Start starts bin with args and env (added to this process's environment),
// its standard error and all but the first line of its standard output going
// to logPath; FirstLine returns that first line. The child gets its own
// process group, so a Ctrl-C in the terminal reaches only the driver, which
// then stops its children in order instead of all of them dying at once.
func Start(name, bin string, args, env []string, logPath string) (*Child, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	// Not CommandContext: a context's cancellation SIGKILLs the child alone,
	// skipping its graceful shutdown and leaving its process group behind;
	// Stop sends SIGTERM first and then kills the whole group.
	cmd := exec.Command(bin, args...) //nolint:noctx // stopped gracefully by Stop, not killed by a context
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid: true,
		// If the driver itself is killed (SIGKILL cannot be trapped), the
		// kernel still stops the child.
		Pdeathsig: syscall.SIGTERM,
	}
	// Standard output is piped so that the caller can read a first line
	// (the fake cloud prints its URL); everything after goes to the log.
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, errors.Join(err, logFile.Close())
	}
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("starting %s: %w", name, err), logFile.Close())
	}
	c := &Child{name: name, cmd: cmd, log: logFile, first: make(chan string, 1), done: make(chan struct{})}
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		c.first <- line
		_, _ = logFile.WriteString(line)
		_, _ = io.Copy(logFile, r)
	}()
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// Pid is the child's process ID.
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Done is closed when the child has exited.
func (c *Child) Done() <-chan struct{} { return c.done }

// Err is how the child exited; valid once Done is closed.
func (c *Child) Err() error { return c.err }

// exited says that the child exited while it was still needed, with its exit
// status; a clean exit (nil Err) is a failure too.
func (c *Child) exited(what string) error {
	if c.err == nil {
		return fmt.Errorf("%s: exit status 0", what)
	}
	return fmt.Errorf("%s: %w", what, c.err)
}

// Exited reports whether the child has already stopped.
func (c *Child) Exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM, waits up to grace, then kills the whole process group.
// Stopping a child again does nothing: a driver may stop one early and then
// again in its cleanup.
func (c *Child) Stop(grace time.Duration) error {
	err := c.stop(grace)
	if cerr := c.log.Close(); cerr != nil && !errors.Is(cerr, os.ErrClosed) {
		err = errors.Join(err, fmt.Errorf("closing the log of %s: %w", c.name, cerr))
	}
	return err
}

// stop stops the process; Stop then closes its log.
func (c *Child) stop(grace time.Duration) error {
	if c.Exited() {
		return nil
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	<-c.done
	return fmt.Errorf("%s did not stop within %s and was killed", c.name, grace)
}

// FirstLine waits for the first line of the child's standard output, such as
// the fake cloud's URL, and returns it without its line end.
func (c *Child) FirstLine(ctx context.Context, timeout time.Duration) (string, error) {
	select {
	case line := <-c.first:
		line = strings.TrimSpace(line)
		if line == "" {
			<-c.done
			return "", c.exited("exited before printing anything")
		}
		return line, nil
	case <-c.done:
		return "", c.exited("exited")
	case <-time.After(timeout):
		return "", fmt.Errorf("printed nothing within %s", timeout)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// AwaitHTTP waits until url answers 200, such as the manager's /readyz,
// failing early if the child exits.
func (c *Child) AwaitHTTP(ctx context.Context, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	hc := &http.Client{Timeout: 2 * time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
		if err != nil {
			return err
		}
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer 200 within %s", url, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.done:
			return c.exited("exited")
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// FreeAddr finds a free loopback port, so a driver never clashes with
// whatever else listens on this machine (such as another driver).
func FreeAddr(ctx context.Context) (string, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return "", fmt.Errorf("freeing %s: %w", addr, err)
	}
	return addr, nil
}

// Cleanup runs stop functions in reverse order of registration, like defer,
// and reports every failure instead of the first.
type Cleanup struct {
	steps []func() error
}

// Add registers a stop function.
func (c *Cleanup) Add(f func() error) { c.steps = append(c.steps, f) }

// Run runs the stop functions registered so far, last first, and forgets
// them.
func (c *Cleanup) Run() error {
	var errs []error
	for _, step := range slices.Backward(c.steps) {
		if err := step(); err != nil {
			errs = append(errs, err)
		}
	}
	c.steps = nil
	return errors.Join(errs...)
}

// Leftover lists the processes whose parent is still this process, from
// /proc (Linux), so a driver can prove it leaves nothing running; elsewhere
// it finds none.
func Leftover() []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var left []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(procFile(e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name is in parentheses and may hold spaces; the
		// parent's pid is the second field after it.
		s := string(b)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil && ppid == self {
			left = append(left, fmt.Sprintf("%d %s", pid, s[strings.IndexByte(s, '(')+1:end]))
		}
	}
	return left
}

// PIDFile records the processes a driver runs, so that a later run can stop
// them if this one is killed with SIGKILL, which it cannot trap. Children
// started with Start die with the driver anyway (Pdeathsig); envtest's
// kube-apiserver and etcd do not.
type PIDFile struct {
	// Path is the file.
	Path string
	// Bin is the directory of the executables: only processes whose
	// executable is under it are ever signaled.
	Bin string
}

// Record writes the driver itself, then its current child processes.
func (f PIDFile) Record() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	lines := []string{fmt.Sprintf("%s %d %s", driverMark, os.Getpid(), self)}
	for _, c := range Leftover() {
		lines = append(lines, strings.Fields(c)[0])
	}
	return os.WriteFile(f.Path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// driverMark starts the line of a pid file that names the driver.
const driverMark = "driver"

// Reap stops what an earlier, killed driver left running and returns what
// it stopped. A pid reused by an unrelated process is left alone: only
// executables under f.Bin are signaled. When the driver that wrote the file
// still runs (bin/ may be shared by several checkouts), nothing is touched
// and an error says so.
func (f PIDFile) Reap() ([]string, error) {
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		// The earlier run stopped cleanly, or there was none.
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the pid file: %w", err)
	}
	lines := strings.Split(string(b), "\n")
	if pid, ok := runningDriver(lines[0]); ok {
		return nil, fmt.Errorf("another run (pid %d) is using %s: wait for it or stop it", pid, f.Path)
	}
	// /proc shows executables with symbolic links resolved; bin/ may be one.
	bin := f.Bin
	if resolved, err := filepath.EvalSymlinks(bin); err == nil {
		bin = resolved
	}
	var stopped []int
	var names []string
	for field := range strings.FieldsSeq(strings.Join(lines[1:], " ")) {
		pid, err := strconv.Atoi(field)
		if err != nil {
			continue
		}
		exe, err := os.Readlink(procFile(field, "exe"))
		if err != nil || !strings.HasPrefix(exe, bin+string(filepath.Separator)) {
			continue
		}
		if syscall.Kill(pid, syscall.SIGTERM) == nil {
			stopped = append(stopped, pid)
			names = append(names, fmt.Sprintf("%d %s", pid, filepath.Base(exe)))
		}
	}
	// An API server whose etcd is gone can take long to shut down: give
	// each a few seconds, then kill it.
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range stopped {
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = os.Remove(f.Path)
	return names, nil
}

// runningDriver reads a pid file's driver line and reports whether that
// process still runs the same executable (not a reuse of its pid).
func runningDriver(line string) (int, bool) {
	fields := strings.SplitN(line, " ", 3)
	if len(fields) != 3 || fields[0] != driverMark {
		return 0, false
	}
	pid, err := strconv.Atoi(fields[1])
	if err != nil || pid == os.Getpid() {
		return 0, false
	}
	exe, err := os.Readlink(procFile(fields[1], "exe"))
	return pid, err == nil && exe == fields[2]
}

// procFile is the path of file in the /proc directory of pid.
func procFile(pid, file string) string { return "/proc/" + pid + "/" + file }

// Remove deletes the pid file.
func (f PIDFile) Remove() { _ = os.Remove(f.Path) }

// Drive runs the driver named name: it runs run with a context that ends on
// SIGINT or SIGTERM and returns the driver's exit code (1 when run failed)
// for main to exit with, after run's deferred calls (which stop its
// children) have run. The signals are caught for the
// driver's whole life, also while it stops its children: a second Ctrl-C must
// not leave them orphaned. SIGPIPE is ignored: output piped into a command
// that exits early (| head) must not kill the driver before it has stopped
// its children; writes then just fail. run's error is printed to standard
// error as "name: error", a run cut short by a signal as "name: interrupted".
func Drive(name string, run func(context.Context) error) int {
	if err := drive(name, run, os.Stderr); err != nil {
		return 1
	}
	return 0
}

func drive(name string, run func(context.Context) error, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	signal.Ignore(syscall.SIGPIPE)
	err := run(ctx)
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled):
		_, _ = fmt.Fprintf(stderr, "%s: interrupted\n", name)
	default:
		_, _ = fmt.Fprintf(stderr, "%s: %v\n", name, err)
	}
	return err
}
