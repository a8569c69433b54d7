package v1beta1_test

import (
	"cmp"
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// A watch uses either a Secret of its namespace or an account, never both
// and never neither; with an account, the URL is the account's.
func TestManagementAPIIsASecretOrAnAccount(t *testing.T) {
	testenv.SkipShort(t)
	account := &swv1.AccountRef{Name: "org-main"}
	for _, tc := range []struct {
		name   string
		mutate func(*swv1.ServiceWatch)
		want   string // "" when accepted
	}{
		{"a Secret", func(*swv1.ServiceWatch) {}, ""},
		{"an account", func(w *swv1.ServiceWatch) {
			w.Spec.ManagementAPI = swv1.ManagementAPISpec{AccountRef: account}
			w.Spec.AlertAPI = nil // the account's alertApi may serve the alerts
		}, ""},
		{"both", func(w *swv1.ServiceWatch) { w.Spec.ManagementAPI.AccountRef = account; w.Spec.ManagementAPI.URL = "" },
			"exactly one of spec.managementApi.secretRef and spec.managementApi.accountRef"},
		{"neither", func(w *swv1.ServiceWatch) {
			w.Spec.ManagementAPI = swv1.ManagementAPISpec{URL: "https://api.example.com"}
		},
			"exactly one of spec.managementApi.secretRef and spec.managementApi.accountRef"},
		{"an account and a URL", func(w *swv1.ServiceWatch) {
			w.Spec.ManagementAPI = swv1.ManagementAPISpec{AccountRef: account, URL: "https://elsewhere.example.com"}
		}, "url comes from the account"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := validWatch("mgmt-" + strings.ToLower(strings.ReplaceAll(tc.name, " ", "-")))
			tc.mutate(w)
			err := env.Client.Create(context.Background(), w)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want Invalid saying %q", err, tc.want)
			}
		})
	}
}

// An account's alert API is Restricted or Unrestricted, nothing else, and
// keeps its URL and Secret beside its scope (one object, as before).
func TestAccountAlertAPIScope(t *testing.T) {
	testenv.SkipShort(t)
	for _, tc := range []struct {
		scope string
		want  string // "" when accepted
	}{
		{"", ""},
		{swv1.AlertTokenRestricted, ""},
		{swv1.AlertTokenUnrestricted, ""},
		{"Organization", "Unsupported value"},
	} {
		t.Run("scope "+tc.scope, func(t *testing.T) {
			a := &swv1.ClusterCloudAccount{ObjectMeta: metav1.ObjectMeta{Name: "scope-" + strings.ToLower(cmp.Or(tc.scope, "unset"))},
				Spec: swv1.ClusterCloudAccountSpec{
					ManagementAPI: swv1.AccountAPISpec{SecretRef: swv1.SecretReference{Name: "key"}},
					AlertAPI: &swv1.AccountAlertAPISpec{AccountAPISpec: swv1.AccountAPISpec{URL: "https://alerts.example.com",
						SecretRef: swv1.SecretReference{Name: "token"}}, Scope: tc.scope},
				}}
			err := env.Client.Create(context.Background(), a)
			if tc.want != "" {
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want Invalid saying %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), a) })
			got := &swv1.ClusterCloudAccount{}
			if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(a), got); err != nil {
				t.Fatal(err)
			}
			if *got.Spec.AlertAPI != *a.Spec.AlertAPI {
				t.Errorf("alertApi read back as %+v, want %+v", *got.Spec.AlertAPI, *a.Spec.AlertAPI)
			}
		})
	}
}
