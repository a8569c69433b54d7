package accountcontroller_test

import (
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
