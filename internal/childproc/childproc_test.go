package childproc_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/childproc"
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
	defer c.Stop(time.Second)
	if _, err := c.FirstLine(context.Background(), 10*time.Second); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("FirstLine: %v, want the exit status", err)
	}
}
