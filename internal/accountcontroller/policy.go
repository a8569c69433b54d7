package accountcontroller

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

// TrustedNamespaceLabel is the one namespace label the API server sets
// itself (to the namespace's name): a tenant cannot change it. Every other
// label of a namespace is set by whoever may edit the namespace.
const TrustedNamespaceLabel = "kubernetes.io/metadata.name"

// maxReasons bounds how many conditions a refusal names, so that an account
// with many conditions still gives a message that fits a condition.
const maxReasons = 4

// Subject is who asks to use an account: a watch's namespace, with its
// labels as the API server has them, and what the watch reads.
type Subject struct {
	Namespace       string
	NamespaceLabels map[string]string
	OrganizationID  string
	ServiceID       string
	// AlertToken says the watch reads alerts with the account's alert
	// token (spec.alertApi): a token that reads alerts of any service, so
	// only a condition that names no organizations or services may give it,
	// unless the account's alert API is Unrestricted.
	AlertToken bool
}

// DecideUse tells whether the account allows s; when it does not, the error
// says, per condition (the first few), why not. A subject that reads alerts
// with the account's alert token is allowed only by a condition that names
// no organizations or services, unless the account's alert API is
// Unrestricted: the alert API answers with any alert the token reads, so
// the management API's refusal of another service's alerts would not hold.
func DecideUse(account *swv1.ClusterCloudAccount, s Subject) error {
	conds := account.Spec.Conditions
	if len(conds) == 0 {
		return fmt.Errorf("ClusterCloudAccount %q has no conditions, so no namespace may use it; its owner adds one that selects namespace %q",
			account.Name, s.Namespace)
	}
	restricted := restrictedAlertToken(account, s)
	reasons := make([]string, 0, min(len(conds), maxReasons))
	tokenOnly := false // some condition allows all but the alert token
	for i := range conds {
		why := refusal(&conds[i], s)
		if why == "" && restricted && names(&conds[i]) {
			why, tokenOnly = "it names organizationIds or serviceIds, which the account's alert token (spec.alertApi, scope Restricted) cannot keep to: it reads alerts of any service", true
		}
		if why == "" {
			return nil
		}
		if len(reasons) < maxReasons {
			reasons = append(reasons, fmt.Sprintf("conditions[%d]: %s", i, why))
		}
	}
	if more := len(conds) - len(reasons); more > 0 {
		reasons = append(reasons, fmt.Sprintf("and %d more conditions", more))
	}
	err := fmt.Errorf("ClusterCloudAccount %q does not allow this watch: %s", account.Name, strings.Join(reasons, "; "))
	if tokenOnly {
		return fmt.Errorf("%w; read this service's alerts with spec.alertsFrom: ManagementAPI (the account's management key, which lists this service's alerts only) or a spec.alertApi of the watch's own, or ask the account's owner for spec.alertApi.scope: Unrestricted", err)
	}
	return err
}

// refusal is why one condition does not allow s, "" when it does.
func refusal(c *swv1.AccountCondition, s Subject) string {
	selected, why := selects(c, s)
	switch {
	case !selected:
		return why
	case len(c.OrganizationIDs) > 0 && !containsFold(c.OrganizationIDs, s.OrganizationID):
		return fmt.Sprintf("organization %s is not among its organizationIds", s.OrganizationID)
	case len(c.ServiceIDs) > 0 && !containsFold(c.ServiceIDs, s.ServiceID):
		return fmt.Sprintf("service %s is not among its serviceIds", s.ServiceID)
	}
	return ""
}

// restrictedAlertToken tells whether s asks for the account's alert token
// and the account gives it only to conditions that name no organizations
// or services. An account without an alertApi has no token to give: the
// watch is told so where its alerts are read.
func restrictedAlertToken(account *swv1.ClusterCloudAccount, s Subject) bool {
	alerts := account.Spec.AlertAPI
	return s.AlertToken && alerts != nil && alerts.Scope != swv1.AlertTokenUnrestricted
}

// names tells whether a condition allows only some organizations or
// services: the alert token cannot be held to that.
func names(c *swv1.AccountCondition) bool {
	return len(c.OrganizationIDs) > 0 || len(c.ServiceIDs) > 0
}

// selects tells whether the condition selects the subject's namespace, and
// if not, why not.
func selects(c *swv1.AccountCondition, s Subject) (selected bool, whyNot string) {
	if slices.Contains(c.Namespaces, s.Namespace) {
		return true, ""
	}
	var problems []string
	if c.NamespaceSelector != nil {
		sel, err := namespaceSelector(c.NamespaceSelector)
		switch {
		case err != nil:
			problems = append(problems, "its namespaceSelector is invalid ("+err.Error()+")")
		case sel.Matches(labels.Set(s.NamespaceLabels)):
			return true, ""
		}
	}
	for _, pattern := range c.NamespaceRegexes {
		re, err := namespacePattern(pattern)
		if err != nil {
			problems = append(problems, fmt.Sprintf("its namespaceRegexes entry %q is invalid (%v)", pattern, err))
			continue
		}
		if re.MatchString(s.Namespace) {
			return true, ""
		}
	}
	why := fmt.Sprintf("namespace %q is not among its namespaces, does not match its namespaceSelector or namespaceRegexes", s.Namespace)
	if len(problems) > 0 {
		why += "; " + strings.Join(problems, "; ")
	}
	return false, why
}

// namespaceSelector is the label selector of a condition; an empty selector selects
// every namespace, as Kubernetes' selectors do.
func namespaceSelector(s *metav1.LabelSelector) (labels.Selector, error) {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return nil, fmt.Errorf("namespaceSelector: %w", err)
	}
	return sel, nil
}

// namespacePattern compiles a namespaceRegexes entry, anchored at both ends so that
// "team-.*" cannot select "x-team-a". RE2 matches in linear time, and the
// CRD bounds a pattern to 256 bytes: no pattern can make matching slow.
func namespacePattern(pattern string) (*regexp.Regexp, error) {
	re, err := regexp.Compile("^(?:" + pattern + ")$")
	if err != nil {
		return nil, fmt.Errorf("namespaceRegexes %q: %w", pattern, err)
	}
	return re, nil
}

// ValidateAccount is the first invalid part of the account's conditions, nil when
// every selector and pattern is valid: the account's Ready condition.
func ValidateAccount(account *swv1.ClusterCloudAccount) error {
	for i, c := range account.Spec.Conditions {
		if c.NamespaceSelector != nil {
			if _, err := namespaceSelector(c.NamespaceSelector); err != nil {
				return fmt.Errorf("conditions[%d]: %w", i, err)
			}
		}
		for _, p := range c.NamespaceRegexes {
			if _, err := namespacePattern(p); err != nil {
				return fmt.Errorf("conditions[%d]: %w", i, err)
			}
		}
	}
	return nil
}

// containsFold: the cloud's UUIDs are case-insensitive, and the CRD accepts
// either case.
func containsFold(list []string, v string) bool {
	return slices.ContainsFunc(list, func(e string) bool { return strings.EqualFold(e, v) })
}
