package controller

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/accountcontroller"
	"github.com/servicewatch/servicewatch/internal/alerts"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// apiAccess is what the parts of one API need besides the credential itself,
// or why they cannot run.
type apiAccess struct {
	url string
	// digest names the credential; when unread, it is all that is known
	// of it yet.
	digest cloudapi.CredentialDigest
	// unread: the Secret was not read for this sync (its digest at this
	// version was known); the credential is read once the sync is admitted.
	unread  bool
	failure *failure
}

// budget is the label of api's budget at a's URL and credential, as the
// metrics and status.heldBudgets name it.
func (a apiAccess) budget(api string) string { return ratebudget.Fingerprint(api, a.url, a.digest) }

// managementAccess is what the management API parts need, or why they cannot run.
type managementAccess struct {
	apiAccess
	creds cloudapi.BasicCredentials
}

func newManagementAccess(url string, creds cloudapi.BasicCredentials) managementAccess {
	return managementAccess{apiAccess: apiAccess{url: url, digest: cloudapi.DigestOf(creds)}, creds: creds}
}

// alertAccess is what the alerts part needs, or why it cannot run.
type alertAccess struct {
	apiAccess
	token cloudapi.BearerToken
}

func newAlertAccess(url string, token cloudapi.BearerToken) alertAccess {
	return alertAccess{apiAccess: apiAccess{url: url, digest: cloudapi.DigestOf(token)}, token: token}
}

// apiCredential is where one API's calls go and which Secret holds their
// credential, or why the watch may not call (see accountcontroller.SourceOf).
type apiCredential = accountcontroller.Source

func (r *ServiceWatchReconciler) managementCredential(ctx context.Context, watch *swv1.ServiceWatch) apiCredential {
	return r.Accounts.SourceOf(ctx, watch, false, accountcontroller.Fallbacks{ManagementURL: r.Options.ManagementAPIURL})
}

func (r *ServiceWatchReconciler) alertCredential(ctx context.Context, watch *swv1.ServiceWatch) apiCredential {
	return r.Accounts.SourceOf(ctx, watch, true, accountcontroller.Fallbacks{AlertURL: r.Options.AlertAPIURL})
}

// knownAccess is the access to c's API as far as it is known without
// reading the Secret at version: failed when the manager may not call the
// URL, by its digest when the digest at that version is known (a sync that
// waits for its budget asks again without reading Secrets). read says that
// the Secret must be read.
func (r *ServiceWatchReconciler) knownAccess(c apiCredential, version string) (a apiAccess, read bool) {
	if c.Refusal != nil {
		return apiAccess{url: c.URL, failure: newFailure(c.Refusal.Reason, "%s", c.Refusal.Message)}, false
	}
	if f := r.urlNotAllowed(c.URL, c.SpecURL, c.Field, c.Flag); f != nil {
		return apiAccess{url: c.URL, failure: f}, false
	}
	if d, ok := r.digests.Get(c.Secret, c.Kind, version); ok && c.URL != "" {
		return apiAccess{url: c.URL, digest: d, unread: true}, false
	}
	return apiAccess{url: c.URL}, true
}

// readCredential reads the Secret of c's credential. The caller makes its
// access from the values; remember then sets the access's failure, if any,
// and records its digest at the version read.
func (r *ServiceWatchReconciler) readCredential(ctx context.Context, c apiCredential) (data map[string]string, remember func(*apiAccess)) {
	data, version, f := r.readSecret(ctx, c.Secret, c.Keys...)
	if f == nil && c.URL == "" {
		f = newFailure(swv1.ReasonConfigurationError, "no %s URL: set %s or the manager's %s", c.API, c.Field, c.Flag)
	}
	return data, func(a *apiAccess) {
		a.failure = f
		if f == nil {
			r.digests.Put(c.Secret, c.Kind, version, a.digest)
			r.Accounts.Read(c, a.digest)
		}
	}
}

// managementAccess is the watch's access to the management API. With the
// referenced Secret's version (from secretwatch.Watch) and a digest known for it,
// it reads nothing.
func (r *ServiceWatchReconciler) managementAccess(ctx context.Context, watch *swv1.ServiceWatch, versions map[string]string) managementAccess {
	return knownOrRead(ctx, r, r.managementCredential(ctx, watch), versions, r.readManagementAccess,
		func(a apiAccess) managementAccess { return managementAccess{apiAccess: a} })
}

func (r *ServiceWatchReconciler) readManagementAccess(ctx context.Context, c apiCredential) managementAccess {
	data, remember := r.readCredential(ctx, c)
	m := newManagementAccess(c.URL, cloudapi.NewBasicCredentials(data[swv1.KeyIDKey], data[swv1.KeySecretKey]))
	remember(&m.apiAccess)
	return m
}

// alertAccess is the watch's access to the alert API; see managementAccess.
func (r *ServiceWatchReconciler) alertAccess(ctx context.Context, watch *swv1.ServiceWatch, versions map[string]string) alertAccess {
	if !alerts.InUse(&watch.Spec) || alerts.FromManagement(&watch.Spec) {
		return alertAccess{} // from the management API, see accessOf
	}
	if watch.Spec.AlertAPI == nil && watch.Spec.ManagementAPI.AccountRef == nil { // the CRD forbids this; an old object may still have it
		return alertAccess{apiAccess: apiAccess{failure: newFailure(swv1.ReasonConfigurationError, "spec.alertApi is required when spec.alertIds or spec.alertSelector is set and spec.alertsFrom is AlertAPI")}}
	}
	return knownOrRead(ctx, r, r.alertCredential(ctx, watch), versions, r.readAlertAccess,
		func(a apiAccess) alertAccess { return alertAccess{apiAccess: a} })
}

// knownOrRead is the access to c's API: as far as it is known without
// reading the Secret at its version in versions (known), else read.
func knownOrRead[A any](ctx context.Context, r *ServiceWatchReconciler, c apiCredential, versions map[string]string,
	read func(context.Context, apiCredential) A, known func(apiAccess) A) A {
	if a, mustRead := r.knownAccess(c, versions[c.VersionKey()]); !mustRead {
		return known(a)
	}
	return read(ctx, c)
}

func (r *ServiceWatchReconciler) readAlertAccess(ctx context.Context, c apiCredential) alertAccess {
	data, remember := r.readCredential(ctx, c)
	a := newAlertAccess(c.URL, cloudapi.NewBearerToken(data[swv1.TokenKey]))
	remember(&a.apiAccess)
	return a
}

// urlNotAllowed is the failure of a watch whose API URL the manager may not
// call: checked before its Secret is read, so a credential never even
// leaves the API server for a URL the cluster admin has not allowed. url is
// the URL in use, specURL the spec's (empty when the manager's fallback
// flag applies); an empty url is left to the configuration check.
func (r *ServiceWatchReconciler) urlNotAllowed(url, specURL, field, flag string) *failure {
	if url == "" {
		return nil
	}
	err := r.Options.AllowedAPIURLs.Allows(url)
	if err == nil {
		return nil
	}
	from := field
	if specURL == "" {
		from = "the manager's " + flag + " (" + field + " is empty)"
	}
	return newFailure(swv1.ReasonURLNotAllowed, "%s: %v; ask the cluster admin, who sets --allowed-api-urls", from, err)
}

// secretVersioner knows the resourceVersion of a Secret, "" for one that
// does not exist.
type secretVersioner interface {
	Version(ctx context.Context, secret types.NamespacedName) string
}

// secretVersions are the resourceVersions of the referenced Secrets by name,
// as the Secret watch knows them; "" for a Secret that does not exist.
func (r *ServiceWatchReconciler) secretVersions(ctx context.Context, watch *swv1.ServiceWatch) map[string]string {
	versions := make(map[string]string, 2)
	for _, name := range referencedSecrets(watch) {
		versions[name] = r.secrets.Version(ctx, types.NamespacedName{Namespace: watch.Namespace, Name: name})
	}
	if watch.Spec.ManagementAPI.AccountRef != nil {
		grant := r.Accounts.Resolve(ctx, watch)
		versions[accountTrigger] = grant.Trigger
		for _, secret := range grant.Secrets(r.Options.Scope.Namespaces) {
			versions[secret.String()] = r.secrets.Version(ctx, secret)
			versions[accountTrigger] += "|" + versions[secret.String()] // its change syncs the watch, as its own Secret's
		}
	}
	return versions
}

// accessOf is what the parts need of the referenced Secrets at versions, the
// two Secrets at once; see managementAccess.
func (r *ServiceWatchReconciler) accessOf(ctx context.Context, watch *swv1.ServiceWatch, versions map[string]string) (m managementAccess, a alertAccess) {
	var wg sync.WaitGroup
	wg.Go(func() { m = r.managementAccess(ctx, watch, versions) })
	wg.Go(func() { a = r.alertAccess(ctx, watch, versions) })
	wg.Wait()
	if alerts.FromManagement(&watch.Spec) { // the management key's host, credential and budget; nothing more to read
		a = alertAccess{apiAccess: m.apiAccess}
		a.unread = false
	}
	return m, a
}

// readSecret reads the named keys of a Secret in the watch's own namespace,
// straight from the API server: Secrets are never cached (secretwatch.Watch keeps
// only referenced ones' versions), so their data never sits in the
// manager's memory between syncs. It returns the
// Secret's resourceVersion with the values.
func (r *ServiceWatchReconciler) readSecret(ctx context.Context, ref types.NamespacedName, keys ...string) (data map[string]string, version string, f *failure) {
	namespace, name := ref.Namespace, ref.Name
	var secret corev1.Secret
	// client-go logs whole response bodies at high verbosity through the
	// context's logger; for a Secret that body is the credential.
	quiet := logr.NewContext(ctx, logr.Discard())
	err := r.APIReader.Get(quiet, ref, &secret)
	switch {
	case apierrors.IsNotFound(err):
		return nil, "", newFailure(swv1.ReasonSecretNotFound, "Secret %s/%s not found: create it with the keys %s", namespace, name, quoteKeys(keys))
	case err != nil:
		return nil, "", newFailure(swv1.ReasonSecretUnreadable, "reading Secret %s/%s: %v", namespace, name, err)
	}
	data = make(map[string]string, len(keys))
	for _, key := range keys {
		value := string(secret.Data[key])
		if value == "" {
			return nil, "", newFailure(swv1.ReasonSecretKeyMissing, "Secret %s/%s has no key %q (or it is empty): it needs the keys %s", namespace, name, key, quoteKeys(keys))
		}
		if len(value) > cloudapi.MaxCredentialBytes { // its length is not shown: it is the secret's
			return nil, "", newFailure(swv1.ReasonConfigurationError, "Secret %s/%s key %q is longer than %d bytes, the most a credential may have",
				namespace, name, key, cloudapi.MaxCredentialBytes)
		}
		data[key] = value
	}
	return data, secret.ResourceVersion, nil
}

func quoteKeys(keys []string) string {
	quoted := make([]string, len(keys))
	for i, k := range keys {
		quoted[i] = strconv.Quote(k)
	}
	return strings.Join(quoted, " and ")
}
