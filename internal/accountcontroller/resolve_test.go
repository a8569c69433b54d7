package accountcontroller_test

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/accountcontroller"
)

func watchOf(ref *swv1.AccountRef, alert *swv1.AlertAPISpec) *swv1.ServiceWatch {
	return &swv1.ServiceWatch{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "team-a"}, Spec: swv1.ServiceWatchSpec{
		ManagementAPI: swv1.ManagementAPISpec{SecretRef: swv1.SecretReference{Name: "own-key"}, AccountRef: ref}, AlertAPI: alert}}
}

// A watch without an account uses its own namespace's Secrets, and the
// manager's URL when its spec names none; a manager that serves no
// accounts refuses a watch that names one, before anything is read.
func TestSourceOfWithoutAccounts(t *testing.T) {
	var none *accountcontroller.Accounts
	fallbacks := accountcontroller.Fallbacks{ManagementURL: "https://api.example.com", AlertURL: "https://alerts.example.com"}
	own := watchOf(nil, &swv1.AlertAPISpec{SecretRef: swv1.SecretReference{Name: "own-token"}})
	for _, tc := range []struct {
		alert  bool
		secret string
		url    string
	}{{false, "own-key", fallbacks.ManagementURL}, {true, "own-token", fallbacks.AlertURL}} {
		s := none.SourceOf(t.Context(), own, tc.alert, fallbacks)
		if s.Refusal != nil || s.Secret != (types.NamespacedName{Namespace: "team-a", Name: tc.secret}) || s.URL != tc.url {
			t.Errorf("alert %v: %+v, want the watch's own %s at %s", tc.alert, s, tc.secret, tc.url)
		}
	}
	s := none.SourceOf(t.Context(), watchOf(&swv1.AccountRef{Name: "org-main"}, nil), false, fallbacks)
	if s.Refusal == nil || s.Refusal.Reason != swv1.ReasonAccountNotFound {
		t.Errorf("a watch of an account on a manager that serves none: %+v, want AccountNotFound", s.Refusal)
	}
}

func TestGrantFor(t *testing.T) {
	mgmt := accountcontroller.Credential{URL: "https://api.example.com", Secret: types.NamespacedName{Namespace: "ops", Name: "key"}}
	alert := accountcontroller.Credential{URL: "https://alerts.example.com", Secret: types.NamespacedName{Namespace: "ops", Name: "token"}}
	refusal := &accountcontroller.Refusal{Reason: swv1.ReasonAccountNotAllowed, Message: "no"}
	for _, tc := range []struct {
		name             string
		grant            accountcontroller.Grant
		alert, ownAlerts bool
		want             accountcontroller.Credential
		wantReason       string
		wantUse          bool
	}{
		{"management", accountcontroller.Grant{Management: mgmt, Alert: &alert}, false, false, mgmt, "", true},
		{"the account's alerts", accountcontroller.Grant{Management: mgmt, Alert: &alert}, true, false, alert, "", true},
		{"the watch's own alerts", accountcontroller.Grant{Management: mgmt, Alert: &alert}, true, true, accountcontroller.Credential{}, "", false},
		{"no alerts anywhere", accountcontroller.Grant{Management: mgmt}, true, false, accountcontroller.Credential{}, swv1.ReasonConfigurationError, false},
		{"refused management", accountcontroller.Grant{Refusal: refusal}, false, false, accountcontroller.Credential{}, swv1.ReasonAccountNotAllowed, false},
		{"refused: own alerts too", accountcontroller.Grant{Refusal: refusal}, true, true, accountcontroller.Credential{}, swv1.ReasonAccountNotAllowed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cred, r, use := tc.grant.For(tc.alert, tc.ownAlerts)
			reason := ""
			if r != nil {
				reason = r.Reason
			}
			if cred != tc.want || reason != tc.wantReason || use != tc.wantUse {
				t.Errorf("For: %+v %q %v, want %+v %q %v", cred, reason, use, tc.want, tc.wantReason, tc.wantUse)
			}
		})
	}
}

// A watch needs the account's alert token only when it reads alerts with
// it: the token's Secret is among its Secrets (whose versions are kept, and
// whose changes sync it) then only.
func TestGrantSecretsAreTheOnesTheWatchNeeds(t *testing.T) {
	key := types.NamespacedName{Namespace: "ops", Name: "key"}
	token := types.NamespacedName{Namespace: "ops", Name: "token"}
	grant := accountcontroller.Grant{Management: accountcontroller.Credential{Secret: key}, Alert: &accountcontroller.Credential{Secret: token}}
	withToken := grant
	withToken.AlertToken = true
	refused := withToken
	refused.Refusal = &accountcontroller.Refusal{Reason: swv1.ReasonAccountNotAllowed, Message: "no"}
	for _, tc := range []struct {
		name    string
		grant   accountcontroller.Grant
		watched []string
		want    []types.NamespacedName
	}{
		{"the key only", grant, nil, []types.NamespacedName{key}},
		{"the key and the token", withToken, nil, []types.NamespacedName{key, token}},
		{"the operator's namespace watched", withToken, []string{"team-a", "ops"}, []types.NamespacedName{key, token}},
		{"the operator's namespace not watched", withToken, []string{"team-a"}, nil},
		{"refused", refused, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.grant.Secrets(tc.watched); !slices.Equal(got, tc.want) {
				t.Errorf("Secrets: %v, want %v", got, tc.want)
			}
		})
	}
}

// Which watches read alerts with the account's token: those that follow
// alerts from the alert API without an alertApi of their own.
func TestReadsAlertToken(t *testing.T) {
	ref := &swv1.AccountRef{Name: "org"}
	for _, tc := range []struct {
		name string
		edit func(*swv1.ServiceWatch)
		want bool
	}{
		{"no alerts", func(*swv1.ServiceWatch) {}, false},
		{"alert IDs", func(w *swv1.ServiceWatch) { w.Spec.AlertIDs = []string{"a"} }, true},
		{"a selector", func(w *swv1.ServiceWatch) { w.Spec.AlertSelector = &swv1.AlertSelector{Name: "prod-*"} }, true},
		{"from the management API", func(w *swv1.ServiceWatch) {
			w.Spec.AlertIDs, w.Spec.AlertsFrom = []string{"a"}, swv1.AlertsFromManagementAPI
		}, false},
		{"with a token of its own", func(w *swv1.ServiceWatch) {
			w.Spec.AlertIDs, w.Spec.AlertAPI = []string{"a"}, &swv1.AlertAPISpec{SecretRef: swv1.SecretReference{Name: "own-token"}}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := watchOf(ref, nil)
			tc.edit(w)
			if got := accountcontroller.ReadsAlertToken(w); got != tc.want {
				t.Errorf("ReadsAlertToken: %v, want %v", got, tc.want)
			}
		})
	}
}
