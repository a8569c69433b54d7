package credentials

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/accountcontroller"
	"github.com/servicewatch/servicewatch/internal/alerts"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/egress"
)

// Failure is why one API's calls cannot run: a status reason (swv1's
// Reason words) and what the user can do about it.
type Failure struct {
	Reason, Message string
}

func failed(reason, format string, args ...any) *Failure {
	return &Failure{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Access is what the calls of one API need besides the credential itself,
// or why they cannot run.
type Access struct {
	URL string
	// Digest names the credential; when Unread, it is all that is known of
	// it yet.
	Digest cloudapi.CredentialDigest
	// Unread: the Secret was not read (its digest at this version was
	// known); the credential is read once the sync is admitted (Reader's
	// ReadManagement, ReadAlert).
	Unread  bool
	Failure *Failure
}

// Management is the access to the management API, with its key once read.
type Management struct {
	Access
	Key cloudapi.BasicCredentials
}

// Alert is the access to the alert API, with its token once read.
type Alert struct {
	Access
	Token cloudapi.BearerToken
}

// Versioner knows the resourceVersion of a Secret, "" for one that does not
// exist (Watch).
type Versioner interface {
	Version(ctx context.Context, secret types.NamespacedName) string
}

// Reader reads what a watch's syncs read with: the credentials of its APIs,
// from its own Secrets or its account's, once the manager may call their
// URLs at all. It reads a Secret only when its version changed since the
// last read: a sync that waits for its budget asks again by digest.
type Reader struct {
	// Client reads Secrets straight from the API server (never a cache).
	Client client.Reader
	// Accounts resolves spec.managementApi.accountRef; nil: no accounts.
	Accounts *accountcontroller.Accounts
	// Secrets knows the referenced Secrets' versions.
	Secrets Versioner
	// Fallbacks are the manager's URLs for specs that name none.
	Fallbacks accountcontroller.Fallbacks
	// Allowed are the URLs the manager may call (--allowed-api-urls).
	Allowed egress.URLAllowList
	// Namespaces are those the manager watches, all when empty.
	Namespaces []string

	digests *Digests[cloudapi.CredentialDigest]
}

// NewReader returns a Reader of its fields, with no digest known yet.
func NewReader(r Reader) *Reader {
	r.digests = NewDigests[cloudapi.CredentialDigest]()
	return &r
}

// Versions are the resourceVersions of a watch's referenced Secrets by name,
// "" for a Secret that does not exist; an account's grant and its Secrets'
// versions sit under accountTrigger.
type Versions map[string]string

// accountTrigger is the key of Versions that holds the watch's account grant
// (Grant.Trigger) and its Secrets' versions: never a Secret's name.
const accountTrigger = "\x00account"

// Ordered are the versions in the order of the watch's references, its
// account's last: a change to any of them asks for a sync now.
func (v Versions) Ordered(watch *swv1.ServiceWatch) []string {
	ordered := make([]string, 0, len(v))
	for _, name := range ReferencedSecrets(watch) {
		ordered = append(ordered, v[name])
	}
	if grant, ok := v[accountTrigger]; ok {
		ordered = append(ordered, grant)
	}
	return ordered
}

// ReferencedSecrets are the names of the Secrets in its own namespace that
// a ServiceWatch references (an account's are not its own); nil for another
// object.
func ReferencedSecrets(obj client.Object) []string {
	watch, ok := obj.(*swv1.ServiceWatch)
	if !ok {
		return nil
	}
	var names []string
	if watch.Spec.ManagementAPI.AccountRef == nil {
		names = append(names, watch.Spec.ManagementAPI.SecretRef.Name)
	}
	if watch.Spec.AlertAPI != nil && !slices.Contains(names, watch.Spec.AlertAPI.SecretRef.Name) {
		names = append(names, watch.Spec.AlertAPI.SecretRef.Name)
	}
	return names
}

// Versions are the versions of the Secrets watch reads with, as the Secret
// watch knows them.
func (r *Reader) Versions(ctx context.Context, watch *swv1.ServiceWatch) Versions {
	versions := make(Versions, 2)
	for _, name := range ReferencedSecrets(watch) {
		versions[name] = r.Secrets.Version(ctx, types.NamespacedName{Namespace: watch.Namespace, Name: name})
	}
	if watch.Spec.ManagementAPI.AccountRef != nil {
		grant := r.Accounts.Resolve(ctx, watch)
		versions[accountTrigger] = grant.Trigger
		for _, secret := range grant.Secrets(r.Namespaces) {
			versions[secret.String()] = r.Secrets.Version(ctx, secret)
			versions[accountTrigger] += "|" + versions[secret.String()] // its change syncs the watch, as its own Secret's
		}
	}
	return versions
}

// Of is the access of watch's syncs to both APIs at versions, the two
// Secrets read at once: by digest, reading nothing, when the digest at a
// Secret's version is known; failed when the manager may not call the URL
// (checked before the Secret is read, so that a credential never even
// leaves the API server for a URL the cluster admin has not allowed). A
// watch that reads its alerts from the management API reads them with the
// management key; one that follows no alerts has a zero Alert.
func (r *Reader) Of(ctx context.Context, watch *swv1.ServiceWatch, versions Versions) (m Management, a Alert) {
	var wg sync.WaitGroup
	wg.Go(func() { m = r.management(ctx, watch, versions) })
	wg.Go(func() { a = r.alert(ctx, watch, versions) })
	wg.Wait()
	if alerts.FromManagement(&watch.Spec) { // the management key's host, credential and budget; nothing more to read
		a = Alert{Access: m.Access}
		a.Unread = false
	}
	return m, a
}

// ReadManagement reads the management API's credential, for a sync whose
// access was known by its digest alone.
func (r *Reader) ReadManagement(ctx context.Context, watch *swv1.ServiceWatch) Management {
	return r.readManagement(ctx, r.sourceOf(ctx, watch, false))
}

// ReadAlert reads the alert API's credential; see ReadManagement.
func (r *Reader) ReadAlert(ctx context.Context, watch *swv1.ServiceWatch) Alert {
	return r.readAlert(ctx, r.sourceOf(ctx, watch, true))
}

// source is where one API's calls go and which Secret holds their
// credential, or why the watch may not call (accountcontroller.SourceOf).
type source = accountcontroller.Source

// sourceOf is where the watch's calls of one API (the alert API's when
// alert) go, with which Secret.
func (r *Reader) sourceOf(ctx context.Context, watch *swv1.ServiceWatch, alert bool) source {
	return r.Accounts.SourceOf(ctx, watch, alert, r.Fallbacks)
}

func (r *Reader) management(ctx context.Context, watch *swv1.ServiceWatch, versions Versions) Management {
	return knownOrRead(ctx, r, r.sourceOf(ctx, watch, false), versions, r.readManagement,
		func(a Access) Management { return Management{Access: a} })
}

func (r *Reader) alert(ctx context.Context, watch *swv1.ServiceWatch, versions Versions) Alert {
	if !alerts.InUse(&watch.Spec) || alerts.FromManagement(&watch.Spec) {
		return Alert{} // none, or from the management API (see Of)
	}
	if watch.Spec.AlertAPI == nil && watch.Spec.ManagementAPI.AccountRef == nil { // the CRD forbids this; an old object may still have it
		return Alert{Access: Access{Failure: failed(swv1.ReasonConfigurationError, "spec.alertApi is required when spec.alertIds or spec.alertSelector is set and spec.alertsFrom is AlertAPI")}}
	}
	return knownOrRead(ctx, r, r.sourceOf(ctx, watch, true), versions, r.readAlert,
		func(a Access) Alert { return Alert{Access: a} })
}

// knownOrRead is the access to s's API: as far as it is known without
// reading the Secret at its version in versions (known), else read.
func knownOrRead[A any](ctx context.Context, r *Reader, s source, versions Versions,
	read func(context.Context, source) A, known func(Access) A) A {
	if a, mustRead := r.known(s, versions[s.VersionKey()]); !mustRead {
		return known(a)
	}
	return read(ctx, s)
}

// known is the access to s's API as far as it is known without reading the
// Secret at version: failed when the manager may not call the URL, by its
// digest when the digest at that version is known. read says that the
// Secret must be read.
func (r *Reader) known(s source, version string) (a Access, read bool) {
	if s.Refusal != nil {
		return Access{URL: s.URL, Failure: failed(s.Refusal.Reason, "%s", s.Refusal.Message)}, false
	}
	if f := r.urlNotAllowed(s); f != nil {
		return Access{URL: s.URL, Failure: f}, false
	}
	if d, ok := r.digests.Get(s.Secret, s.Kind, version); ok && s.URL != "" {
		return Access{URL: s.URL, Digest: d, Unread: true}, false
	}
	return Access{URL: s.URL}, true
}

func (r *Reader) readManagement(ctx context.Context, s source) Management {
	data, remember := r.read(ctx, s)
	key := cloudapi.NewBasicCredentials(data[swv1.KeyIDKey], data[swv1.KeySecretKey])
	m := Management{Access: Access{URL: s.URL, Digest: cloudapi.DigestOf(key)}, Key: key}
	remember(&m.Access)
	return m
}

func (r *Reader) readAlert(ctx context.Context, s source) Alert {
	data, remember := r.read(ctx, s)
	token := cloudapi.NewBearerToken(data[swv1.TokenKey])
	a := Alert{Access: Access{URL: s.URL, Digest: cloudapi.DigestOf(token)}, Token: token}
	remember(&a.Access)
	return a
}

// read reads the Secret of s's credential. The caller makes its access from
// the values; remember then sets the access's failure, if any, and records
// its digest at the version read.
func (r *Reader) read(ctx context.Context, s source) (data map[string]string, remember func(*Access)) {
	data, version, f := r.readSecret(ctx, s.Secret, s.Keys...)
	if f == nil && s.URL == "" {
		f = failed(swv1.ReasonConfigurationError, "no %s URL: set %s or the manager's %s", s.API, s.Field, s.Flag)
	}
	return data, func(a *Access) {
		a.Failure = f
		if f == nil {
			r.digests.Put(s.Secret, s.Kind, version, a.Digest)
			r.Accounts.Read(s, a.Digest)
		}
	}
}

// urlNotAllowed is the failure of a watch whose API URL the manager may not
// call. s.URL is the URL in use, s.SpecURL the spec's (empty when the
// manager's fallback flag applies); an empty URL is left to the
// configuration check.
func (r *Reader) urlNotAllowed(s source) *Failure {
	if s.URL == "" {
		return nil
	}
	err := r.Allowed.Allows(s.URL)
	if err == nil {
		return nil
	}
	from := s.Field
	if s.SpecURL == "" {
		from = "the manager's " + s.Flag + " (" + s.Field + " is empty)"
	}
	return failed(swv1.ReasonURLNotAllowed, "%s: %v; ask the cluster admin, who sets --allowed-api-urls", from, err)
}

// readSecret reads the named keys of a Secret straight from the API server:
// Secrets are never cached (Watch keeps only referenced ones' versions), so
// their data never sits in the manager's memory between syncs. It returns
// the Secret's resourceVersion with the values.
func (r *Reader) readSecret(ctx context.Context, ref types.NamespacedName, keys ...string) (data map[string]string, version string, f *Failure) {
	namespace, name := ref.Namespace, ref.Name
	var secret corev1.Secret
	// client-go logs whole response bodies at high verbosity through the
	// context's logger; for a Secret that body is the credential.
	quiet := logr.NewContext(ctx, logr.Discard())
	err := r.Client.Get(quiet, ref, &secret)
	switch {
	case apierrors.IsNotFound(err):
		return nil, "", failed(swv1.ReasonSecretNotFound, "Secret %s/%s not found: create it with the keys %s", namespace, name, quoteKeys(keys))
	case err != nil:
		return nil, "", failed(swv1.ReasonSecretUnreadable, "reading Secret %s/%s: %v", namespace, name, err)
	}
	data = make(map[string]string, len(keys))
	for _, key := range keys {
		value := string(secret.Data[key])
		if value == "" {
			return nil, "", failed(swv1.ReasonSecretKeyMissing, "Secret %s/%s has no key %q (or it is empty): it needs the keys %s", namespace, name, key, quoteKeys(keys))
		}
		if len(value) > cloudapi.MaxCredentialBytes { // its length is not shown: it is the secret's
			return nil, "", failed(swv1.ReasonConfigurationError, "Secret %s/%s key %q is longer than %d bytes, the most a credential may have",
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
