//go:build e2e

// Package e2e tests the operator as its users run it: the image, the
// manifests of config/ and the Helm chart, applied with kubectl and helm to a
// real one-node cluster, with the fake cloud running as a Pod. It needs that
// cluster: `make test-e2e` builds it, runs these tests and tears it down.
// Without the e2e build tag (plain `go test ./...`, `make test`) the package
// is empty.
//
// Everything is done through kubectl and helm, and judged by what they show,
// because that is what a user sees.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// env is what hack/e2e/run.sh tells the tests about the cluster.
type env struct {
	kubectl, helm, repo string
	podCIDR, extIf      string
	egressComment       string
}

var e2eEnv env

func TestMain(m *testing.M) {
	e2eEnv = env{
		kubectl:       os.Getenv("E2E_KUBECTL"),
		helm:          os.Getenv("HELM"),
		repo:          os.Getenv("E2E_REPO"),
		podCIDR:       os.Getenv("E2E_POD_CIDR"),
		extIf:         os.Getenv("E2E_EXT_IF"),
		egressComment: os.Getenv("E2E_EGRESS_COMMENT"),
	}
	if e2eEnv.kubectl == "" || os.Getenv("KUBECONFIG") == "" || e2eEnv.repo == "" {
		fmt.Fprintln(os.Stderr, "test/e2e needs the cluster of `make test-e2e` (E2E_KUBECTL, KUBECONFIG, E2E_REPO unset)")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

const (
	// Images imported into the node by hack/e2e/cluster.sh. The manager's is
	// config/manager's default (servicewatch:dev), so config/default applies
	// as committed.
	fakeCloudImage = "localhost/servicewatch-e2e/fakecloud:e2e"

	systemNamespace = "servicewatch-system"
	metricsService  = "servicewatch-controller-manager-metrics-service"
	metricsReader   = "servicewatch-metrics-reader"
)

// run runs a command and returns its standard output; a failure carries the
// command and its standard error.
func run(ctx context.Context, stdin, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = e2eEnv.repo
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", filepath.Base(name), strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// kubectl runs kubectl and fails the test if it fails.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := kubectlErr(t, "", args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// kubectlErr runs kubectl with stdin and returns its error.
func kubectlErr(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	// Not t.Context(): that is canceled before the test's cleanups run,
	// and cleanups uninstall with kubectl and helm.
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	return run(ctx, stdin, e2eEnv.kubectl, args...)
}

// apply server-side applies YAML.
func apply(t *testing.T, yaml string) {
	t.Helper()
	if _, err := kubectlErr(t, yaml, "apply", "--server-side", "--force-conflicts", "-f", "-"); err != nil {
		t.Fatal(err)
	}
}

func helm(t *testing.T, args ...string) string {
	t.Helper()
	out, err := helmErr(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func helmErr(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return run(ctx, "", e2eEnv.helm, args...)
}

// cleanup runs f at the end of the test and reports its error.
func cleanup(t *testing.T, what string, f func() error) {
	t.Cleanup(func() {
		if err := f(); err != nil {
			t.Errorf("cleanup, %s: %v", what, err)
		}
	})
}

// eventually polls f every half second until it returns nil or timeout
// passes, then fails the test with f's last error.
func eventually(t *testing.T, timeout time.Duration, what string, f func() error) {
	t.Helper()
	if err := pollUntil(t, timeout, f); err != nil {
		t.Fatalf("%s: not after %s: %v", what, timeout, err)
	}
}

// pollUntil asks f every half second until it returns nil or timeout
// passes, and returns f's last error.
func pollUntil(t *testing.T, timeout time.Duration, f func() error) error {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-t.Context().Done():
			return t.Context().Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// getJSON decodes `kubectl get ... -o json` into v.
func getJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	out := kubectl(t, append([]string{"get", "-o", "json"}, args...)...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("kubectl get %v: %v", args, err)
	}
}

// restrictedNamespace creates a namespace that enforces the restricted Pod
// Security Standard, deleted at the end of the test.
func restrictedNamespace(t *testing.T, name string) {
	t.Helper()
	apply(t, fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %s
  labels:
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/enforce-version: latest
`, name))
	t.Cleanup(func() { deleteNamespace(t, name) })
	// Pods are admitted once the namespace's default ServiceAccount exists.
	eventually(t, 30*time.Second, "namespace "+name+" has its default ServiceAccount", func() error {
		_, err := kubectlErr(t, "", "get", "serviceaccount", "-n", name, "default")
		return err
	})
}

func deleteNamespace(t *testing.T, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := run(ctx, "", e2eEnv.kubectl, "delete", "namespace", name, "--ignore-not-found", "--wait=true"); err != nil {
		t.Errorf("deleting namespace %s: %v", name, err)
	}
}

// dumpOnFailure logs what a user would look at when a test fails: the
// Pods, events and the manager's log.
func dumpOnFailure(t *testing.T, namespaces ...string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, ns := range namespaces {
			for _, args := range [][]string{
				{"get", "pods,deploy,sw", "-o", "wide", "-n", ns},
				{"get", "events", "-n", ns, "--sort-by=.lastTimestamp"},
				{"logs", "-n", ns, "-l", "app.kubernetes.io/component=manager", "--tail=60", "--prefix"},
			} {
				out, err := run(ctx, "", e2eEnv.kubectl, args...)
				t.Logf("kubectl %s:\n%s%v", strings.Join(args, " "), out, errOrEmpty(err))
			}
		}
	})
}

func errOrEmpty(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
