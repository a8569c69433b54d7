package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procDir is where Linux shows the processes; the demo reads it to find its
// children.
const procDir = "/proc"

// child is a process the demo started and must stop.
type child struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{} // closed when the process has exited and been reaped
	err  error         // Wait's result, set before done is closed
}

// startChild starts bin with args, its output going to logPath; the channel
// yields the first line of its standard output. The child
// gets its own process group, so a Ctrl-C in the terminal reaches only the
// demo, which then stops its children in order (the manager before the API
// server it talks to) instead of all of them dying at once.
func startChild(name, bin string, args, env []string, logPath string) (*child, <-chan string, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, nil, err
	}
	// Not exec.CommandContext: a child is stopped in order by child.stop,
	// with a grace period, never killed outright when a context ends.
	cmd := exec.Command(bin, args...) //nolint:noctx // see above
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid: true,
		// If the demo itself is killed (SIGKILL cannot be trapped), the
		// kernel still stops the child.
		Pdeathsig: syscall.SIGTERM,
	}
	// Standard output is piped so that the caller can read a first line
	// (the fake cloud prints its URL); everything after goes to the log.
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, errors.Join(err, logFile.Close())
	}
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		return nil, nil, errors.Join(fmt.Errorf("starting %s: %w", name, err), logFile.Close())
	}
	c := &child{name: name, cmd: cmd, log: logFile, done: make(chan struct{})}
	first := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		first <- line
		_, _ = logFile.WriteString(line)
		_, _ = io.Copy(logFile, r)
	}()
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, first, nil
}

// errExitedCleanly stands for Wait's nil error in messages about a child
// that exited when it should have kept running.
var errExitedCleanly = errors.New("exit status 0")

// exitErr says why the child exited, once done is closed.
func (c *child) exitErr() error {
	if c.err == nil {
		return errExitedCleanly
	}
	return c.err
}

// exited reports whether the child has already stopped.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, waits up to grace, then kills the whole process group.
// It closes the child's log, and reports a failure to do so too.
func (c *child) stop(grace time.Duration) (err error) {
	defer func() { err = errors.Join(err, c.log.Close()) }()
	if c.exited() {
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

// cleanup runs stop functions in reverse order of registration, like defer,
// and reports every failure instead of the first.
type cleanup struct {
	steps []func() error
}

func (c *cleanup) add(f func() error) { c.steps = append(c.steps, f) }

func (c *cleanup) run() error {
	var errs []error
	for _, step := range slices.Backward(c.steps) {
		if err := step(); err != nil {
			errs = append(errs, err)
		}
	}
	c.steps = nil
	return errors.Join(errs...)
}

// leftoverChildren lists the processes whose parent is still the demo, from
// /proc (Linux), so the demo can prove it leaves nothing running; elsewhere
// it finds none.
func leftoverChildren() []string {
	entries, err := os.ReadDir(procDir)
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
		b, err := os.ReadFile(filepath.Join(procDir, e.Name(), "stat"))
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

// pidFile records the processes the demo runs, so that a later demo can stop
// them if this one is killed with SIGKILL, which it cannot trap. The manager
// and the fake cloud die with the demo anyway (Pdeathsig); envtest's
// kube-apiserver and etcd do not.
type pidFile struct {
	path string
	bin  string // only processes whose executable is under this directory are ever signaled
}

// record writes the demo's current child processes.
func (f pidFile) record() error {
	var lines []string
	for _, c := range leftoverChildren() {
		lines = append(lines, strings.Fields(c)[0])
	}
	return os.WriteFile(f.path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// reap stops what an earlier, killed demo left running and returns what it
// stopped. A pid reused by an unrelated process is left alone: only
// executables under f.bin are signaled.
func (f pidFile) reap() []string {
	b, err := os.ReadFile(f.path)
	if err != nil {
		return nil
	}
	var stopped []int
	var names []string
	for field := range strings.FieldsSeq(string(b)) {
		pid, err := strconv.Atoi(field)
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join(procDir, field, "exe"))
		if err != nil || !strings.HasPrefix(exe, f.bin+string(filepath.Separator)) {
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
	_ = os.Remove(f.path)
	return names
}

func (f pidFile) remove() { _ = os.Remove(f.path) }
