package accountcontroller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

// An account's key goes to the account's URL, else the manager's: never to
// a URL the watch names (an object from before the CRD forbade it).
func TestAnAccountsKeyNeverGoesToTheWatchsURL(t *testing.T) {
	watch := &swv1.ServiceWatch{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a"}, Spec: swv1.ServiceWatchSpec{
		ManagementAPI: swv1.ManagementAPISpec{URL: "https://tenant.example.net", AccountRef: &swv1.AccountRef{Name: "org"}}}}
	fallbacks := Fallbacks{ManagementURL: "https://api.example.com"}
	key := types.NamespacedName{Namespace: "ops", Name: "key"}
	for _, tc := range []struct {
		name, accountURL, want string
	}{
		{"the account's URL", "https://gw.example.com", "https://gw.example.com"},
		{"the manager's flag", "", "https://api.example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := throughAccount(ownSource(watch, false, fallbacks), Credential{URL: tc.accountURL, Secret: key}, "org", fallbacks)
			if s.URL != tc.want || s.Secret != key {
				t.Errorf("the key goes to %s from %s, want %s from %s", s.URL, s.Secret, tc.want, key)
			}
		})
	}
}
