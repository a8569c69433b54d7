package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// TestMetricsEndpointAccess serves metrics as the manager does, against a
// real API server, and checks who gets in: over HTTPS only a caller whose
// token is allowed GET /metrics (the metrics-reader ClusterRole); over plain
// HTTP (--metrics-secure=false) anyone. The server checks tokens with the
// rights of config/rbac's metrics-auth-role alone.
func TestMetricsEndpointAccess(t *testing.T) {
	env := testenv.StartForTest(t)
	ctx := context.Background()
	// The server serves controller-runtime's registry, as in the manager.
	probe := prometheus.NewGauge(prometheus.GaugeOpts{Name: "access_test_probe", Help: "Shows the registry is served."})
	probe.Set(1)
	ctrlmetrics.Registry.MustRegister(probe)
	t.Cleanup(func() { ctrlmetrics.Registry.Unregister(probe) })
	const ns = "metrics-access"
	mustCreate(t, env.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})

	// The manager's identity, bound only to the metrics auth role.
	manager := serviceAccount(t, env.Client, ns, "manager")
	bindClusterRole(t, env.Client, "config/rbac/metrics_auth_role.yaml", manager)
	managerConfig := rest.CopyConfig(env.Config)
	managerConfig.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":manager"}

	reader := serviceAccount(t, env.Client, ns, "prometheus")
	bindClusterRole(t, env.Client, "config/rbac/metrics_reader_role.yaml", reader)
	stranger := serviceAccount(t, env.Client, ns, "stranger")

	for _, tt := range []struct {
		name   string
		secure bool
		token  string
		want   int
	}{
		{"https, no token", true, "", http.StatusUnauthorized},
		// controller-runtime's filter answers 500 when the TokenReview
		// carries an error, as it does for a malformed token: refused
		// all the same.
		{"https, a token the API server does not know", true, "not-a-token", http.StatusInternalServerError},
		{"https, a ServiceAccount without metrics-reader", true, token(ctx, t, env.Client, stranger), http.StatusForbidden},
		{"https, a ServiceAccount with metrics-reader", true, token(ctx, t, env.Client, reader), http.StatusOK},
		{"plain http (--metrics-secure=false), no token", false, "", http.StatusOK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url := serveMetrics(t, managerConfig, metricsOptions{addr: "127.0.0.1:0", secure: tt.secure})
			got, body := get(t, url, tt.token)
			if got != tt.want {
				t.Fatalf("GET %s: %d, want %d\n%s", url, got, tt.want, body)
			}
			if got == http.StatusOK && !strings.Contains(body, "access_test_probe 1") {
				t.Errorf("GET %s answered 200 without the registry's metrics:\n%.500s", url, body)
			}
		})
	}
}

// serveMetrics starts a metrics server with the manager's options on a free
// loopback port, serving a registry with one known metric.
func serveMetrics(t *testing.T, cfg *rest.Config, mc metricsOptions) string {
	t.Helper()
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := metricsserver.NewServer(metricsServerOptions(mc), cfg, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("metrics server: %v", err)
		}
	})
	addrOf, ok := srv.(interface{ GetBindAddr() string })
	if !ok {
		t.Fatal("the metrics server does not tell its address")
	}
	deadline := time.Now().Add(10 * time.Second)
	for addrOf.GetBindAddr() == "" {
		if time.Now().After(deadline) {
			t.Fatal("the metrics server did not listen within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	scheme := "http"
	if mc.secure {
		scheme = "https"
	}
	return fmt.Sprintf("%s://%s/metrics", scheme, addrOf.GetBindAddr())
}

func get(t *testing.T, url, token string) (code int, body string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	// The server's certificate is self-signed, as on a cluster without
	// --metrics-cert-dir.
	hc := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func mustCreate(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func serviceAccount(t *testing.T, c client.Client, ns, name string) *corev1.ServiceAccount {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	mustCreate(t, c, sa)
	return sa
}

func token(ctx context.Context, t *testing.T, c client.Client, sa *corev1.ServiceAccount) string {
	t.Helper()
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(600))}}
	if err := c.SubResource("token").Create(ctx, sa, req); err != nil {
		t.Fatalf("requesting a token of %s: %v", sa.Name, err)
	}
	return req.Status.Token
}

// bindClusterRole creates the ClusterRole of a file of config/rbac, under a
// name of its own, and binds it to sa.
func bindClusterRole(t *testing.T, c client.Client, rel string, sa *corev1.ServiceAccount) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), rel))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(b, &role); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	role.Name = sa.Name + "-" + role.Name
	mustCreate(t, c, &role)
	mustCreate(t, c, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}},
	})
}
