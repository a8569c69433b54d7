package tenancy

import (
	"fmt"
	"math"
	"slices"
)

// Claim is what one namespace asks of a key: Need calls per second, with
// Weight (<= 0 counts as 1).
type Claim struct {
	Namespace string
	Weight    float64
	Need      float64
}

// Share is what Divide gives one namespace of a key: Share calls per second
// of Need asked.
type Share struct {
	Share float64
	Need  float64
}

// Factor is how much the namespace's intervals must be stretched to keep
// within its share: 1 when its share covers what it needs.
func (s Share) Factor() float64 {
	if s.Need <= s.Share {
		return 1
	}
	if s.Share <= 0 {
		return math.Inf(1)
	}
	return s.Need / s.Share
}

// Divide shares capacity calls per second between the claims by weighted
// max-min fairness: a namespace that needs less than its weight's part of
// what is left gets what it needs, and the rest is divided again between
// the others, by weight, until every namespace either is served or gets
// its weight's part of the remainder. The shares never add up to more than
// capacity, and add up to all of it when the needs do. A capacity <= 0
// means unlimited: every namespace gets what it needs.
func Divide(capacity float64, claims []Claim) map[string]Share {
	shares := make(map[string]Share, len(claims))
	for _, c := range claims {
		shares[c.Namespace] = Share{Share: max(0, c.Need), Need: max(0, c.Need)}
	}
	if capacity <= 0 {
		return shares
	}
	// Water-filling: the claims by need per weight, least first; each is
	// served in full while its need is below its weight's part of what is
	// left, and from the first that is not, each gets its weight's part.
	order := slices.Clone(claims)
	slices.SortFunc(order, func(a, b Claim) int { return compare(perWeight(a), perWeight(b)) })
	left, weights := capacity, 0.0
	for _, c := range order {
		weights += weightOf(c)
	}
	for _, c := range order {
		part := left * weightOf(c) / weights
		s := shares[c.Namespace]
		s.Share = min(s.Need, part)
		shares[c.Namespace] = s
		left -= s.Share
		weights -= weightOf(c)
	}
	return shares
}

// weightOf is the claim's weight, 1 when it names none.
func weightOf(c Claim) float64 {
	if !(c.Weight > 0) { // NaN too
		return 1
	}
	return c.Weight
}

// perWeight is what the claim needs per unit of weight: the order in which
// water-filling serves the claims.
func perWeight(c Claim) float64 { return max(0, c.Need) / weightOf(c) }

func compare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Usable is the part of requests (a key's calls per window) the manager
// keeps to when reserved of it is left to callers outside the cluster: at
// least one call, so that a reserve near 1 slows the manager down rather
// than stopping it. reserved outside [0, 1) reserves nothing (ValidateReserve
// refuses it earlier).
func Usable(requests int, reserved float64) int {
	if requests <= 0 || !(reserved > 0 && reserved < 1) {
		return requests
	}
	return max(1, int(math.Floor(float64(requests)*(1-reserved))))
}

// ValidateReserve refuses a reserved share the manager cannot keep: it must be in
// [0, 1).
func ValidateReserve(reserved float64) error {
	if !(reserved >= 0 && reserved < 1) {
		return fmt.Errorf("the reserved share of a key's budget must be at least 0 and less than 1, not %v", reserved)
	}
	return nil
}

// Weights gives the weight of a namespace on a budget (a key at one host,
// named by its digest); nil weighs every namespace 1. The ServiceWatch
// controller uses a ClusterCloudAccount's spec.namespaceWeights for the
// budget of its key (accountcontroller.Accounts.WeightOf).
type Weights func(budget, namespace string) float64

// Of is the namespace's weight on budget: 1 when w is nil.
func (w Weights) Of(budget, namespace string) float64 {
	if w == nil {
		return 1
	}
	return w(budget, namespace)
}
