package accountcontroller

import (
	"math"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// shares are what an account says of its key's budget: the reserve left to
// callers outside the cluster (own: the account sets one) and the weights
// of its namespaces.
type shares struct {
	reserve float64
	own     bool
	weights map[string]float64
}

// noteShares records the account's reserve and weights as a watch resolves
// through it, and gives its key's budget a changed reserve at once.
func (a *Accounts) noteShares(account *swv1.ClusterCloudAccount) {
	reserve, own := AccountReserve(account)
	s := shares{reserve: reserve, own: own, weights: NamespaceWeights(account)}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.shares == nil {
		a.shares = map[string]shares{}
	}
	before, known := a.shares[account.Name]
	a.shares[account.Name] = s
	if !known || before.reserve != s.reserve || before.own != s.own {
		a.bind(account.Name)
	}
}

// bind makes the account's key's budget keep to the account's reserve, and
// its namespaces weigh as the account says. Callers hold a.mu.
func (a *Accounts) bind(account string) {
	k, ok := a.keys[account]
	s, noted := a.shares[account]
	if !ok || !noted {
		return
	}
	if a.owners == nil {
		a.owners = map[string]string{}
	}
	a.owners[ratebudget.BudgetID(cloudapi.APIManagement, k.url, k.digest)] = account
	if a.Budgets == nil {
		return
	}
	if s.own {
		a.Budgets.SetReserve(cloudapi.APIManagement, k.url, k.digest, s.reserve)
	} else {
		a.Budgets.ClearReserve(cloudapi.APIManagement, k.url, k.digest)
	}
}

// release gives a key no account uses any more (rotated, or its account
// deleted) the manager's reserve and equal weights back. Callers hold a.mu.
func (a *Accounts) release(k usedKey) {
	delete(a.owners, ratebudget.BudgetID(cloudapi.APIManagement, k.url, k.digest))
	if a.Budgets != nil {
		a.Budgets.ClearReserve(cloudapi.APIManagement, k.url, k.digest)
	}
}

// WeightOf is the weight of namespace on budget (a ratebudget.BudgetID):
// its account's spec.namespaceWeights when the budget is an account's key,
// else 1. It is the ServiceWatch controller's tenancy.Weights.
func (a *Accounts) WeightOf(budget, namespace string) float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if w, ok := a.shares[a.owners[budget]].weights[namespace]; ok {
		return w
	}
	return 1
}

// reservePercent is the reserve in force on the account's key, in percent.
func (a *Accounts) reservePercent(account *swv1.ClusterCloudAccount) int32 {
	reserve, own := AccountReserve(account)
	if !own {
		reserve = a.DefaultReserve
	}
	return int32(reserve*100 + 0.5)
}

// AccountReserve is the share of the account's key budget left to callers outside
// the cluster, in [0, 0.9], and whether the account sets one (else the
// manager's flag applies).
func AccountReserve(account *swv1.ClusterCloudAccount) (float64, bool) {
	p := account.Spec.ReservedPercent
	if p == nil {
		return 0, false
	}
	return float64(min(max(*p, 0), 90)) / 100, true
}

// NamespaceWeight is the weight of namespace on the account's key: its
// entry in spec.namespaceWeights, else 1.
func NamespaceWeight(account *swv1.ClusterCloudAccount, namespace string) int32 {
	for _, w := range account.Spec.NamespaceWeights {
		if w.Namespace == namespace && w.Weight > 0 {
			return w.Weight
		}
	}
	return 1
}

// NamespaceWeights are the weights spec.namespaceWeights sets, by
// namespace; the others weigh 1.
func NamespaceWeights(account *swv1.ClusterCloudAccount) map[string]float64 {
	weights := make(map[string]float64, len(account.Spec.NamespaceWeights))
	for _, w := range account.Spec.NamespaceWeights {
		if w.Weight > 0 {
			weights[w.Namespace] = float64(w.Weight)
		}
	}
	return weights
}

// SharePercents is each namespace's share of the key, in whole percent,
// when all of namespaces need more than their share: its weight's part of
// the sum. The percents never add up to more than 100.
func SharePercents(account *swv1.ClusterCloudAccount, namespaces []string) map[string]int32 {
	total := 0.0
	for _, ns := range namespaces {
		total += float64(NamespaceWeight(account, ns))
	}
	shares := make(map[string]int32, len(namespaces))
	for _, ns := range namespaces {
		shares[ns] = int32(math.Floor(100 * float64(NamespaceWeight(account, ns)) / total))
	}
	return shares
}
