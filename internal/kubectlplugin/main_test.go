package kubectlplugin

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// update rewrites the golden files with what the commands print now.
var update = flag.Bool("update", false, "rewrite testdata/*.golden with the commands' output")

// env is the control plane the envtest tests share, and kubeconfig the file
// through which the plugin reaches it, as a user's kubectl would. Both are
// nil under -short.
var (
	env        *testenv.Env
	kubeconfig string
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, func(e *testenv.Env) (int, error) {
		dir, err := os.MkdirTemp("", "kubectlplugin")
		if err != nil {
			return 0, err
		}
		defer func() { _ = os.RemoveAll(dir) }()
		kubeconfig = filepath.Join(dir, "kubeconfig")
		if err := e.WriteKubeconfig(envtest.User{Name: "plugin-user", Groups: []string{"system:masters"}}, kubeconfig); err != nil {
			return 0, err
		}
		if err := setupFixtures(context.Background(), e.Client); err != nil {
			return 0, err
		}
		env = e
		return m.Run(), nil
	}))
}

// needEnv skips a test that needs the API server under -short.
func needEnv(t *testing.T) {
	t.Helper()
	if env == nil {
		t.Skip("needs envtest (runs without -short)")
	}
}

// result is what one run of the plugin printed and returned.
type result struct {
	stdout, stderr string
	code           int
}

// runPlugin runs the plugin as `kubectl servicewatch args...` against the
// test's API server, with time standing at clk, and returns what it printed.
func runPlugin(ctx context.Context, clk clock.WithTicker, args ...string) result {
	var out, errOut testenv.LockedBuffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	code := run(ctx, append([]string{"--kubeconfig", kubeconfig}, args...), streams, clk, zeros{})
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// zeros is the tests' random source: every request value's random part
// is 0000000000000000 (requestToken).
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// requestToken is the value sync sets at the tests' time (now) with zeros.
const requestToken = "2026-11-26T12:00:00Z-0000000000000000"

// runAsync starts runPlugin and returns a channel of its result.
func runAsync(ctx context.Context, clk clock.WithTicker, args ...string) <-chan result {
	done := make(chan result, 1)
	go func() { done <- runPlugin(ctx, clk, args...) }()
	return done
}

// testContext bounds a test that waits for the plugin, so that a plugin
// that never returns fails the test instead of hanging the run.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// golden compares got with testdata/name.golden, or writes it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run with -update to accept it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
