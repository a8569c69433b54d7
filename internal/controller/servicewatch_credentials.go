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

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// The keys the referenced Secrets must have.
const (
	keyIDKey     = "keyId"
	keySecretKey = "keySecret"
	tokenKey     = "token"
)

// managementAccess is what the management API parts need, or why they cannot run.
type managementAccess struct {
	url   string
	creds cloudapi.BasicCredentials
	// digest names the credential; when unread, it is all that is known
	// of it yet.
	digest cloudapi.CredentialDigest
	// unread: the Secret was not read for this sync (its digest at this
	// version was known); the credential is read once the sync is admitted.
	unread  bool
	failure *failure
}

func newManagementAccess(url string, creds cloudapi.BasicCredentials) managementAccess {
	return managementAccess{url: url, creds: creds, digest: cloudapi.DigestOf(creds)}
}

// alertAccess is what the alerts part needs, or why it cannot run.
type alertAccess struct {
	url   string
	token cloudapi.BearerToken
	// digest and unread are as in managementAccess.
	digest  cloudapi.CredentialDigest
	unread  bool
	failure *failure
}

func newAlertAccess(url string, token cloudapi.BearerToken) alertAccess {
	return alertAccess{url: url, token: token, digest: cloudapi.DigestOf(token)}
}

// The kinds of credential a Secret holds, for credentialDigests.
const (
	managementCredential = "management"
	alertCredential      = "alert"
)

// managementAccess is the watch's access to the management API. With the
// referenced Secret's version (from secretWatch) and a digest known
// for it, it reads nothing: a sync that waits for its budget asks again
// without reading Secrets.
func (r *ServiceWatchReconciler) managementAccess(ctx context.Context, watch *swv1.ServiceWatch, version string) managementAccess {
	url := firstNonEmpty(watch.Spec.ManagementAPI.URL, r.Options.ManagementAPIURL)
	if f := r.urlNotAllowed(url, watch.Spec.ManagementAPI.URL, "spec.managementApi.url", "--management-api-url"); f != nil {
		return managementAccess{url: url, failure: f}
	}
	secret := types.NamespacedName{Namespace: watch.Namespace, Name: watch.Spec.ManagementAPI.SecretRef.Name}
	if d, ok := r.digests.get(secret, managementCredential, version); ok && url != "" {
		return managementAccess{url: url, digest: d, unread: true}
	}
	return r.readManagementAccess(ctx, watch, url)
}

func (r *ServiceWatchReconciler) readManagementAccess(ctx context.Context, watch *swv1.ServiceWatch, url string) managementAccess {
	secret := types.NamespacedName{Namespace: watch.Namespace, Name: watch.Spec.ManagementAPI.SecretRef.Name}
	data, version, f := r.readSecret(ctx, secret, keyIDKey, keySecretKey)
	if f == nil && url == "" {
		f = newFailure(swv1.ReasonConfigurationError, "no management API URL: set spec.managementApi.url or the manager's --management-api-url")
	}
	access := newManagementAccess(url, cloudapi.NewBasicCredentials(data[keyIDKey], data[keySecretKey]))
	access.failure = f
	if f == nil {
		r.digests.put(secret, managementCredential, version, access.digest)
	}
	return access
}

// alertAccess is the watch's access to the alert API; see managementAccess.
func (r *ServiceWatchReconciler) alertAccess(ctx context.Context, watch *swv1.ServiceWatch, version string) alertAccess {
	if len(watch.Spec.AlertIDs) == 0 {
		return alertAccess{}
	}
	if watch.Spec.AlertAPI == nil { // the CRD forbids this; an old object may still have it
		return alertAccess{failure: newFailure(swv1.ReasonConfigurationError, "spec.alertApi is required when spec.alertIds is not empty")}
	}
	url := firstNonEmpty(watch.Spec.AlertAPI.URL, r.Options.AlertAPIURL)
	if f := r.urlNotAllowed(url, watch.Spec.AlertAPI.URL, "spec.alertApi.url", "--alert-api-url"); f != nil {
		return alertAccess{url: url, failure: f}
	}
	secret := types.NamespacedName{Namespace: watch.Namespace, Name: watch.Spec.AlertAPI.SecretRef.Name}
	if d, ok := r.digests.get(secret, alertCredential, version); ok && url != "" {
		return alertAccess{url: url, digest: d, unread: true}
	}
	return r.readAlertAccess(ctx, watch, url)
}

func (r *ServiceWatchReconciler) readAlertAccess(ctx context.Context, watch *swv1.ServiceWatch, url string) alertAccess {
	secret := types.NamespacedName{Namespace: watch.Namespace, Name: watch.Spec.AlertAPI.SecretRef.Name}
	data, version, f := r.readSecret(ctx, secret, tokenKey)
	if f == nil && url == "" {
		f = newFailure(swv1.ReasonConfigurationError, "no alert API URL: set spec.alertApi.url or the manager's --alert-api-url")
	}
	access := newAlertAccess(url, cloudapi.NewBearerToken(data[tokenKey]))
	access.failure = f
	if f == nil {
		r.digests.put(secret, alertCredential, version, access.digest)
	}
	return access
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

// readCredentials reads the credentials that admission knew only by their
// digests, for the parts that will call: a sync reads its Secrets at most
// once more after it was admitted, however long it waited. It returns false
// when a Secret changed since its digest was admitted: the sync starts again
// (the change wakes the watch anyway).
func (r *ServiceWatchReconciler) readCredentials(ctx context.Context, in *syncInput) bool {
	sameManagement, sameAlerts := true, true
	var wg sync.WaitGroup
	if m := in.management; m.unread && m.failure == nil {
		wg.Go(func() {
			in.management = r.readManagementAccess(ctx, in.watch, m.url)
			sameManagement = in.management.failure != nil || in.management.digest == m.digest
		})
	}
	if a := in.alerts; a.unread && a.failure == nil && !in.alertsDeferred {
		wg.Go(func() {
			in.alerts = r.readAlertAccess(ctx, in.watch, a.url)
			sameAlerts = in.alerts.failure != nil || in.alerts.digest == a.digest
		})
	}
	wg.Wait()
	return sameManagement && sameAlerts
}

// credentialDigests remembers, by Secret and resourceVersion, the digest of
// the credential the Secret holds: a digest, never the credential. A watch
// that waits for room in its budget asks again with the digest; the
// credential is read from the API server only for a sync that goes ahead.
// It holds one entry per referenced Secret and kind of credential, replaced
// when the Secret changes.
type credentialDigests struct {
	mu sync.Mutex
	m  map[secretCredential]versionedDigest
}

type secretCredential struct {
	secret types.NamespacedName
	kind   string
}

type versionedDigest struct {
	version string
	digest  cloudapi.CredentialDigest
}

func newCredentialDigests() *credentialDigests {
	return &credentialDigests{m: map[secretCredential]versionedDigest{}}
}

// get returns the digest of the kind of credential the Secret held at
// version; none for an unknown version ("" when the cache has not seen the
// Secret).
func (c *credentialDigests) get(secret types.NamespacedName, kind, version string) (cloudapi.CredentialDigest, bool) {
	if version == "" {
		return cloudapi.CredentialDigest{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[secretCredential{secret: secret, kind: kind}]
	if !ok || v.version != version {
		return cloudapi.CredentialDigest{}, false
	}
	return v.digest, true
}

// put records the digest of what the Secret held at version.
func (c *credentialDigests) put(secret types.NamespacedName, kind, version string, d cloudapi.CredentialDigest) {
	if version == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[secretCredential{secret: secret, kind: kind}] = versionedDigest{version: version, digest: d}
}

// readSecret reads the named keys of a Secret in the watch's own namespace,
// straight from the API server: Secrets are never cached (secretWatch keeps
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

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
