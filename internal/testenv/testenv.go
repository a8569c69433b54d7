// Package testenv starts a real kube-apiserver and etcd (controller-runtime's
// envtest) with the ServiceWatch CRD installed, for the project's tests.
//
// The binaries come from bin/k8s, where `make envtest` builds them from Go
// modules; KUBEBUILDER_ASSETS overrides that location.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/servicewatch/servicewatch/internal/controller"
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
}

// RepoRoot is the root of this repository, found from this file's location so
// that tests work from any package directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Start starts kube-apiserver and etcd and installs the CRDs of config/crd/bases.
func Start() (*Env, error) {
	assets, err := binaryAssets()
	if err != nil {
		return nil, err
	}
	scheme, err := controller.NewScheme()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(), "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting envtest from %s: %w", assets, err)
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("creating client: %w", err)
	}
	return &Env{Config: cfg, Client: c, WatchClient: c, Scheme: scheme, env: env}, nil
}

// Stop stops the control plane.
func (e *Env) Stop() error {
	return e.env.Stop()
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
