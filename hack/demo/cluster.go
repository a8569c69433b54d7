package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/testsupport/childproc"
	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

type serviceWatch = swv1.ServiceWatch

const (
	requestedAtAnnotation = swv1.RequestedAtAnnotation
	// managerUser is who the manager authenticates as. It is granted only
	// config/rbac/role.yaml, so the demo fails if the generated RBAC misses a
	// permission the manager needs.
	managerUser = "servicewatch-manager"
)

// controlPlane is envtest's kube-apiserver and etcd, with an admin client.
type controlPlane struct {
	env    *testenv.Env
	cfg    *rest.Config
	client client.Client
	files  []string // kubeconfigs to remove on stop
}

func startControlPlane(p paths) (*controlPlane, error) {
	env, err := testenv.StartWith(testenv.Options{Assets: p.k8s, CRDs: p.crds})
	if err != nil {
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	cp := &controlPlane{env: env, cfg: env.Config, client: env.Client}
	if err := cp.setUp(p); err != nil {
		return nil, errors.Join(err, cp.stop())
	}
	return cp, nil
}

func (cp *controlPlane) setUp(p paths) error {
	if err := cp.writeKubeconfig(envtest.User{Name: "demo-admin", Groups: []string{"system:masters"}}, p.kubeconfig); err != nil {
		return err
	}
	if err := cp.grantManagerRole(p.role); err != nil {
		return err
	}
	return cp.writeKubeconfig(envtest.User{Name: managerUser}, p.managerKubeconfig)
}

func (cp *controlPlane) writeKubeconfig(u envtest.User, path string) error {
	cp.files = append(cp.files, path)
	return cp.env.WriteKubeconfig(u, path)
}

// grantManagerRole installs the generated ClusterRole and binds it to the
// manager's user, as config/rbac does for the manager's ServiceAccount.
func (cp *controlPlane) grantManagerRole(rolePath string) error {
	b, err := os.ReadFile(rolePath)
	if err != nil {
		return err
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(b, &role); err != nil {
		return fmt.Errorf("%s: %w", rolePath, err)
	}
	ctx := context.Background()
	if err := cp.client.Create(ctx, &role); err != nil {
		return fmt.Errorf("creating ClusterRole %s: %w", role.Name, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "servicewatch-manager"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: managerUser}},
	}
	return cp.client.Create(ctx, binding)
}

func (cp *controlPlane) stop() error {
	for _, f := range cp.files {
		_ = os.Remove(f)
	}
	return cp.env.Stop()
}

// createSamples creates the namespace, the sample Secrets with the fake
// cloud's credentials in place of the placeholders, and the sample
// ServiceWatch as it is committed.
func (cp *controlPlane) createSamples(ctx context.Context, p paths, namespace string, data fakecloud.Data) (*serviceWatch, error) {
	if err := cp.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return nil, err
	}
	secrets, err := readSecrets(p.sampleSecrets)
	if err != nil {
		return nil, err
	}
	values := map[string]string{
		swv1.KeyIDKey:     data.ManagementKey.KeyID,
		swv1.KeySecretKey: data.ManagementKey.KeySecret,
		swv1.TokenKey:     data.AlertToken,
	}
	for i := range secrets {
		s := &secrets[i]
		s.Namespace = namespace
		for k := range s.StringData {
			v, ok := values[k]
			if !ok {
				return nil, fmt.Errorf("%s: Secret %s has key %q, which the demo has no value for", p.sampleSecrets, s.Name, k)
			}
			s.StringData[k] = v
		}
		if err := cp.client.Create(ctx, s); err != nil {
			return nil, fmt.Errorf("creating Secret %s: %w", s.Name, err)
		}
	}
	return cp.createWatch(ctx, p.sampleWatch, namespace)
}

// createWatch creates the ServiceWatch of the file path, as it is
// committed, in namespace.
func (cp *controlPlane) createWatch(ctx context.Context, path, namespace string) (*serviceWatch, error) {
	watch, err := readWatch(path)
	if err != nil {
		return nil, err
	}
	watch.Namespace = namespace
	if err := cp.client.Create(ctx, watch); err != nil {
		return nil, fmt.Errorf("creating ServiceWatch %s: %w", watch.Name, err)
	}
	return watch, nil
}

func readSecrets(path string) ([]corev1.Secret, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var secrets []corev1.Secret
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		var s corev1.Secret
		if err := dec.Decode(&s); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if s.Name != "" {
			secrets = append(secrets, s)
		}
	}
	return secrets, nil
}

func readWatch(path string) (*serviceWatch, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var w serviceWatch
	if err := yaml.UnmarshalStrict(b, &w); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &w, nil
}

// awaitReady polls the watch until Ready is True for its current generation,
// printing a line whenever what it waits on changes, and every 10 seconds.
func (cp *controlPlane) awaitReady(ctx context.Context, p *progress, w *serviceWatch, mgr *childproc.Child, timeout time.Duration) (*serviceWatch, error) {
	deadline := time.Now().Add(timeout)
	var last string
	lastSaid := time.Now()
	for {
		var cur serviceWatch
		if err := cp.client.Get(ctx, client.ObjectKeyFromObject(w), &cur); err != nil {
			return nil, err
		}
		if cur.IsReady() {
			return &cur, nil
		}
		state := waitingOn(&cur)
		if state != last || time.Since(lastSaid) >= 10*time.Second {
			p.sayf("  ... %s", state)
			last, lastSaid = state, time.Now()
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("ServiceWatch %s/%s not Ready after %s: %s", cur.Namespace, cur.Name, timeout, state)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-mgr.Done():
			return nil, exitedError("the manager", mgr)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// waitingOn says in one line what the watch's status shows so far.
func waitingOn(w *serviceWatch) string {
	if len(w.Status.Conditions) == 0 {
		return "no status yet: waiting for the manager to pick it up"
	}
	var parts []string
	for _, t := range []string{swv1.ConditionReconciling, swv1.ConditionStalled, swv1.ConditionReady} {
		if c := meta.FindStatusCondition(w.Status.Conditions, t); c != nil {
			parts = append(parts, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
		}
	}
	return strings.Join(parts, ", ")
}

// exitedError says that a child the demo still needed has exited, with its
// exit status; a clean exit (nil Err) is a failure too.
func exitedError(what string, c *childproc.Child) error {
	if err := c.Err(); err != nil {
		return fmt.Errorf("%s exited: %w", what, err)
	}
	return fmt.Errorf("%s exited: exit status 0", what)
}
