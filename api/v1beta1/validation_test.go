package v1beta1_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

var env *testenv.Env

// TestMain runs the tests against one control plane; under -short those that
// need it skip.
func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, func(e *testenv.Env) (int, error) {
		env = e
		return m.Run(), nil
	}))
}

const (
	orgID     = "7f0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d"
	serviceID = "4e2c6a1b-9d8f-4c3b-a2e1-0f9e8d7c6b5a"
)

// createValidWatch creates validWatch(name) in the control plane; under
// -short, where there is none, it skips the test.
func createValidWatch(t *testing.T, name string) *swv1.ServiceWatch {
	t.Helper()
	testenv.SkipShort(t)
	w := validWatch(name)
	if err := env.Client.Create(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	return w
}

// validWatch is the design document's full example.
func validWatch(name string) *swv1.ServiceWatch {
	return &swv1.ServiceWatch{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: swv1.ServiceWatchSpec{
			OrganizationID: orgID,
			ServiceID:      serviceID,
			AlertIDs:       []string{"65f1a2b3c4d5e6f708192a3b"},
			Interval:       metav1.Duration{Duration: 5 * time.Minute},
			ManagementAPI: swv1.ManagementAPISpec{
				URL:       "https://api.example.com",
				SecretRef: swv1.SecretReference{Name: "warehouse-api-key"},
			},
			AlertAPI: &swv1.AlertAPISpec{
				URL:       "https://alerts.example.com",
				SecretRef: swv1.SecretReference{Name: "alerts-token"},
			},
		},
	}
}

func TestCreateRejectsBadInput(t *testing.T) {
	testenv.SkipShort(t)
	tooMany := make([]string, 101)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("alert-%d", i)
	}
	tests := []struct {
		name   string
		mutate func(*swv1.ServiceWatch)
		// want are substrings of the API server's message; the first one
		// names the field so the user knows what to fix.
		want []string
	}{
		{"organizationId not a UUID", func(w *swv1.ServiceWatch) { w.Spec.OrganizationID = "acme" }, []string{"spec.organizationId", "should match"}},
		{"serviceId not a UUID", func(w *swv1.ServiceWatch) { w.Spec.ServiceID = "4e2c6a1b-9d8f-4c3b-a2e1-0f9e8d7c6b5" }, []string{"spec.serviceId", "should match"}},
		{"organizationId missing", func(w *swv1.ServiceWatch) { w.Spec.OrganizationID = "" }, []string{"spec.organizationId"}},
		{"duplicated alert ID", func(w *swv1.ServiceWatch) { w.Spec.AlertIDs = []string{"a1", "a2", "a1"} }, []string{"spec.alertIds[2]", "Duplicate value"}},
		{"more than 100 alert IDs", func(w *swv1.ServiceWatch) { w.Spec.AlertIDs = tooMany }, []string{"spec.alertIds", "must have at most 100 items"}},
		{"empty alert ID", func(w *swv1.ServiceWatch) { w.Spec.AlertIDs = []string{""} }, []string{"spec.alertIds[0]", "at least 1 chars long"}},
		{"alert ID over 128 characters", func(w *swv1.ServiceWatch) { w.Spec.AlertIDs = []string{strings.Repeat("x", 129)} }, []string{"spec.alertIds[0]", "may not be more than 128"}},
		{"interval under 30s", func(w *swv1.ServiceWatch) { w.Spec.Interval = metav1.Duration{Duration: 10 * time.Second} }, []string{"spec.interval", "interval must be at least 30s"}},
		{"interval of 29.9s", func(w *swv1.ServiceWatch) { w.Spec.Interval = metav1.Duration{Duration: 29900 * time.Millisecond} }, []string{"spec.interval", "at least 30s"}},
		{"interval over 24h", func(w *swv1.ServiceWatch) { w.Spec.Interval = metav1.Duration{Duration: 24*time.Hour + time.Second} }, []string{"spec.interval", "interval must be at most 24h"}},
		{"interval of 2562047h", func(w *swv1.ServiceWatch) { w.Spec.Interval = metav1.Duration{Duration: 2562047 * time.Hour} }, []string{"spec.interval", "at most 24h"}},
		{"alertIds without alertApi", func(w *swv1.ServiceWatch) { w.Spec.AlertAPI = nil }, []string{"spec.alertApi", "required when spec.alertIds is not empty"}},
		{"alertSelector without alertApi", func(w *swv1.ServiceWatch) {
			w.Spec.AlertIDs, w.Spec.AlertAPI, w.Spec.AlertSelector = nil, nil, &swv1.AlertSelector{Name: "prod-*"}
		}, []string{"spec.alertApi", "spec.alertsFrom: ManagementAPI"}},
		{"alertApi with alertsFrom ManagementAPI", func(w *swv1.ServiceWatch) { w.Spec.AlertsFrom = swv1.AlertsFromManagementAPI }, []string{"spec.alertApi", "not used when spec.alertsFrom is ManagementAPI"}},
		{"all on the alert API", func(w *swv1.ServiceWatch) { w.Spec.AlertSelector = &swv1.AlertSelector{All: true} }, []string{"spec.alertSelector.all", "needs spec.alertsFrom: ManagementAPI"}},
		{"empty alertSelector", func(w *swv1.ServiceWatch) { w.Spec.AlertSelector = &swv1.AlertSelector{} }, []string{"spec.alertSelector", "needs all: true, a name or tags"}},
		{"all with a name", func(w *swv1.ServiceWatch) {
			w.Spec.AlertsFrom, w.Spec.AlertAPI = swv1.AlertsFromManagementAPI, nil
			w.Spec.AlertSelector = &swv1.AlertSelector{All: true, Name: "x*"}
		}, []string{"spec.alertSelector", "leave out name and tags"}},
		{"unknown alertsFrom", func(w *swv1.ServiceWatch) { w.Spec.AlertsFrom = "Elsewhere" }, []string{"spec.alertsFrom", "Unsupported value"}},
		{"selector name over 256 characters", func(w *swv1.ServiceWatch) { w.Spec.AlertSelector = &swv1.AlertSelector{Name: strings.Repeat("x", 257)} }, []string{"spec.alertSelector.name", "may not be more than 256"}},
		{"management URL not http(s)", func(w *swv1.ServiceWatch) { w.Spec.ManagementAPI.URL = "ftp://api.example.com" }, []string{"spec.managementApi.url", "http:// or https://"}},
		{"management URL not a URL", func(w *swv1.ServiceWatch) { w.Spec.ManagementAPI.URL = "api.example.com" }, []string{"spec.managementApi.url", "http:// or https://"}},
		{"alert URL without host", func(w *swv1.ServiceWatch) { w.Spec.AlertAPI.URL = "https://" }, []string{"spec.alertApi.url", "http:// or https://"}},
		{"management secret name invalid", func(w *swv1.ServiceWatch) { w.Spec.ManagementAPI.SecretRef.Name = "Warehouse_Key" }, []string{"spec.managementApi.secretRef.name", "should match"}},
		// An empty secretRef is left out (omitzero): the watch then names
		// neither a Secret nor an account.
		{"management secret name missing", func(w *swv1.ServiceWatch) { w.Spec.ManagementAPI.SecretRef.Name = "" }, []string{"spec.managementApi.secretRef"}},
		{"alert secret name too long", func(w *swv1.ServiceWatch) { w.Spec.AlertAPI.SecretRef.Name = strings.Repeat("a", 254) }, []string{"spec.alertApi.secretRef.name", "may not be more than 253"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := validWatch(fmt.Sprintf("bad-%d", i))
			tt.mutate(w)
			err := env.Client.Create(context.Background(), w)
			if err == nil {
				t.Fatalf("the API server accepted %s", tt.name)
			}
			if !apierrors.IsInvalid(err) {
				t.Fatalf("want an Invalid error, got %v", err)
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q does not mention %q", err.Error(), want)
				}
			}
		})
	}
}

// An interval a Go duration cannot hold, or a long string of digits, is
// rejected too, with the field named, whatever CEL makes of it.
func TestCreateRejectsIntervalsPastTheDurationRange(t *testing.T) {
	testenv.SkipShort(t)
	for i, interval := range []string{"2562048h", "99999999999999999999h", strings.Repeat("1h", 20)} {
		obj := map[string]any{
			"apiVersion": "cloud.servicewatch.io/v1beta1",
			"kind":       "ServiceWatch",
			"metadata":   map[string]any{"name": fmt.Sprintf("huge-interval-%d", i), "namespace": "default"},
			"spec": map[string]any{"organizationId": orgID, "serviceId": serviceID, "interval": interval,
				"managementApi": map[string]any{"secretRef": map[string]any{"name": "key"}}},
		}
		err := env.Client.Create(context.Background(), unstructuredFrom(obj))
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.interval") {
			t.Errorf("interval %q: want an Invalid error naming spec.interval, got %v", interval, err)
		}
	}
	// The largest interval allowed is accepted.
	w := validWatch("interval-24h")
	w.Spec.Interval = metav1.Duration{Duration: 24 * time.Hour}
	if err := env.Client.Create(context.Background(), w); err != nil {
		t.Errorf("an interval of 24h was rejected: %v", err)
	}
}

func TestCreateRejectsMissingManagementAPI(t *testing.T) {
	testenv.SkipShort(t)
	// Built as raw JSON because the Go type always serializes managementApi.
	obj := map[string]any{
		"apiVersion": "cloud.servicewatch.io/v1beta1",
		"kind":       "ServiceWatch",
		"metadata":   map[string]any{"name": "no-management-api", "namespace": "default"},
		"spec":       map[string]any{"organizationId": orgID, "serviceId": serviceID},
	}
	u := unstructuredFrom(obj)
	err := env.Client.Create(context.Background(), u)
	if err == nil || !strings.Contains(err.Error(), "spec.managementApi: Required value") {
		t.Fatalf("want spec.managementApi: Required value, got %v", err)
	}
}

func TestCreateAcceptsValidWatchAndFillsDefaults(t *testing.T) {
	testenv.SkipShort(t)
	ctx := context.Background()
	w := validWatch("full-example")
	if err := env.Client.Create(ctx, w); err != nil {
		t.Fatalf("the design's full example was rejected: %v", err)
	}

	minimal := &swv1.ServiceWatch{
		ObjectMeta: metav1.ObjectMeta{Name: "minimal", Namespace: "default"},
		Spec: swv1.ServiceWatchSpec{
			OrganizationID: orgID,
			ServiceID:      serviceID,
			ManagementAPI:  swv1.ManagementAPISpec{SecretRef: swv1.SecretReference{Name: "warehouse-api-key"}},
		},
	}
	if err := env.Client.Create(ctx, minimal); err != nil {
		t.Fatalf("a minimal watch was rejected: %v", err)
	}
	var got swv1.ServiceWatch
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(minimal), &got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Interval.Duration != 5*time.Minute {
		t.Errorf("interval defaulted to %v, want 5m", got.Spec.Interval.Duration)
	}
	if got.Spec.Suspend {
		t.Error("suspend defaulted to true")
	}
}

func TestUpdateRejectsIdentityChanges(t *testing.T) {
	ctx := context.Background()
	w := createValidWatch(t, "immutable")
	tests := []struct {
		name   string
		mutate func(*swv1.ServiceWatch)
		want   string
	}{
		{"serviceId", func(w *swv1.ServiceWatch) { w.Spec.ServiceID = "00000000-0000-4000-8000-000000000000" }, "spec.serviceId: Invalid value: \"00000000-0000-4000-8000-000000000000\": serviceId is immutable"},
		{"organizationId", func(w *swv1.ServiceWatch) { w.Spec.OrganizationID = "00000000-0000-4000-8000-000000000000" }, "spec.organizationId: Invalid value: \"00000000-0000-4000-8000-000000000000\": organizationId is immutable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cur swv1.ServiceWatch
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(w), &cur); err != nil {
				t.Fatal(err)
			}
			tt.mutate(&cur)
			err := env.Client.Update(ctx, &cur)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want %q, got %v", tt.want, err)
			}
		})
	}

	t.Run("other fields stay mutable", func(t *testing.T) {
		var cur swv1.ServiceWatch
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(w), &cur); err != nil {
			t.Fatal(err)
		}
		cur.Spec.Interval = metav1.Duration{Duration: time.Minute}
		cur.Spec.Suspend = true
		cur.Spec.AlertIDs = append(cur.Spec.AlertIDs, "another-alert")
		if err := env.Client.Update(ctx, &cur); err != nil {
			t.Fatalf("updating interval, suspend and alertIds: %v", err)
		}
	})
}

// The CRD must not let a watch point at Secrets elsewhere: a secretRef has no
// namespace field, so a namespace in it is pruned, never honored.
func TestSecretRefHasNoNamespace(t *testing.T) {
	testenv.SkipShort(t)
	obj := map[string]any{
		"apiVersion": "cloud.servicewatch.io/v1beta1",
		"kind":       "ServiceWatch",
		"metadata":   map[string]any{"name": "cross-namespace", "namespace": "default"},
		"spec": map[string]any{
			"organizationId": orgID, "serviceId": serviceID,
			"managementApi": map[string]any{"secretRef": map[string]any{"name": "key", "namespace": "kube-system"}},
		},
	}
	u := unstructuredFrom(obj)
	ctx := context.Background()
	if err := env.Client.Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	raw := unstructuredFrom(nil)
	raw.SetGroupVersionKind(swv1.GroupVersion.WithKind("ServiceWatch"))
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "cross-namespace"}, raw); err != nil {
		t.Fatal(err)
	}
	field := lookup(t, raw.Object, "spec", "managementApi", "secretRef")
	ref, ok := field.(map[string]any)
	if !ok {
		t.Fatalf("secretRef is %T, not an object", field)
	}
	if _, ok := ref["namespace"]; ok {
		t.Errorf("secretRef kept a namespace: %v", ref)
	}
}

// Until the operator writes status, observedGeneration reads -1, so that
// kstatus-based health checks (Flux, Argo CD) wait for the first sync instead
// of calling a brand-new object Current.
func TestNewWatchReadsAsNotYetObserved(t *testing.T) {
	ctx := context.Background()
	w := createValidWatch(t, "not-yet-observed")
	var got swv1.ServiceWatch
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(w), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.ObservedGeneration != -1 {
		t.Errorf("status.observedGeneration of a new watch = %d, want -1", got.Status.ObservedGeneration)
	}
}

// Alerts from the management API need neither alertApi nor an alert
// Secret; a selector follows alerts without naming them; a manifest of
// before keeps working and reads alertsFrom AlertAPI.
func TestCreateAcceptsEachWayOfFollowingAlerts(t *testing.T) {
	testenv.SkipShort(t)
	management := func(w *swv1.ServiceWatch) { w.Spec.AlertsFrom, w.Spec.AlertAPI = swv1.AlertsFromManagementAPI, nil }
	for name, mutate := range map[string]func(*swv1.ServiceWatch){
		"ids-from-management": management,
		"all-from-management": func(w *swv1.ServiceWatch) {
			management(w)
			w.Spec.AlertIDs, w.Spec.AlertSelector = nil, &swv1.AlertSelector{All: true}
		},
		"selector-on-alert-api": func(w *swv1.ServiceWatch) {
			w.Spec.AlertSelector = &swv1.AlertSelector{Name: "prod-*", Tags: []string{"team:data"}}
		},
		"as-before": func(*swv1.ServiceWatch) {},
	} {
		w := validWatch("alerts-" + name)
		mutate(w)
		if err := env.Client.Create(context.Background(), w); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if name == "as-before" && w.Spec.AlertsFrom != swv1.AlertsFromAlertAPI {
			t.Errorf("a manifest without alertsFrom reads alertsFrom %q, want %q", w.Spec.AlertsFrom, swv1.AlertsFromAlertAPI)
		}
	}
}
