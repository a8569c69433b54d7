package ratebudget

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"

	"github.com/servicewatch/servicewatch/internal/egress"
)

// CredentialID names the credential a budget is of by its digest, which is
// all that admission needs: a caller that waits for room in a budget can keep
// asking with the digest and read the credential again only when it is
// admitted, and the store never holds a secret. The cloud client's
// credentials and their digests implement it.
type CredentialID interface {
	// Digest is a SHA-256 digest of the credential: equal digests mean equal
	// credentials.
	Digest() [sha256.Size]byte
}

// budgetKey is a SHA-256 digest of a credential and what it is used for.
type budgetKey [sha256.Size]byte

// Sum is the SHA-256 digest of parts, each prefixed with its length so that
// ("ab", "c") and ("a", "bc") differ: how a budget is keyed, and how the
// cloud client names a credential without keeping it.
func Sum(parts ...string) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	var k [sha256.Size]byte
	copy(k[:], h.Sum(nil))
	return k
}

// budgetKeyOf identifies the budget of cred at baseURL on api: the API, its
// host as egress.HostKey keys it (as the service sees it: "API.example.com:443" and
// "https://api.example.com" are one host) and the credential's digest, so
// that the digest alone names the budget. A base URL that does not parse keys
// by its text: calls to it fail anyway.
func budgetKeyOf(api, baseURL string, cred CredentialID) budgetKey {
	d := cred.Digest()
	return Sum("budget", api, egress.HostKeyFromURL(baseURL), string(d[:]))
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
