package accountcontroller

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/alerts"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// Accounts resolves the ClusterCloudAccounts that watches refer to, and
// remembers which key each account's watches last used, for its status.
type Accounts struct {
	// Client reads accounts, namespaces and watches from the manager's
	// cache, and writes accounts' status.
	Client client.Client
	// Namespace is the operator's own namespace, where every account's
	// Secrets are: never a tenant's. Empty: the manager serves no accounts,
	// and every watch that refers to one is refused (AccountNotFound).
	Namespace string
	// Budgets are the manager's rate budgets, read for the status and
	// given each account's reserve.
	Budgets Budgets
	// DefaultReserve is the manager's --reserved-budget-share, which
	// applies to the keys of accounts that set no reserve of their own.
	DefaultReserve float64
	// Served, if set, is told whether the manager serves accounts: at
	// setup, and again when a ClusterCloudAccount CRD missing then appears
	// (the metric servicewatch_accounts_enabled).
	Served func(served bool)

	// crd is what the manager knows of the ClusterCloudAccount CRD.
	crd optionalCRD
	mu  sync.Mutex
	// keys are the management keys last used through each account, by name.
	keys map[string]usedKey
	// shares are the reserve and namespace weights of each account, as the
	// last watch resolved through it saw them, by name.
	shares map[string]shares
	// owners are the accounts whose management key each budget (a
	// ratebudget.BudgetID) is, for the weights of its namespaces.
	owners map[string]string
	// learned wakes the status reconciler of an account whose key was first
	// used, or changed (SetupWithManager makes it).
	learned chan event.GenericEvent
}

// Budgets is what the account's status reads of the manager's rate budgets
// (ratebudget.Store).
type Budgets interface {
	// Allowance is the calls per second budget (a BudgetID of api) admits;
	// 0: unlimited.
	Allowance(api, budget string) float64
	// HeldUntil is the end of the hold of a budget, zero when none.
	HeldUntil(api, baseURL string, cred ratebudget.CredentialID) time.Time
	// SetReserve gives a budget a reserve of its own, an account's.
	SetReserve(api, baseURL string, cred ratebudget.CredentialID, reserved float64)
	// ClearReserve gives a budget the manager's reserve back.
	ClearReserve(api, baseURL string, cred ratebudget.CredentialID)
}

// usedKey is a key as the manager last used it: its URL and digest, never
// the key itself.
type usedKey struct {
	url    string
	digest ratebudget.CredentialID
}

// Enabled tells whether the manager serves accounts (it knows where their
// Secrets are).
func (a *Accounts) Enabled() bool { return a != nil && a.Namespace != "" }

// Credential is where one API's calls go through an account, and the Secret
// in the operator's namespace that holds their credential.
type Credential struct {
	// URL is the account's; empty: the manager's flag applies.
	URL string
	// Field names the account field that set URL, for messages.
	Field  string
	Secret types.NamespacedName
}

// Refusal is why a watch may not use the account it refers to: a condition
// reason of the watch (swv1.ReasonAccountNotFound, ReasonAccountNotAllowed,
// ReasonConfigurationError, ReasonSecretUnreadable) and a message a tenant
// can act on.
type Refusal struct {
	Reason, Message string
}

// Grant is what an account gives one watch: its credentials, or a refusal.
type Grant struct {
	// Refusal is set when the watch may not use the account.
	Refusal    *Refusal
	Management Credential
	// Alert is nil when the account has no alertApi.
	Alert *Credential
	// AlertToken says the watch reads its alerts with the account's alert
	// token: only then is the token's Secret one the watch needs.
	AlertToken bool
	// Trigger fingerprints what decided the grant (which account, its
	// generation, the decision): when it changes, the watch syncs at once,
	// so a refused watch recovers as soon as the account allows it.
	Trigger string
}

// For is the credential of one API through the grant: of the alert API
// when alert, else of the management API. use is false when the watch's own
// spec.alertApi applies (ownAlertAPI); refusal is set when the watch may not
// call at all.
func (g Grant) For(alert, ownAlertAPI bool) (cred Credential, refusal *Refusal, use bool) {
	switch {
	case g.Refusal != nil:
		return Credential{}, g.Refusal, false
	case !alert:
		return g.Management, nil, true
	case ownAlertAPI:
		return Credential{}, nil, false
	case g.Alert == nil:
		return Credential{}, &Refusal{Reason: swv1.ReasonConfigurationError,
			Message: "the ClusterCloudAccount has no spec.alertApi: set the watch's spec.alertApi, or ask its owner to add one"}, false
	}
	return *g.Alert, nil, true
}

// Secrets are the grant's Secrets the watch needs (the alert token's only
// when it reads alerts with it) whose versions a Secret watch of the
// namespaces watched (all when empty) keeps, so that a sync waiting for its
// budget knows their credentials by digest without reading them again, and
// a change to one syncs the watch; none when the Secret watch does not see
// the operator's namespace (a version remembered without its changes would
// hide a rotated key).
func (g Grant) Secrets(watched []string) []types.NamespacedName {
	if g.Refusal != nil || (len(watched) > 0 && !slices.Contains(watched, g.Management.Secret.Namespace)) {
		return nil
	}
	secrets := []types.NamespacedName{g.Management.Secret}
	if g.Alert != nil && g.AlertToken {
		secrets = append(secrets, g.Alert.Secret)
	}
	return secrets
}

// References tells whether an account names the Secret: the Secret watch
// then keeps its version. a may be nil.
func (a *Accounts) References(ctx context.Context, secret types.NamespacedName) bool {
	if !a.Enabled() || !a.Installed() || secret.Namespace != a.Namespace {
		return false
	}
	var accounts swv1.ClusterCloudAccountList
	if err := a.Client.List(ctx, &accounts); err != nil {
		return true // keep it: better a version too many than a change missed
	}
	for i := range accounts.Items {
		spec := &accounts.Items[i].Spec
		if spec.ManagementAPI.SecretRef.Name == secret.Name || (spec.AlertAPI != nil && spec.AlertAPI.SecretRef.Name == secret.Name) {
			return true
		}
	}
	return false
}

// Resolve is the grant of the account the watch refers to (it must have
// spec.managementApi.accountRef): from the cache only, so that a refusal
// reads no Secret and calls nothing.
func (a *Accounts) Resolve(ctx context.Context, watch *swv1.ServiceWatch) Grant {
	name := watch.Spec.ManagementAPI.AccountRef.Name
	if !a.Enabled() {
		return refused(swv1.ReasonAccountNotFound, "off", "this manager serves no ClusterCloudAccounts (its --account-namespace is empty): use spec.managementApi.secretRef")
	}
	if !a.Installed() {
		return refused(swv1.ReasonAccountNotFound, "not-installed", "the ClusterCloudAccount CRD is not installed in this cluster, so this manager serves no accounts until it is (it starts then, without a restart): ask the platform team to apply the release's CRDs, or use spec.managementApi.secretRef")
	}
	var account swv1.ClusterCloudAccount
	if err := a.Client.Get(ctx, client.ObjectKey{Name: name}, &account); err != nil {
		if apierrors.IsNotFound(err) {
			return refused(swv1.ReasonAccountNotFound, "absent", fmt.Sprintf("ClusterCloudAccount %q not found: ask the platform team for the name of the account to use (kubectl get clustercloudaccounts)", name))
		}
		return refused(swv1.ReasonSecretUnreadable, "unread", fmt.Sprintf("reading ClusterCloudAccount %q: %v", name, err))
	}
	subject, err := a.subjectOf(ctx, watch)
	if err != nil {
		return refused(swv1.ReasonSecretUnreadable, "unread", err.Error())
	}
	trigger := fmt.Sprintf("%s/%d", account.UID, account.Generation)
	if err := DecideUse(&account, subject); err != nil {
		g := refused(swv1.ReasonAccountNotAllowed, "", err.Error()+"; no Secret was read and nothing was sent")
		g.Trigger = trigger + "|" + g.Refusal.Message
		return g
	}
	a.noteShares(&account)
	return Grant{Management: a.credential(account.Spec.ManagementAPI, "managementApi", name), Alert: a.alertCredential(&account),
		AlertToken: subject.AlertToken, Trigger: trigger}
}

func refused(reason, trigger, message string) Grant {
	return Grant{Refusal: &Refusal{Reason: reason, Message: message}, Trigger: trigger}
}

// subjectOf is the watch as the account's conditions see it: its namespace
// with the labels the API server has for it, what it reads, and whether it
// reads alerts with the account's alert token.
func (a *Accounts) subjectOf(ctx context.Context, watch *swv1.ServiceWatch) (Subject, error) {
	var ns corev1.Namespace
	if err := a.Client.Get(ctx, client.ObjectKey{Name: watch.Namespace}, &ns); err != nil {
		return Subject{}, fmt.Errorf("reading namespace %q: %w", watch.Namespace, err)
	}
	return Subject{Namespace: ns.Name, NamespaceLabels: ns.Labels,
		OrganizationID: watch.Spec.OrganizationID, ServiceID: watch.Spec.ServiceID, AlertToken: ReadsAlertToken(watch)}, nil
}

func (a *Accounts) credential(spec swv1.AccountAPISpec, field, account string) Credential {
	return Credential{URL: spec.URL, Field: fmt.Sprintf("ClusterCloudAccount %q spec.%s.url", account, field),
		Secret: types.NamespacedName{Namespace: a.Namespace, Name: spec.SecretRef.Name}}
}

func (a *Accounts) alertCredential(account *swv1.ClusterCloudAccount) *Credential {
	if account.Spec.AlertAPI == nil {
		return nil
	}
	c := a.credential(account.Spec.AlertAPI.AccountAPISpec, "alertApi", account.Name)
	return &c
}

// Used records the management key a watch just read through the account,
// by its digest: the account's status shows that key's budget.
func (a *Accounts) Used(account, url string, digest ratebudget.CredentialID) {
	a.mu.Lock()
	if a.keys == nil {
		a.keys = map[string]usedKey{}
	}
	before, known := a.keys[account]
	a.keys[account] = usedKey{url: url, digest: digest}
	if known && before != a.keys[account] {
		a.release(before)
	}
	a.bind(account)
	learned := a.learned
	a.mu.Unlock()
	if learned == nil || (known && before == a.keys[account]) {
		return
	}
	select { // best effort: the status is refreshed every budgetRefresh anyway
	case learned <- event.GenericEvent{Object: &swv1.ClusterCloudAccount{ObjectMeta: metav1.ObjectMeta{Name: account}}}:
	default:
	}
}

func (a *Accounts) usedKey(account string) (usedKey, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k, ok := a.keys[account]
	return k, ok
}

func (a *Accounts) forget(account string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if k, ok := a.keys[account]; ok {
		a.release(k)
	}
	delete(a.keys, account)
	delete(a.shares, account)
}

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
