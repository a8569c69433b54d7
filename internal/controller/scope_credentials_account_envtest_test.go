package controller_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/accountcontroller"
	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// operatorNamespace is the suite manager's --account-namespace: where the
// accounts' Secrets are.
const operatorNamespace = "servicewatch-system"

// secretReads counts the Secrets the suite's reconciler reads from the API
// server, by namespace and name.
type secretReads struct {
	mu    sync.Mutex
	reads map[types.NamespacedName]int
}

var suiteSecretReads = &secretReads{}

func (s *secretReads) wrap(r client.Reader) client.Reader {
	return &countingSecrets{Reader: r, counts: s}
}

func (s *secretReads) of(secret types.NamespacedName) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads[secret]
}

type countingSecrets struct {
	client.Reader
	counts *secretReads
}

func (c *countingSecrets) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Secret); ok {
		c.counts.mu.Lock()
		if c.counts.reads == nil {
			c.counts.reads = map[types.NamespacedName]int{}
		}
		c.counts.reads[key]++
		c.counts.mu.Unlock()
	}
	return c.Reader.Get(ctx, key, obj, opts...)
}

// accountName is the fixture's account, and the name of its key's Secret in
// the operator's namespace.
func (f *fixture) accountName() string { return "acct-" + f.ns }

func (f *fixture) accountSecret() types.NamespacedName {
	return types.NamespacedName{Namespace: operatorNamespace, Name: f.accountName()}
}

// createAccountSecrets puts the fixture's key and token in the operator's
// namespace, where tenants cannot read them.
func (f *fixture) createAccountSecrets() {
	f.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: f.accountName(), Namespace: operatorNamespace},
		StringData: map[string]string{"keyId": f.keyID, "keySecret": f.keySecret}})
	f.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: f.accountName() + "-token", Namespace: operatorNamespace},
		StringData: map[string]string{"token": f.token}})
	f.t.Cleanup(func() {
		for _, name := range []string{f.accountName(), f.accountName() + "-token"} {
			_ = env.Client.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: operatorNamespace}})
		}
	})
}

// newAccount is the fixture's account, on its fake cloud, allowing what
// conds allow.
func (f *fixture) newAccount(conds ...swv1.AccountCondition) *swv1.ClusterCloudAccount {
	return &swv1.ClusterCloudAccount{ObjectMeta: metav1.ObjectMeta{Name: f.accountName()}, Spec: swv1.ClusterCloudAccountSpec{
		ManagementAPI: swv1.AccountAPISpec{URL: f.fake.URL, SecretRef: swv1.SecretReference{Name: f.accountName()}},
		AlertAPI:      &swv1.AccountAlertAPISpec{AccountAPISpec: swv1.AccountAPISpec{URL: f.fake.URL, SecretRef: swv1.SecretReference{Name: f.accountName() + "-token"}}},
		Conditions:    conds,
	}}
}

func (f *fixture) createAccount(conds ...swv1.AccountCondition) {
	f.t.Helper()
	f.create(f.newAccount(conds...))
	f.t.Cleanup(func() { _ = env.Client.Delete(context.Background(), f.newAccount()) })
}

// accountWatch is a watch of the fake's default service and alerts that
// uses the fixture's account, with no Secret of its own.
func (f *fixture) accountWatch(name string, alertIDs ...string) *swv1.ServiceWatch {
	w := f.newWatch(name, alertIDs...)
	w.Spec.ManagementAPI = swv1.ManagementAPISpec{AccountRef: &swv1.AccountRef{Name: f.accountName()}}
	w.Spec.AlertAPI = nil
	return w
}

func (f *fixture) updateAccount(change func(*swv1.ClusterCloudAccount)) {
	f.t.Helper()
	a := testenv.Get[swv1.ClusterCloudAccount](f.ctx, f.t, env.Client, client.ObjectKey{Name: f.accountName()})
	change(a)
	if err := env.Client.Update(f.ctx, a); err != nil {
		f.t.Fatalf("updating the account: %v", err)
	}
}

func (f *fixture) waitForAccount(what string, check func(*swv1.ClusterCloudAccount) bool) *swv1.ClusterCloudAccount {
	f.t.Helper()
	var a *swv1.ClusterCloudAccount
	deadline := time.Now().Add(20 * time.Second)
	for {
		a = testenv.Get[swv1.ClusterCloudAccount](f.ctx, f.t, env.Client, client.ObjectKey{Name: f.accountName()})
		if check(a) {
			return a
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("the account is not %s: %+v", what, a.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (f *fixture) labelNamespace(labels map[string]string) {
	f.t.Helper()
	ns := testenv.Get[corev1.Namespace](f.ctx, f.t, env.Client, client.ObjectKey{Name: f.ns})
	for k, v := range labels {
		metav1.SetMetaDataLabel(&ns.ObjectMeta, k, v)
	}
	if err := env.Client.Update(f.ctx, ns); err != nil {
		f.t.Fatalf("labeling the namespace: %v", err)
	}
}

// stalledWith tells a watch Stalled and not Ready for reason, the message
// saying every one of words.
func stalledWith(reason string, words ...string) func(*swv1.ServiceWatch) bool {
	return func(w *swv1.ServiceWatch) bool {
		c := meta.FindStatusCondition(w.Status.Conditions, swv1.ConditionStalled)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason || w.IsReady() {
			return false
		}
		for _, word := range words {
			if !strings.Contains(c.Message, word) {
				return false
			}
		}
		return true
	}
}

// A watch whose namespace the account allows syncs with the account's key,
// which no tenant can read (the operator's namespace), and has no Secret of
// its own; the account counts it.
func TestAccountServesAnAllowedNamespace(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.createAccountSecrets()
	f.createAccount(swv1.AccountCondition{Namespaces: []string{f.ns}})
	f.create(f.accountWatch("via-account", fakecloud.DefaultAlertID))
	w := f.waitFor("via-account", 20*time.Second, "Ready", isReady)
	if w.Status.Summary == nil || w.Status.Summary.Pipes == 0 || w.Status.Summary.Alerts != 1 {
		t.Errorf("summary %+v, want the fake's pipes and 1 alert", w.Status.Summary)
	}
	if n := suiteSecretReads.of(f.accountSecret()); n == 0 {
		t.Error("the account's Secret was never read, yet the watch is Ready")
	}
	a := f.waitForAccount("counting the watch", func(a *swv1.ClusterCloudAccount) bool {
		return a.Status.Watches == 1 && a.Status.NamespaceCount == 1 && len(a.Status.Namespaces) == 1 &&
			a.Status.Namespaces[0] == swv1.AccountNamespaceUse{Name: f.ns, Watches: 1, Allowed: 1, Weight: 1, SharePercent: 100}
	})
	if !meta.IsStatusConditionTrue(a.Status.Conditions, swv1.ConditionReady) {
		t.Errorf("the account is not Ready: %+v", a.Status.Conditions)
	}
	// The key's budget as the manager sees it: the suite's 1000 calls/s.
	a = f.waitForAccount("showing its key's budget", func(a *swv1.ClusterCloudAccount) bool { return a.Status.Budget != nil })
	if a.Status.Budget.Allowance == "" || a.Status.Budget.Allowance == "0" || a.Status.Budget.HeldUntil != nil {
		t.Errorf("budget %+v, want an allowance and no hold", a.Status.Budget)
	}
}

// A watch in a namespace the account does not allow is Stalled with
// AccountNotAllowed, saying which condition failed, before any Secret is
// read or any call made; it syncs as soon as the account allows it.
func TestAccountRefusesAnotherNamespaceForFree(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.createAccountSecrets()
	f.createAccount(swv1.AccountCondition{Namespaces: []string{"someone-else"}})
	f.create(f.accountWatch("refused", fakecloud.DefaultAlertID))
	f.waitFor("refused", 20*time.Second, "Stalled AccountNotAllowed",
		stalledWith(swv1.ReasonAccountNotAllowed, f.accountName(), "conditions[0]", `namespace "`+f.ns+`"`))
	f.waitForEvent("refused", swv1.ReasonAccountNotAllowed) // the tenant is told, in an event too
	if n := suiteSecretReads.of(f.accountSecret()); n != 0 {
		t.Errorf("a refused watch read the account's Secret %d times", n)
	}
	if n := auditedReads(t, f.accountSecret()); n != 0 {
		t.Errorf("the API server's audit log holds %d reads of the account's Secret by a refused watch", n)
	}
	if calls := f.fake.CallLog(); len(calls) != 0 {
		t.Errorf("a refused watch called the cloud %d times: %+v", len(calls), calls)
	}
	f.waitForAccount("counting the refused watch", func(a *swv1.ClusterCloudAccount) bool {
		return len(a.Status.Namespaces) == 1 && a.Status.Namespaces[0] == swv1.AccountNamespaceUse{Name: f.ns, Watches: 1, Allowed: 0, Weight: 1}
	})

	f.updateAccount(func(a *swv1.ClusterCloudAccount) {
		a.Spec.Conditions[0].Namespaces = append(a.Spec.Conditions[0].Namespaces, f.ns)
	})
	f.waitFor("refused", 20*time.Second, "Ready once allowed", isReady)
	if n := auditedReads(t, f.accountSecret()); n == 0 {
		t.Error("the audit log holds no read of the account's Secret, yet the allowed watch is Ready: the audit sees nothing")
	}
}

// auditedReads is how many times the API server's audit log says the
// Secret was read.
func auditedReads(t *testing.T, secret types.NamespacedName) int {
	t.Helper()
	n, err := env.SecretReads(secret.Namespace, secret.Name)
	if err != nil {
		t.Fatalf("reading the audit log: %v", err)
	}
	return n
}

// A service the account's condition does not name is refused as well.
func TestAccountRefusesAServiceItDoesNotName(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.createAccountSecrets()
	f.createAccount(swv1.AccountCondition{Namespaces: []string{f.ns}, ServiceIDs: []string{"00000000-0000-0000-0000-000000000000"}})
	f.create(f.accountWatch("other-service"))
	f.waitFor("other-service", 20*time.Second, "Stalled AccountNotAllowed",
		stalledWith(swv1.ReasonAccountNotAllowed, "service "+fakecloud.DefaultServiceID, "serviceIds"))
	if n, calls := suiteSecretReads.of(f.accountSecret())+auditedReads(t, f.accountSecret()), f.fake.CallLog(); n != 0 || len(calls) != 0 {
		t.Errorf("a refused watch read the Secret %d times and called the cloud %d times", n, len(calls))
	}
}

// A watch that names an account that does not exist is Stalled with
// AccountNotFound, and syncs as soon as the account is created.
func TestAccountNotFoundThenCreated(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.createAccountSecrets()
	f.create(f.accountWatch("early"))
	f.waitFor("early", 20*time.Second, "Stalled AccountNotFound", stalledWith(swv1.ReasonAccountNotFound, f.accountName()))
	if n, calls := suiteSecretReads.of(f.accountSecret())+auditedReads(t, f.accountSecret()), f.fake.CallLog(); n != 0 || len(calls) != 0 {
		t.Errorf("a watch of a missing account read the Secret %d times and called the cloud %d times", n, len(calls))
	}
	f.createAccount(swv1.AccountCondition{Namespaces: []string{f.ns}})
	f.waitFor("early", 20*time.Second, "Ready once the account exists", isReady)
}

// A selector on a label the tenant sets is the tenant's to satisfy: the
// namespace is refused while it lacks the label, and allowed once the
// tenant adds it. Only kubernetes.io/metadata.name cannot be set by a
// tenant: a selector on it (or a list of names) is the platform team's.
func TestAccountTenantRelabelsItsNamespace(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.createAccountSecrets()
	f.createAccount(
		swv1.AccountCondition{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "platform-only"}}},
		swv1.AccountCondition{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"billing.example.com/team": "data"}}})
	f.create(f.accountWatch("relabelled"))
	f.waitFor("relabelled", 20*time.Second, "Stalled AccountNotAllowed", stalledWith(swv1.ReasonAccountNotAllowed, "conditions[0]", "conditions[1]"))

	// Faking the trusted label is impossible: the API server keeps it the
	// namespace's name.
	f.labelNamespace(map[string]string{"kubernetes.io/metadata.name": "platform-only"})
	ns := testenv.Get[corev1.Namespace](f.ctx, t, env.Client, client.ObjectKey{Name: f.ns})
	if got := ns.Labels["kubernetes.io/metadata.name"]; got != f.ns {
		t.Fatalf("the API server let the tenant set kubernetes.io/metadata.name to %q", got)
	}
	if w := f.get("relabelled"); w.IsReady() {
		t.Fatal("a namespace that tried to fake the trusted label was allowed")
	}
	if n, calls := suiteSecretReads.of(f.accountSecret())+auditedReads(t, f.accountSecret()), f.fake.CallLog(); n != 0 || len(calls) != 0 {
		t.Errorf("a refused watch read the Secret %d times and called the cloud %d times", n, len(calls))
	}

	// A label the tenant may set is tenant-controlled: adding it allows the
	// namespace, at once.
	f.labelNamespace(map[string]string{"billing.example.com/team": "data"})
	f.waitFor("relabelled", 20*time.Second, "Ready once the tenant's label matches", isReady)
}

// An account deleted while in use stalls its watches (AccountNotFound),
// which keep their last data and call nothing more.
func TestAccountDeletedWhileInUse(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.createAccountSecrets()
	f.createAccount(swv1.AccountCondition{NamespaceRegexes: []string{strings.ReplaceAll(f.ns, "-", "[-]")}})
	f.create(f.accountWatch("in-use"))
	ready := f.waitFor("in-use", 20*time.Second, "Ready", isReady)
	if err := env.Client.Delete(f.ctx, f.newAccount()); err != nil {
		t.Fatal(err)
	}
	w := f.waitFor("in-use", 20*time.Second, "Stalled AccountNotFound", stalledWith(swv1.ReasonAccountNotFound, f.accountName()))
	if len(w.Status.Pipes) == 0 || len(w.Status.Pipes) != len(ready.Status.Pipes) || w.Status.Summary == nil || w.Status.Summary.Pipes != ready.Status.Summary.Pipes {
		t.Errorf("the stalled watch lost its data: %d pipes (had %d), summary %+v", len(w.Status.Pipes), len(ready.Status.Pipes), w.Status.Summary)
	}
	calls := len(f.fake.CallLog())
	if again := f.requestSyncAndWait("in-use"); !stalledWith(swv1.ReasonAccountNotFound)(again) {
		t.Errorf("a requested sync of a watch of a deleted account: %+v", again.Status.Conditions)
	}
	if after := len(f.fake.CallLog()); after != calls {
		t.Errorf("a watch of a deleted account called the cloud %d more times", after-calls)
	}
}

// A sync through an account that waits for room in its key's budget knows
// the key by its digest at the Secret's version, as one with a Secret of its
// own does: the account's Secret is read once before the first ask and once
// more when admitted, however often the sync was told to wait.
func TestAWaitingAccountSyncReadsItsSecretOnce(t *testing.T) {
	f := newFixture(t)
	f.createAccountSecrets()
	f.createAccount(swv1.AccountCondition{Namespaces: []string{f.ns}})
	w := f.accountWatch("waiting")
	syncMetrics, err := metrics.NewSync(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	reader := &secretReads{}
	cloud := &refusingCloud{refuse: true}
	r := controller.NewTestReconciler(t.Context(), env.Client, reader.wrap(env.Client), cloud, cloud, syncMetrics)
	r.UseAccounts(&accountcontroller.Accounts{Client: env.Client, Namespace: operatorNamespace})
	for i := range 5 {
		if wait := r.StartSync(f.ctx, w); wait != 5*time.Second {
			t.Fatalf("ask %d: the sync waits %v, want the budget's 5s", i, wait)
		}
	}
	if got := reader.of(f.accountSecret()); got != 1 {
		t.Errorf("5 asks read the account's Secret %d times, want 1", got)
	}
	cloud.refuse = false
	if wait := r.StartSync(f.ctx, w); wait != 0 {
		t.Fatalf("admitted, the sync still waits %v", wait)
	}
	if got := reader.of(f.accountSecret()); got != 2 {
		t.Errorf("after admission %d reads of the account's Secret, want 2: it is read once more to call", got)
	}
}

// A rotated account key is used at the next sync: the manager knows the
// key by its digest only at the Secret's version, which its Secret watch
// follows in the operator's namespace.
func TestAccountKeyRotated(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.createAccountSecrets()
	f.createAccount(swv1.AccountCondition{Namespaces: []string{f.ns}})
	f.create(f.accountWatch("rotated"))
	f.waitFor("rotated", 20*time.Second, "Ready", isReady)

	secret := testenv.Get[corev1.Secret](f.ctx, t, env.Client, f.accountSecret())
	secret.Data = nil
	secret.StringData = map[string]string{"keyId": f.keyID, "keySecret": secretMarker + "revoked"}
	if err := env.Client.Update(f.ctx, secret); err != nil {
		t.Fatal(err)
	}
	f.requestSync("rotated", "after-rotation")
	f.waitFor("rotated", 20*time.Second, "Unauthorized with the rotated key", stalledWith(swv1.ReasonUnauthorized))
}

// A change to an account's key syncs every watch that uses it, wherever it
// is, at once: not at its next periodic sync, an hour away. The Secret is
// in the operator's namespace, the watches in two tenants' namespaces.
func TestAccountKeyRotationSyncsItsWatchesEverywhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	other := newNamedFixture(t, t.Name()+"-other")
	f.createAccountSecrets()
	f.createAccount(swv1.AccountCondition{Namespaces: []string{f.ns, other.ns}})
	for _, in := range []*fixture{f, other} {
		w := f.accountWatch("hourly")
		w.Namespace, w.Spec.Interval = in.ns, metav1.Duration{Duration: time.Hour}
		in.create(w)
		in.waitFor("hourly", 20*time.Second, "Ready", isReady)
	}

	secret := testenv.Get[corev1.Secret](f.ctx, t, env.Client, f.accountSecret())
	secret.Data = nil
	secret.StringData = map[string]string{"keyId": f.keyID, "keySecret": secretMarker + "revoked"}
	if err := env.Client.Update(f.ctx, secret); err != nil {
		t.Fatal(err)
	}
	for _, in := range []*fixture{f, other} {
		in.waitFor("hourly", 20*time.Second, "Unauthorized with the rotated key, long before its hourly sync", stalledWith(swv1.ReasonUnauthorized))
	}
}

// An account that allows a namespace only for one service does not give it
// the account's alert token, which reads alerts of any service: a watch
// that names an alert ID, or selects alerts by name, with it is Stalled
// with AccountNotAllowed before any Secret is read or any call made. The
// same namespace reads its service's alerts from the management API, which
// lists that service's alerts only; once the account's owner says the alert
// API is Unrestricted, the token is given.
func TestAccountAlertTokenNotGivenToAServiceCondition(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.createAccountSecrets()
	f.createAccount(swv1.AccountCondition{Namespaces: []string{f.ns}, ServiceIDs: []string{fakecloud.DefaultServiceID}})
	f.create(f.accountWatch("by-id", fakecloud.DefaultAlertID))
	byName := f.accountWatch("by-name")
	byName.Spec.AlertSelector = &swv1.AlertSelector{Name: "*"}
	f.create(byName)
	for _, name := range []string{"by-id", "by-name"} {
		f.waitFor(name, 20*time.Second, "Stalled AccountNotAllowed",
			stalledWith(swv1.ReasonAccountNotAllowed, "conditions[0]", "serviceIds", "alert token", "alertsFrom: ManagementAPI", "scope: Unrestricted"))
	}
	token := types.NamespacedName{Namespace: operatorNamespace, Name: f.accountName() + "-token"}
	for _, secret := range []types.NamespacedName{f.accountSecret(), token} {
		if n := suiteSecretReads.of(secret) + auditedReads(t, secret); n != 0 {
			t.Errorf("refused watches read the account's Secret %s %d times", secret.Name, n)
		}
	}
	if calls := f.fake.CallLog(); len(calls) != 0 {
		t.Errorf("refused watches called the cloud %d times: %+v", len(calls), calls)
	}

	managed := f.accountWatch("managed", fakecloud.DefaultAlertID)
	managed.Spec.AlertsFrom = swv1.AlertsFromManagementAPI
	f.create(managed)
	f.waitFor("managed", 20*time.Second, "Ready with the management API's alerts", isReady)
	f.waitForAccount("counting one allowed watch of three", func(a *swv1.ClusterCloudAccount) bool {
		return len(a.Status.Namespaces) == 1 && a.Status.Namespaces[0].Watches == 3 && a.Status.Namespaces[0].Allowed == 1
	})

	f.updateAccount(func(a *swv1.ClusterCloudAccount) { a.Spec.AlertAPI.Scope = swv1.AlertTokenUnrestricted })
	for _, name := range []string{"by-id", "by-name"} {
		f.waitFor(name, 20*time.Second, "Ready once the alert API is Unrestricted", isReady)
	}
}

// A watch on an account whose alerts come from the management API reads
// them with the account's key, from the service's list: no Secret of its
// own, no alert token, and no call to an alert host.
func TestAccountServesManagementAPIAlerts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.createAccountSecrets()
	f.createAccount(swv1.AccountCondition{Namespaces: []string{f.ns}})
	w := f.accountWatch("managed", fakecloud.DefaultAlertID, fakecloud.ServiceOnlyAlertID)
	w.Spec.AlertsFrom = swv1.AlertsFromManagementAPI
	f.create(w)
	w = f.waitFor("managed", 20*time.Second, "Ready", isReady)
	if w.Status.AlertsReadBy != swv1.AlertsReadByList || w.Status.Summary.Alerts != 2 {
		t.Errorf("alertsReadBy %q, summary.alerts %d: want List and 2", w.Status.AlertsReadBy, w.Status.Summary.Alerts)
	}
	key := fakecloud.ManagementKey{KeyID: f.keyID, KeySecret: f.keySecret}.Fingerprint()
	lists := 0
	for _, c := range f.fake.CallLog() {
		switch c.Operation {
		case fakecloud.OpListServiceAlerts:
			lists++
			if c.KeyFingerprint != key {
				t.Errorf("the service's alerts were listed with key %q, want the account's %q", c.KeyFingerprint, key)
			}
		case fakecloud.OpGetAlert, fakecloud.OpListAlerts:
			t.Errorf("a call %s %s to the alert host: the alerts come from the management API", c.Operation, c.Path)
		}
	}
	if lists == 0 {
		t.Error("the service's alerts were never listed")
	}
	token := types.NamespacedName{Namespace: operatorNamespace, Name: f.accountName() + "-token"}
	if n := suiteSecretReads.of(token); n != 0 {
		t.Errorf("the account's alert token was read %d times; the management key serves these alerts", n)
	}
	// Not even its metadata: the watch never needs the token's Secret.
	if n := auditedReads(t, token); n != 0 {
		t.Errorf("the API server's audit log holds %d reads of the account's alert token; the management key serves these alerts", n)
	}
}
