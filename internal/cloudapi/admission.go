package cloudapi

import (
	"encoding/hex"
	"net/url"
	"strings"
	"time"
)

// Admit reserves n calls of api (APIManagement or APIAlert) with cred at baseURL
// when the client-side budget and any Retry-After hold allow all n now, and
// returns 0. Otherwise it reserves nothing and returns how long to wait before
// asking again (never 0).
//
// The budget is the RateLimit of api (Options.ManagementRate or AlertRate),
// shared by every caller that uses the same credential at the same API host.
// Calls themselves never wait: a caller that sends without admission is not
// paced, only held back after a 429. n larger than the limit's Requests is
// never admitted (the wait is one window): split such a batch.
func (c *Client) Admit(api, baseURL string, cred CredentialID, n int) time.Duration {
	return c.budgets.admit(budgetKeyOf(api, baseURL, cred), c.limitOf(api), c.now(), n)
}

// Hold records that no call of api with cred at baseURL may go out before
// until, as if the service had answered 429 with that Retry-After. The
// controller uses it to restore a hold it persisted before a restart.
//
// A hold never shortens an earlier one, and is capped at 24 hours from now,
// like a Retry-After, so that a clock gone wrong cannot block a credential
// for good.
func (c *Client) Hold(api, baseURL string, cred CredentialID, until time.Time) {
	now := c.now()
	if latest := now.Add(maxRetryAfter); until.After(latest) {
		until = latest
	}
	c.budgets.hold(budgetKeyOf(api, baseURL, cred), c.limitOf(api), now, until)
}

// BudgetID returns the full identifier of the budget (api, baseURL host,
// credential): the 32 bytes of its SHA-256 digest, never the credential.
// Whatever is kept per budget is keyed by it: two credentials never share
// an entry, whoever chose them.
func BudgetID(api, baseURL string, cred CredentialID) string {
	key := budgetKeyOf(api, baseURL, cred)
	return string(key[:])
}

// Fingerprint returns a short, stable, non-reversible identifier of the budget
// (api, baseURL host, credential) for metrics labels; never the credential.
//
// It is 12 hex digits (48 bits) of the budget's digest (BudgetID): enough to
// tell a manager's budgets apart on a dashboard, and the same across
// restarts, but a tenant can find colliding ones, so it only labels.
func Fingerprint(api, baseURL string, cred CredentialID) string {
	return FingerprintOf(BudgetID(api, baseURL, cred))
}

// FingerprintOf returns the Fingerprint of a BudgetID.
func FingerprintOf(budget string) string {
	return hex.EncodeToString([]byte(budget[:min(len(budget), 6)]))
}

// limitOf returns the RateLimit of api.
func (c *Client) limitOf(api string) RateLimit {
	if api == APIAlert {
		return c.opts.AlertRate
	}
	return c.opts.ManagementRate
}

// budgetKeyOf returns the key of the budget of cred at baseURL on api. A base
// URL that does not parse keys by its text: calls to it fail anyway.
func budgetKeyOf(api, baseURL string, cred CredentialID) credKey {
	u, err := url.Parse(baseURL)
	if err != nil {
		return budgetKey(api, baseURL, "", cred)
	}
	return budgetKey(api, u.Host, u.Scheme, cred)
}

// budgetKey identifies a budget: the API, its host (lower case, without the
// scheme's default port, as the service sees it) and the credential. It is a
// digest, of the credential's digest, so that the digest alone names the
// budget: the credential itself is never kept.
func budgetKey(api, host, scheme string, cred CredentialID) credKey {
	host = strings.ToLower(host)
	switch strings.ToLower(scheme) {
	case "https":
		host = strings.TrimSuffix(host, ":443")
	case "http":
		host = strings.TrimSuffix(host, ":80")
	}
	d := cred.credentialDigest()
	return digest("budget", api, host, string(d[:]))
}
