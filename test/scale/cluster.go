package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// controlPlane is envtest's kube-apiserver and etcd with the CRD installed,
// and a client that is not rate limited, so that creating a thousand watches
// measures the API server and not the harness.
type controlPlane struct {
	env    *testenv.Env
	cfg    *rest.Config
	client client.WithWatch
	scheme *runtime.Scheme
}

func startControlPlane(p paths) (*controlPlane, error) {
	env, err := testenv.StartWith(testenv.Options{Assets: p.k8s, CRDs: p.crds, StartTimeout: 2 * time.Minute, Unlimited: true})
	if err != nil {
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	return &controlPlane{env: env, cfg: env.Config, client: env.WatchClient, scheme: env.Scheme}, nil
}

// writeAdminKubeconfig writes a kubeconfig of a cluster admin for the
// manager. The manager's RBAC is not what is measured here; the demo checks
// it.
func (cp *controlPlane) writeAdminKubeconfig(path string) error {
	return cp.env.WriteKubeconfig(envtest.User{Name: "scale-manager", Groups: []string{"system:masters"}}, path)
}

func (cp *controlPlane) stop() error { return cp.env.Stop() }

// tenant is one namespace with its own management key and alert token, in
// Secrets named mgmt and alerts.
type tenant struct {
	namespace string
	key       keyPair
	token     string
}

// keyPair is a management key; a type of the harness so that scenarios
// read as what they create.
type keyPair struct{ id, secret string }

const (
	mgmtSecretName  = "mgmt"
	alertSecretName = "alerts"
)

// createTenant creates the namespace and its two Secrets.
func (cp *controlPlane) createTenant(ctx context.Context, t tenant) error {
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: t.namespace}},
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: mgmtSecretName},
			StringData: map[string]string{swv1.KeyIDKey: t.key.id, swv1.KeySecretKey: t.key.secret},
		},
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: alertSecretName},
			StringData: map[string]string{swv1.TokenKey: t.token},
		},
	}
	for _, o := range objs {
		if err := cp.client.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}

// touchSecret changes a Secret's metadata only, as rotating tools and
// GitOps re-applies do: every watch that uses it sees a new version.
func (cp *controlPlane) touchSecret(ctx context.Context, namespace, name string) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"scale.servicewatch.io/touched":%q}}}`, time.Now().Format(time.RFC3339Nano))
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := cp.client.Patch(ctx, s, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return fmt.Errorf("touching Secret %s/%s: %w", namespace, name, err)
	}
	return nil
}

// watchSpec is what the watches of one batch have in common.
type watchSpec struct {
	serviceID string
	alertIDs  []string
	interval  time.Duration
	labels    map[string]string
}

// newWatch builds the ServiceWatch name of tenant t.
func newWatch(t tenant, name string, s watchSpec) *swv1.ServiceWatch {
	w := &swv1.ServiceWatch{
		ObjectMeta: metav1.ObjectMeta{Namespace: t.namespace, Name: name, Labels: s.labels},
		Spec: swv1.ServiceWatchSpec{
			OrganizationID: defaultOrg,
			ServiceID:      s.serviceID,
			AlertIDs:       s.alertIDs,
			Interval:       metav1.Duration{Duration: s.interval},
			ManagementAPI:  swv1.ManagementAPISpec{SecretRef: swv1.SecretReference{Name: mgmtSecretName}},
		},
	}
	if len(s.alertIDs) > 0 {
		w.Spec.AlertAPI = &swv1.AlertAPISpec{SecretRef: swv1.SecretReference{Name: alertSecretName}}
	}
	return w
}

// createWatches creates watches concurrently, as a GitOps tool applying a
// directory would.
func (cp *controlPlane) createWatches(ctx context.Context, watches []*swv1.ServiceWatch) error {
	objs := make([]client.Object, len(watches))
	for i, w := range watches {
		objs[i] = w
	}
	return cp.createAll(ctx, objs)
}

// createAll creates objects with 16 clients at once.
func (cp *controlPlane) createAll(ctx context.Context, objs []client.Object) error {
	const workers = 16
	next := make(chan client.Object)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for o := range next {
				if err := cp.client.Create(ctx, o); err != nil {
					errs <- fmt.Errorf("creating %T %s/%s: %w", o, o.GetNamespace(), o.GetName(), err)
					return
				}
			}
		})
	}
	var err error
feed:
	for _, o := range objs {
		select {
		case next <- o:
		case err = <-errs:
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	if err == nil {
		err = <-errs
	}
	return err
}

// createUnrelatedSecrets creates n Secrets of 1 KiB in a namespace of their
// own, which no watch references: what a busy cluster has besides the
// watches' own.
func (cp *controlPlane) createUnrelatedSecrets(ctx context.Context, namespace string, n int) error {
	if err := cp.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	payload := strings.Repeat("x", 1024)
	objs := make([]client.Object, n)
	for i := range objs {
		objs[i] = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("unrelated-%05d", i)},
			StringData: map[string]string{"data": payload},
		}
	}
	return cp.createAll(ctx, objs)
}
