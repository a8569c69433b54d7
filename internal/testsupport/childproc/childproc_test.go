package childproc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/testsupport/childproc"
)

func TestCleanupRunsInReverseAndReportsEveryFailure(t *testing.T) {
	var order []string
	var c childproc.Cleanup
	c.Add(func() error { order = append(order, "first"); return errors.New("first failed") })
	c.Add(func() error { order = append(order, "second"); return nil })
	c.Add(func() error { order = append(order, "third"); return errors.New("third failed") })
	err := c.Run()
	if strings.Join(order, ",") != "third,second,first" {
		t.Errorf("order %v, want last registered first", order)
	}
	if err == nil || !strings.Contains(err.Error(), "first failed") || !strings.Contains(err.Error(), "third failed") {
		t.Errorf("error %v, want both failures", err)
	}
	if err := c.Run(); err != nil || len(order) != 3 {
		t.Errorf("second Run: %v, %d steps ran; want nothing left to run", err, len(order))
	}
}

func TestChildFirstLineLogAndStop(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "child.log")
	// The child ignores SIGTERM, so Stop must fall back to killing it.
	c, err := childproc.Start("sleeper", "/bin/sh", []string{"-c", `trap "" TERM; echo "hello $GREETING"; echo more; while :; do sleep 1; done`},
		[]string{"GREETING=world"}, logPath)
	if err != nil {
		t.Fatal(err)
	}
	line, err := c.FirstLine(context.Background(), 10*time.Second)
	if err != nil || line != "hello world" {
		t.Fatalf("FirstLine = %q, %v; want hello world", line, err)
	}
	if c.Exited() {
		t.Fatal("exited early")
	}
	if left := childproc.Leftover(); len(left) == 0 {
		t.Error("Leftover finds no child while one runs")
	}
	if err := c.Stop(200 * time.Millisecond); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Stop of a child that ignores SIGTERM: %v, want it reported as killed", err)
	}
	if !c.Exited() {
		t.Error("still running after Stop")
	}
	if err := c.Stop(200 * time.Millisecond); err != nil {
		t.Errorf("second Stop: %v, want nothing to do", err)
	}
	if left := childproc.Leftover(); len(left) != 0 {
		t.Errorf("left running: %v", left)
	}
	b, err := os.ReadFile(logPath)
	if err != nil || !strings.Contains(string(b), "hello world\nmore\n") {
		t.Errorf("log %q, %v; want the whole output", b, err)
	}
}

func TestFirstLineOfAChildThatPrintsNothing(t *testing.T) {
	c, err := childproc.Start("silent", "/bin/sh", []string{"-c", "exit 3"}, nil, filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Stop(time.Second) }()
	if _, err := c.FirstLine(context.Background(), 10*time.Second); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("FirstLine: %v, want the exit status", err)
	}
}

// startSleeper starts a copy of sleep from a bin directory of the test's
// own, so that Reap may signal it.
func startSleeper(t *testing.T) (bin string, c *childproc.Child) {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep on PATH")
	}
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(t.TempDir(), "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "sleep"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	c, err = childproc.Start("sleep", filepath.Join(bin, "sleep"), []string{"60"}, nil, filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop(time.Second) })
	return bin, c
}

func TestReapStopsWhatAKilledDriverLeft(t *testing.T) {
	bin, c := startSleeper(t)
	path := filepath.Join(t.TempDir(), "pids")
	// A driver pid that no longer runs, and one unrelated process (this
	// test) that must be left alone since it is not under bin.
	content := fmt.Sprintf("driver 999999999 /gone/driver\n%d\n%d\n", c.Pid(), os.Getpid())
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	stopped, err := childproc.PIDFile{Path: path, Bin: bin}.Reap()
	if err != nil || len(stopped) != 1 || !strings.HasSuffix(stopped[0], " sleep") {
		t.Fatalf("Reap = %v, %v; want the sleeper only", stopped, err)
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Error("the sleeper still runs")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("pid file kept: %v", err)
	}
}

func TestReapLeavesARunningDriverAlone(t *testing.T) {
	bin, driver := startSleeper(t) // stands in for a driver still running
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", driver.Pid()))
	if err != nil {
		t.Skip("no /proc")
	}
	path := filepath.Join(t.TempDir(), "pids")
	if err := os.WriteFile(path, []byte(fmt.Sprintf("driver %d %s\n%d\n", driver.Pid(), exe, driver.Pid())), 0o644); err != nil {
		t.Fatal(err)
	}
	stopped, err := childproc.PIDFile{Path: path, Bin: bin}.Reap()
	if err == nil || len(stopped) != 0 {
		t.Errorf("Reap = %v, %v; want an error and nothing stopped", stopped, err)
	}
	if driver.Exited() {
		t.Error("the running driver's process was stopped")
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("pid file of a running driver removed: %v", err)
	}
}

func TestRecordNamesTheDriverFirst(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pids")
	f := childproc.PIDFile{Path: path, Bin: t.TempDir()}
	if err := f.Record(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(string(b), fmt.Sprintf("driver %d ", os.Getpid())) {
		t.Errorf("pid file %q, %v; want the driver line first", b, err)
	}
	// The file of this very process is its own: reaping it never refuses.
	if _, err := f.Reap(); err != nil {
		t.Errorf("Reap of its own file: %v", err)
	}
}

func TestReapWithoutAPIDFileStopsNothing(t *testing.T) {
	stopped, err := childproc.PIDFile{Path: filepath.Join(t.TempDir(), "pids"), Bin: t.TempDir()}.Reap()
	if err != nil || len(stopped) != 0 {
		t.Errorf("Reap = %v, %v; want nothing stopped and no error", stopped, err)
	}
}

func TestReapReportsAPIDFileItCannotRead(t *testing.T) {
	// A directory where the file should be: it exists but cannot be read,
	// so whatever an earlier run left behind would go unnoticed.
	stopped, err := childproc.PIDFile{Path: t.TempDir(), Bin: t.TempDir()}.Reap()
	if err == nil || len(stopped) != 0 {
		t.Errorf("Reap = %v, %v; want an error and nothing stopped", stopped, err)
	}
}
