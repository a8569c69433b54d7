package controller_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// countingReader counts the Secrets read through it from the API server.
type countingReader struct {
	client.Reader
	secretGets atomic.Int32
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Secret); ok {
		c.secretGets.Add(1)
	}
	return c.Reader.Get(ctx, key, obj, opts...)
}

// A sync that waits for room in its budget asks again by its credentials'
// digests: its Secrets are read once before the first ask and once more when
// it is admitted, however often it was told to wait, and again only when a
// Secret changes.
func TestAWaitingSyncReadsItsSecretsOnce(t *testing.T) {
	f := newFixture(t)
	f.createSecrets()
	w := f.newWatch("waiting", "alert-1")
	syncMetrics, err := metrics.NewSync(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	reader := &countingReader{Reader: env.Client}
	cloud := &refusingCloud{refuse: true}
	r := controller.NewTestReconciler(t.Context(), env.Client, reader, cloud, cloud, syncMetrics)
	start := func() time.Duration { return r.StartSync(f.ctx, w) }

	for i := range 5 {
		if wait := start(); wait != 5*time.Second {
			t.Fatalf("ask %d: the sync waits %v, want the budget's 5s", i, wait)
		}
	}
	if got := reader.secretGets.Load(); got != 2 {
		t.Errorf("5 asks read %d Secrets, want 2 (each of the two once)", got)
	}
	cloud.refuse = false
	if wait := start(); wait != 0 {
		t.Fatalf("admitted, the sync still waits %v", wait)
	}
	if got := reader.secretGets.Load(); got != 4 {
		t.Errorf("after admission %d Secret reads, want 4: the credentials are read once more to call", got)
	}

	// A changed Secret is read again: its digest at the new version is unknown.
	cloud.refuse = true
	secret := f.managementSecret()
	if err := env.Client.Get(f.ctx, client.ObjectKeyFromObject(secret), secret); err != nil {
		t.Fatal(err)
	}
	secret.StringData = map[string]string{"keyId": f.keyID, "keySecret": f.keySecret + "-rotated"}
	if err := env.Client.Update(f.ctx, secret); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		start()
	}
	if got := reader.secretGets.Load(); got != 5 {
		t.Errorf("after the management Secret changed, %d Secret reads, want 5", got)
	}
}

// refusingCloud's budget refuses every call while refuse is set; its
// service has nothing in it.
type refusingCloud struct {
	refuse bool
}

func (c *refusingCloud) ListPipes(context.Context, string, cloudapi.BasicCredentials, string, string, cloudapi.ListOptions[swv1.Pipe]) (cloudapi.List[swv1.Pipe], error) {
	return cloudapi.List[swv1.Pipe]{}, nil
}

func (c *refusingCloud) ListReversePrivateEndpoints(context.Context, string, cloudapi.BasicCredentials, string, string, cloudapi.ListOptions[swv1.ReversePrivateEndpoint]) (cloudapi.List[swv1.ReversePrivateEndpoint], error) {
	return cloudapi.List[swv1.ReversePrivateEndpoint]{}, nil
}

func (c *refusingCloud) GetAlertFrom(context.Context, cloudapi.AlertSource, string) (cloudapi.AlertResult, error) {
	return cloudapi.AlertResult{}, nil
}

func (c *refusingCloud) ListAlerts(context.Context, cloudapi.AlertSource, cloudapi.AlertPageRequest) (cloudapi.AlertPage, error) {
	return cloudapi.AlertPage{}, cloudapi.ErrNoListRoute
}

func (c *refusingCloud) Admit(string, string, ratebudget.CredentialID, int) time.Duration {
	if c.refuse {
		return 5 * time.Second
	}
	return 0
}

func (c *refusingCloud) MaxBatch(string) int { return 0 }

func (c *refusingCloud) Allowance(string, string) float64 { return 1 }

func (c *refusingCloud) Hold(string, string, ratebudget.CredentialID, time.Time) {}
