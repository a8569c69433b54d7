package cloudapi

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// MaxCredentialBytes bounds each part of a credential: a key ID, a key
// secret, a token. The cloud's key IDs, key secrets and alert tokens are
// tens of bytes, and bearer tokens in JWT form reach about 2 KB; 4 KiB
// leaves twice that. A longer value is no credential anyone issues, and it
// would cost every call: each response is scrubbed for the credential's
// encodings, as far as 13 bytes per byte of the credential past any cut
// (redact.Scrubber.Reach), and two 4 KiB parts already make an
// Authorization header of 11 KB, past the 8 KiB many servers accept.
const MaxCredentialBytes = 4 << 10

// Credential is a management key or an alert token; its digest identifies
// its rate budgets. BasicCredentials and BearerToken implement it.
type Credential interface {
	ratebudget.CredentialID
	// parts returns the strings that identify the credential, for digests.
	parts() []string
	// secrets returns the strings that must never appear in an error
	// message; the scrubber derives their encodings.
	secrets() []string
	// authorization returns the value of the Authorization header.
	authorization() string
}

// BasicCredentials are a management API key: a key ID and a key secret, sent
// with HTTP Basic authentication. Printing them, with any fmt verb and even
// as an unexported field of another struct, never shows the secret. The zero
// value is an empty key, which calls refuse.
type BasicCredentials struct {
	keyID     string
	keySecret redact.Secret
}

// NewBasicCredentials returns the management API key keyID:keySecret.
func NewBasicCredentials(keyID, keySecret string) BasicCredentials {
	return BasicCredentials{keyID: keyID, keySecret: redact.Hide(keySecret)}
}

// String returns the key ID with the secret redacted.
func (c BasicCredentials) String() string {
	return fmt.Sprintf("BasicCredentials{KeyID: %q, KeySecret: %s}", c.keyID, redact.Placeholder)
}

// GoString is used by %#v; it redacts the secret too.
func (c BasicCredentials) GoString() string { return c.String() }

// Format makes every verb, including %v, %+v, %s, %q and %x, print the
// redacted form, so that no format string can leak the secret.
func (c BasicCredentials) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(c.String())) }

func (c BasicCredentials) authorization() string {
	return "Basic " + c.encoded()
}

// encoded is the base64 of keyID:keySecret, as RFC 7617 builds it.
func (c BasicCredentials) encoded() string {
	return base64.StdEncoding.EncodeToString([]byte(c.keyID + ":" + c.keySecret.Reveal()))
}

// validate rejects credentials that cannot be sent as HTTP Basic (RFC 7617:
// the user ID cannot contain a colon; no control characters anywhere).
func (c BasicCredentials) validate() error {
	secret := c.keySecret.Reveal()
	switch {
	case c.keyID == "" || secret == "":
		return fmt.Errorf("management API key ID and key secret must not be empty")
	case strings.Contains(c.keyID, ":"):
		return fmt.Errorf("management API key ID must not contain a colon")
	case hasControl(c.keyID) || hasControl(secret):
		return fmt.Errorf("management API key must not contain control characters")
	case len(c.keyID) > MaxCredentialBytes || len(secret) > MaxCredentialBytes:
		return fmt.Errorf("management API key ID and key secret must each be at most %d bytes", MaxCredentialBytes)
	}
	return nil
}

func (c BasicCredentials) secrets() []string {
	return []string{c.keySecret.Reveal(), c.encoded()}
}

func (c BasicCredentials) parts() []string {
	return []string{"basic", c.keyID, c.keySecret.Reveal()}
}

// BearerToken is an alert API token. Printing it, with any fmt verb and even
// as an unexported field of another struct, never shows the token. The zero
// value is an empty token, which calls refuse.
type BearerToken struct {
	token redact.Secret
}

// NewBearerToken returns the alert API token token.
func NewBearerToken(token string) BearerToken { return BearerToken{token: redact.Hide(token)} }

// String returns "<redacted>".
func (BearerToken) String() string { return redact.Placeholder }

// GoString returns "<redacted>".
func (BearerToken) GoString() string { return redact.Placeholder }

// Format makes every verb print "<redacted>".
func (BearerToken) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redact.Placeholder)) }

func (t BearerToken) authorization() string { return "Bearer " + t.token.Reveal() }

func (t BearerToken) validate() error {
	token := t.token.Reveal()
	switch {
	case token == "":
		return fmt.Errorf("alert API token must not be empty")
	case hasControl(token):
		return fmt.Errorf("alert API token must not contain control characters")
	case len(token) > MaxCredentialBytes:
		return fmt.Errorf("alert API token must be at most %d bytes", MaxCredentialBytes)
	}
	return nil
}

func (t BearerToken) secrets() []string { return []string{t.token.Reveal()} }

func (t BearerToken) parts() []string { return []string{"bearer", t.token.Reveal()} }

// CredentialDigest is a SHA-256 digest of a credential. Equal digests mean
// equal credentials (unlike Fingerprint, which is short and names a budget),
// so it can key what only callers of the same credential may share, such as a
// result read with it, without keeping the credential itself.
type CredentialDigest [sha256.Size]byte

// Digest is the digest of the key (DigestOf), which names its budgets.
func (c BasicCredentials) Digest() [sha256.Size]byte { return DigestOf(c) }

// Digest is the digest of the token (DigestOf), which names its budgets.
func (t BearerToken) Digest() [sha256.Size]byte { return DigestOf(t) }

// Digest is d itself: a caller waiting for room in a budget asks with the
// digest alone.
func (d CredentialDigest) Digest() [sha256.Size]byte { return d }

// DigestOf returns the digest of cred.
func DigestOf(cred Credential) CredentialDigest {
	return ratebudget.Sum(append([]string{"credential"}, cred.parts()...)...)
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}
