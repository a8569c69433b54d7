package accountpolicy

import (
	"math"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

// Reserve is the share of the account's key budget left to callers outside
// the cluster, in [0, 0.9], and whether the account sets one (else the
// manager's flag applies).
func Reserve(account *swv1.ClusterCloudAccount) (float64, bool) {
	p := account.Spec.ReservedPercent
	if p == nil {
		return 0, false
	}
	return float64(min(max(*p, 0), 90)) / 100, true
}

// Weight is the weight of namespace on the account's key: its entry in
// spec.namespaceWeights, else 1.
func Weight(account *swv1.ClusterCloudAccount, namespace string) int32 {
	for _, w := range account.Spec.NamespaceWeights {
		if w.Namespace == namespace && w.Weight > 0 {
			return w.Weight
		}
	}
	return 1
}

// Weights are the weights spec.namespaceWeights sets, by namespace; the
// others weigh 1.
func Weights(account *swv1.ClusterCloudAccount) map[string]float64 {
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
		total += float64(Weight(account, ns))
	}
	shares := make(map[string]int32, len(namespaces))
	for _, ns := range namespaces {
		shares[ns] = int32(math.Floor(100 * float64(Weight(account, ns)) / total))
	}
	return shares
}
