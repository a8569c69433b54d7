package accountcontroller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// recordingBudgets keeps the reserve each budget was last given (-1:
// cleared).
type recordingBudgets map[string]float64

func (recordingBudgets) Allowance(string, string) float64 { return 0 }
func (recordingBudgets) HeldUntil(string, string, ratebudget.CredentialID) time.Time {
	return time.Time{}
}
func (b recordingBudgets) SetReserve(api, url string, cred ratebudget.CredentialID, reserved float64) {
	b[ratebudget.BudgetID(api, url, cred)] = reserved
}
func (b recordingBudgets) ClearReserve(api, url string, cred ratebudget.CredentialID) {
	b[ratebudget.BudgetID(api, url, cred)] = -1
}

// The budget of the key a watch uses through an account keeps to the
// account's reserve and weighs its namespaces as the account says, in
// whichever order the account and the key become known; a key rotated
// away, or an account deleted, gives the key the manager's reserve and
// equal weights back.
func TestAnAccountsKeyTakesItsReserveAndWeights(t *testing.T) {
	const url = "https://api.example.com"
	key, rotated := cloudapi.NewBasicCredentials("k", "s"), cloudapi.NewBasicCredentials("k2", "s2")
	budget := ratebudget.BudgetID(cloudapi.APIManagement, url, cloudapi.DigestOf(key))
	newer := ratebudget.BudgetID(cloudapi.APIManagement, url, cloudapi.DigestOf(rotated))
	account := &swv1.ClusterCloudAccount{ObjectMeta: metav1.ObjectMeta{Name: "org"}, Spec: swv1.ClusterCloudAccountSpec{
		ReservedPercent:  ptr.To[int32](50),
		NamespaceWeights: []swv1.NamespaceWeight{{Namespace: "heavy", Weight: 3}},
	}}
	for _, keyFirst := range []bool{false, true} {
		budgets := recordingBudgets{}
		a := &Accounts{Namespace: "ops", Budgets: budgets}
		if keyFirst {
			a.Used("org", url, cloudapi.DigestOf(key))
			a.noteShares(account)
		} else {
			a.noteShares(account)
			a.Used("org", url, cloudapi.DigestOf(key))
		}
		if got := budgets[budget]; got != 0.5 {
			t.Errorf("key known first %v: the key's reserve is %v, want 0.5", keyFirst, got)
		}
		if h, l, other := a.WeightOf(budget, "heavy"), a.WeightOf(budget, "light"), a.WeightOf(newer, "heavy"); h != 3 || l != 1 || other != 1 {
			t.Errorf("key known first %v: weights heavy %v, light %v, another key's heavy %v; want 3, 1, 1", keyFirst, h, l, other)
		}
		// The reserve and the weights are the management key's: the alert
		// budget of the same credential and host (an alert token's API)
		// keeps the manager's reserve and equal weights.
		alerts := ratebudget.BudgetID(cloudapi.APIAlert, url, cloudapi.DigestOf(key))
		if r, set := budgets[alerts]; set || a.WeightOf(alerts, "heavy") != 1 {
			t.Errorf("key known first %v: the alert budget got reserve %v (set %v) and heavy weight %v; want none and 1", keyFirst, r, set, a.WeightOf(alerts, "heavy"))
		}
		a.Used("org", url, cloudapi.DigestOf(rotated))
		if budgets[budget] != -1 || budgets[newer] != 0.5 || a.WeightOf(budget, "heavy") != 1 {
			t.Errorf("rotated: old key's reserve %v, new key's %v, old key's heavy weight %v; want cleared, 0.5, 1",
				budgets[budget], budgets[newer], a.WeightOf(budget, "heavy"))
		}
		a.forget("org")
		if budgets[newer] != -1 || a.WeightOf(newer, "heavy") != 1 {
			t.Errorf("account deleted: key's reserve %v, heavy weight %v; want cleared, 1", budgets[newer], a.WeightOf(newer, "heavy"))
		}
	}
}

// An account that sets no reserve leaves its key the manager's, and its
// status says which is in force.
func TestAnAccountWithoutAReserveKeepsTheManagers(t *testing.T) {
	budgets := recordingBudgets{}
	a := &Accounts{Namespace: "ops", Budgets: budgets, DefaultReserve: 0.2}
	account := &swv1.ClusterCloudAccount{ObjectMeta: metav1.ObjectMeta{Name: "org"}}
	a.noteShares(account)
	a.Used("org", "https://api.example.com", cloudapi.DigestOf(cloudapi.NewBasicCredentials("k", "s")))
	for id, r := range budgets {
		if r != -1 {
			t.Errorf("budget %x: reserve %v, want the manager's (cleared)", id, r)
		}
	}
	if got := a.reservePercent(account); got != 20 {
		t.Errorf("reserve in force %d%%, want the flag's 20%%", got)
	}
	account.Spec.ReservedPercent = ptr.To[int32](0)
	if got := a.reservePercent(account); got != 0 {
		t.Errorf("reserve in force %d%%, want the account's 0%%", got)
	}
}
