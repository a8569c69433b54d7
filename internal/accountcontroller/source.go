package accountcontroller

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/alerts"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// The kinds of credential a Secret holds (Source.Kind).
const (
	ManagementKind = "management"
	AlertKind      = "alert"
)

// Source is where one API's calls of a watch go and which Secret holds
// their credential: the watch's own (its namespace's Secret), or its
// account's (the operator's namespace), or why it may not call at all.
type Source struct {
	// API names the API in messages; Kind is ManagementKind or AlertKind.
	API, Kind string
	// URL is the URL in use, SpecURL the spec's (the watch's or its
	// account's); Field and Flag are the spec field and the manager's flag
	// that set it.
	URL, SpecURL, Field, Flag string
	Secret                    types.NamespacedName
	// Keys are the Secret's keys the credential needs.
	Keys []string
	// Refusal is set when the watch may not use its account.
	Refusal *Refusal
	// account names the account whose key this is, "" for the watch's own.
	account string
}

// VersionKey is where the Secret's version is among a watch's Secrets'
// versions: its name for the watch's own, namespace/name for an account's
// (a Secret's name has no slash, so the two never meet).
func (s Source) VersionKey() string {
	if s.account != "" {
		return s.Secret.String()
	}
	return s.Secret.Name
}

// Fallbacks are the manager's URLs for specs that name none.
type Fallbacks struct {
	ManagementURL, AlertURL string
}

// SourceOf is the one place a watch's credential for one API (the alert
// API's when alert) is resolved: its spec's Secret, or, when it refers to a
// ClusterCloudAccount, the account's URL and Secret or its refusal, decided
// from the cache before any Secret is read. a may be nil: no accounts.
func (a *Accounts) SourceOf(ctx context.Context, watch *swv1.ServiceWatch, alert bool, fallbacks Fallbacks) Source {
	s := ownSource(watch, alert, fallbacks)
	ref := watch.Spec.ManagementAPI.AccountRef
	if ref == nil {
		return s
	}
	cred, refusal, use := a.Resolve(ctx, watch).For(alert, watch.Spec.AlertAPI != nil)
	switch {
	case refusal != nil:
		s.Refusal = refusal
	case use:
		s = throughAccount(s, cred, ref.Name, fallbacks)
	}
	return s
}

// ReadsAlertToken tells whether a watch that refers to an account reads
// alerts with the account's alert token: it follows alerts, from the alert
// API, and has no spec.alertApi of its own. A watch whose alerts come from
// the management API needs no token, nor one with no alerts.
func ReadsAlertToken(watch *swv1.ServiceWatch) bool {
	return alerts.InUse(&watch.Spec) && !alerts.FromManagement(&watch.Spec) && watch.Spec.AlertAPI == nil
}

// throughAccount is s with the account's URL and Secret. The watch's own
// URL never applies to an account's key (the CRD forbids setting both; an
// object that predates the rule must not send the key to a URL of the
// tenant's choosing): the account's, else the manager's flag.
func throughAccount(s Source, cred Credential, account string, fallbacks Fallbacks) Source {
	fallback := fallbacks.ManagementURL
	if s.Kind == AlertKind {
		fallback = fallbacks.AlertURL
	}
	s.URL, s.SpecURL, s.Field, s.Secret, s.account = firstNonEmpty(cred.URL, fallback), cred.URL, cred.Field, cred.Secret, account
	return s
}

func ownSource(watch *swv1.ServiceWatch, alert bool, fallbacks Fallbacks) Source {
	if alert {
		spec := ptr.Deref(watch.Spec.AlertAPI, swv1.AlertAPISpec{})
		return Source{API: "alert API", Kind: AlertKind, URL: firstNonEmpty(spec.URL, fallbacks.AlertURL), SpecURL: spec.URL,
			Field: "spec.alertApi.url", Flag: "--alert-api-url",
			Secret: types.NamespacedName{Namespace: watch.Namespace, Name: spec.SecretRef.Name}, Keys: []string{swv1.TokenKey}}
	}
	spec := watch.Spec.ManagementAPI
	return Source{API: "management API", Kind: ManagementKind, URL: firstNonEmpty(spec.URL, fallbacks.ManagementURL), SpecURL: spec.URL,
		Field: "spec.managementApi.url", Flag: "--management-api-url",
		Secret: types.NamespacedName{Namespace: watch.Namespace, Name: spec.SecretRef.Name}, Keys: []string{swv1.KeyIDKey, swv1.KeySecretKey}}
}

// Read tells the account, if the credential is one's management key, the
// key's digest once read: its status shows that key's budget.
func (a *Accounts) Read(s Source, digest ratebudget.CredentialID) {
	if s.account != "" && s.Kind == ManagementKind {
		a.Used(s.account, s.URL, digest)
	}
}

// firstNonEmpty is the first of values that is set: a spec field, then the
// manager's default.
func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
