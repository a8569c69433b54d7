package accountcontroller_test

import (
	"maps"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/accountcontroller"
)

const (
	org     = "11111111-1111-1111-1111-111111111111"
	service = "22222222-2222-2222-2222-222222222222"
	other   = "33333333-3333-3333-3333-333333333333"
)

func account(conds ...swv1.AccountCondition) *swv1.ClusterCloudAccount {
	return &swv1.ClusterCloudAccount{ObjectMeta: metav1.ObjectMeta{Name: "org-main"}, Spec: swv1.ClusterCloudAccountSpec{Conditions: conds}}
}

func subject(ns string, nsLabels map[string]string) accountcontroller.Subject {
	l := map[string]string{accountcontroller.TrustedNamespaceLabel: ns}
	maps.Copy(l, nsLabels)
	return accountcontroller.Subject{Namespace: ns, NamespaceLabels: l, OrganizationID: org, ServiceID: service}
}

func TestDecideUse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		account *swv1.ClusterCloudAccount
		subject accountcontroller.Subject
		// refused is "" when allowed, else words the refusal must say.
		refused []string
	}{
		{"no conditions allow nobody", account(), subject("team-a", nil), []string{"no conditions", `"team-a"`}},
		{"by name", account(swv1.AccountCondition{Namespaces: []string{"team-a"}}), subject("team-a", nil), nil},
		{"another name", account(swv1.AccountCondition{Namespaces: []string{"team-a"}}), subject("team-b", nil),
			[]string{"conditions[0]", `namespace "team-b" is not among its namespaces`}},
		{"by the trusted name label", account(swv1.AccountCondition{NamespaceSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{accountcontroller.TrustedNamespaceLabel: "team-a"}}}), subject("team-a", nil), nil},
		{"by a tenant's label, absent", account(swv1.AccountCondition{NamespaceSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{"billing": "platform"}}}), subject("team-b", nil), []string{"namespaceSelector"}},
		{"by a tenant's label, set (tenant-controlled)", account(swv1.AccountCondition{NamespaceSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{"billing": "platform"}}}), subject("team-b", map[string]string{"billing": "platform"}), nil},
		{"a label cannot fake the trusted one", account(swv1.AccountCondition{NamespaceSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{accountcontroller.TrustedNamespaceLabel: "team-a"}}}), subject("team-b", nil), []string{"conditions[0]"}},
		{"by pattern", account(swv1.AccountCondition{NamespaceRegexes: []string{"team-.*"}}), subject("team-a", nil), nil},
		{"patterns are anchored", account(swv1.AccountCondition{NamespaceRegexes: []string{"team-.*"}}), subject("x-team-a", nil), []string{"namespaceRegexes"}},
		{"an invalid pattern allows nothing and says so", account(swv1.AccountCondition{NamespaceRegexes: []string{"team-("}}), subject("team-a", nil),
			[]string{`"team-("`, "invalid"}},
		{"organization allowed", account(swv1.AccountCondition{Namespaces: []string{"team-a"}, OrganizationIDs: []string{strings.ToUpper(org)}}), subject("team-a", nil), nil},
		{"organization not allowed", account(swv1.AccountCondition{Namespaces: []string{"team-a"}, OrganizationIDs: []string{other}}), subject("team-a", nil),
			[]string{"organization " + org, "organizationIds"}},
		{"service not allowed", account(swv1.AccountCondition{Namespaces: []string{"team-a"}, ServiceIDs: []string{other}}), subject("team-a", nil),
			[]string{"service " + service, "serviceIds"}},
		{"one condition of several is enough", account(swv1.AccountCondition{Namespaces: []string{"team-b"}},
			swv1.AccountCondition{NamespaceRegexes: []string{"team-a"}, ServiceIDs: []string{service}}), subject("team-a", nil), nil},
		{"many refusals are bounded", account(swv1.AccountCondition{Namespaces: []string{"x"}}, swv1.AccountCondition{Namespaces: []string{"x"}},
			swv1.AccountCondition{Namespaces: []string{"x"}}, swv1.AccountCondition{Namespaces: []string{"x"}}, swv1.AccountCondition{Namespaces: []string{"x"}},
			swv1.AccountCondition{Namespaces: []string{"x"}}), subject("team-a", nil), []string{"conditions[3]", "and 2 more conditions"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := accountcontroller.DecideUse(tc.account, tc.subject)
			if tc.refused == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("allowed, want refused")
			}
			for _, want := range tc.refused {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("refusal %q does not say %q", err, want)
				}
			}
		})
	}
}

// The alert token reads alerts of any service: a watch that reads its
// alerts with it is allowed only by a condition that names no
// organizations or services, unless the account says its alert API is
// Unrestricted.
func TestDecideUseTheAlertToken(t *testing.T) {
	withAlerts := func(scope string, conds ...swv1.AccountCondition) *swv1.ClusterCloudAccount {
		a := account(conds...)
		a.Spec.AlertAPI = &swv1.AccountAlertAPISpec{AccountAPISpec: swv1.AccountAPISpec{SecretRef: swv1.SecretReference{Name: "token"}}, Scope: scope}
		return a
	}
	tokenOf := func(ns string) accountcontroller.Subject {
		s := subject(ns, nil)
		s.AlertToken = true
		return s
	}
	byService := swv1.AccountCondition{Namespaces: []string{"team-a"}, ServiceIDs: []string{service}}
	byOrganization := swv1.AccountCondition{Namespaces: []string{"team-a"}, OrganizationIDs: []string{org}}
	everything := swv1.AccountCondition{Namespaces: []string{"team-a"}}
	for _, tc := range []struct {
		name    string
		account *swv1.ClusterCloudAccount
		subject accountcontroller.Subject
		refused []string
	}{
		{"a service condition refuses the token", withAlerts("", byService), tokenOf("team-a"),
			[]string{"conditions[0]", "organizationIds or serviceIds", "alertsFrom: ManagementAPI", "scope: Unrestricted"}},
		{"Restricted said outright", withAlerts(swv1.AlertTokenRestricted, byService), tokenOf("team-a"), []string{"scope Restricted"}},
		{"an organization condition refuses the token", withAlerts("", byOrganization), tokenOf("team-a"), []string{"conditions[0]", "organizationIds"}},
		{"the same condition allows the management key", withAlerts("", byService), subject("team-a", nil), nil},
		{"a condition for every service gives the token", withAlerts("", everything), tokenOf("team-a"), nil},
		{"one such condition is enough", withAlerts("", byService, everything), tokenOf("team-a"), nil},
		{"Unrestricted gives it to a service condition", withAlerts(swv1.AlertTokenUnrestricted, byService), tokenOf("team-a"), nil},
		{"Unrestricted still keeps to the services", withAlerts(swv1.AlertTokenUnrestricted,
			swv1.AccountCondition{Namespaces: []string{"team-a"}, ServiceIDs: []string{other}}), tokenOf("team-a"), []string{"serviceIds"}},
		{"another namespace is told of its namespace", withAlerts("", byService), tokenOf("team-b"), []string{`namespace "team-b"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := accountcontroller.DecideUse(tc.account, tc.subject)
			if tc.refused == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("allowed, want refused")
			}
			for _, want := range tc.refused {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("refusal %q does not say %q", err, want)
				}
			}
		})
	}
}

func TestValidateAccount(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cond  swv1.AccountCondition
		valid bool
	}{
		{"names only", swv1.AccountCondition{Namespaces: []string{"a"}}, true},
		{"a pattern", swv1.AccountCondition{NamespaceRegexes: []string{"team-[a-z]+"}}, true},
		{"a bad pattern", swv1.AccountCondition{NamespaceRegexes: []string{"("}}, false},
		{"a bad selector", swv1.AccountCondition{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "a", Operator: "Like"}}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := accountcontroller.ValidateAccount(account(tc.cond))
			if (err == nil) != tc.valid {
				t.Errorf("Validate: %v, want valid %v", err, tc.valid)
			}
		})
	}
}
