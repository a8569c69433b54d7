package controller

import (
	"context"
	"strconv"
	"strings"

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
	url     string
	creds   cloudapi.BasicCredentials
	failure *failure
}

// alertAccess is what the alerts part needs, or why it cannot run.
type alertAccess struct {
	url     string
	token   cloudapi.BearerToken
	failure *failure
}

func (r *ServiceWatchReconciler) managementAccess(ctx context.Context, watch *swv1.ServiceWatch) managementAccess {
	spec := watch.Spec.ManagementAPI
	url := firstNonEmpty(spec.URL, r.Options.ManagementAPIURL)
	if f := r.urlNotAllowed(url, spec.URL, "spec.managementApi.url", "--management-api-url"); f != nil {
		return managementAccess{url: url, failure: f}
	}
	data, f := r.readSecret(ctx, watch.Namespace, spec.SecretRef.Name, keyIDKey, keySecretKey)
	if f == nil && url == "" {
		f = newFailure(swv1.ReasonConfigurationError, "no management API URL: set spec.managementApi.url or the manager's --management-api-url")
	}
	return managementAccess{
		url:     url,
		creds:   cloudapi.NewBasicCredentials(data[keyIDKey], data[keySecretKey]),
		failure: f,
	}
}

func (r *ServiceWatchReconciler) alertAccess(ctx context.Context, watch *swv1.ServiceWatch) alertAccess {
	if len(watch.Spec.AlertIDs) == 0 {
		return alertAccess{}
	}
	if watch.Spec.AlertAPI == nil { // the CRD forbids this; an old object may still have it
		return alertAccess{failure: newFailure(swv1.ReasonConfigurationError, "spec.alertApi is required when spec.alertIds is not empty")}
	}
	spec := watch.Spec.AlertAPI
	url := firstNonEmpty(spec.URL, r.Options.AlertAPIURL)
	if f := r.urlNotAllowed(url, spec.URL, "spec.alertApi.url", "--alert-api-url"); f != nil {
		return alertAccess{url: url, failure: f}
	}
	data, f := r.readSecret(ctx, watch.Namespace, spec.SecretRef.Name, tokenKey)
	if f == nil && url == "" {
		f = newFailure(swv1.ReasonConfigurationError, "no alert API URL: set spec.alertApi.url or the manager's --alert-api-url")
	}
	return alertAccess{url: url, token: cloudapi.NewBearerToken(data[tokenKey]), failure: f}
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

// readSecret reads the named keys of a Secret in the watch's own namespace,
// straight from the API server: Secrets are cached as metadata only, so their
// data never sits in the manager's memory between syncs.
func (r *ServiceWatchReconciler) readSecret(ctx context.Context, namespace, name string, keys ...string) (map[string]string, *failure) {
	var secret corev1.Secret
	// client-go logs whole response bodies at high verbosity through the
	// context's logger; for a Secret that body is the credential.
	quiet := logr.NewContext(ctx, logr.Discard())
	err := r.APIReader.Get(quiet, types.NamespacedName{Namespace: namespace, Name: name}, &secret)
	switch {
	case apierrors.IsNotFound(err):
		return nil, newFailure(swv1.ReasonSecretNotFound, "Secret %s/%s not found: create it with the keys %s", namespace, name, quoteKeys(keys))
	case err != nil:
		return nil, newFailure(swv1.ReasonSecretUnreadable, "reading Secret %s/%s: %v", namespace, name, err)
	}
	data := make(map[string]string, len(keys))
	for _, key := range keys {
		value := string(secret.Data[key])
		if value == "" {
			return nil, newFailure(swv1.ReasonSecretKeyMissing, "Secret %s/%s has no key %q (or it is empty): it needs the keys %s", namespace, name, key, quoteKeys(keys))
		}
		data[key] = value
	}
	return data, nil
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
