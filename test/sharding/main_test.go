// Package sharding tests the manager as users shard it: several managers in
// one cluster, each syncing the ServiceWatches its label selector matches and
// holding a leader-election lease of its own, and a standby that takes over a
// shard when its leader crashes. The managers run in-process, with the real
// cloud client, against a control plane (kube-apiserver and etcd) and fake
// clouds of this package's own, so the controller suite is not disturbed.
package sharding

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// env is the control plane every test of the package shares; tests keep
// apart by namespace.
var env *testenv.Env

// TestMain runs the tests against one control plane; under -short they skip.
func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, func(e *testenv.Env) (int, error) { return run(m, e) }))
}

func run(m *testing.M, e *testenv.Env) (int, error) {
	env = e
	// The managers log to a buffer, printed only when a test failed: leader
	// election and reconciles are what explains a failure here.
	processLog := &testenv.LockedBuffer{}
	logger := zap.New(zap.WriteTo(processLog), zap.UseDevMode(true), zap.Level(zapcore.DebugLevel))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger.WithName("klog")) // client-go's leader election logs through klog

	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "--- the managers' log (last %d lines):\n%s\n", logTail, lastLines(processLog.String(), logTail))
	}
	return code, nil
}

// logTail is how much of the managers' log a failure prints.
const logTail = 300

func lastLines(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
