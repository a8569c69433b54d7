package cloudapi

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
)

const redacted = "<redacted>"

// Credential is a management key or an alert token; it identifies a budget.
// BasicCredentials and BearerToken implement it.
type Credential interface {
	CredentialID
	// parts returns the strings that identify the credential, for digests.
	parts() []string
	// secrets returns the strings that must never appear in an error
	// message; the scrubber derives their encodings.
	secrets() []string
	// authorization returns the value of the Authorization header.
	authorization() string
}

// hidden keeps a secret where fmt's reflection cannot reach it. fmt prints a
// struct's unexported fields by reflection, without calling their Format
// method, and it prints a func as an address; so does every dumper that
// follows pointers.
type hidden func() string

func hide(s string) hidden { return func() string { return s } }

// reveal returns the secret, "" for the zero value.
func (h hidden) reveal() string {
	if h == nil {
		return ""
	}
	return h()
}

// BasicCredentials are a management API key: a key ID and a key secret, sent
// with HTTP Basic authentication. Printing them, with any fmt verb and even
// as an unexported field of another struct, never shows the secret. The zero
// value is an empty key, which calls refuse.
type BasicCredentials struct {
	keyID     string
	keySecret hidden
}

// NewBasicCredentials returns the management API key keyID:keySecret.
func NewBasicCredentials(keyID, keySecret string) BasicCredentials {
	return BasicCredentials{keyID: keyID, keySecret: hide(keySecret)}
}

// String returns the key ID with the secret redacted.
func (c BasicCredentials) String() string {
	return fmt.Sprintf("BasicCredentials{KeyID: %q, KeySecret: %s}", c.keyID, redacted)
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
	return base64.StdEncoding.EncodeToString([]byte(c.keyID + ":" + c.keySecret.reveal()))
}

// validate rejects credentials that cannot be sent as HTTP Basic (RFC 7617:
// the user ID cannot contain a colon; no control characters anywhere).
func (c BasicCredentials) validate() error {
	secret := c.keySecret.reveal()
	switch {
	case c.keyID == "" || secret == "":
		return fmt.Errorf("management API key ID and key secret must not be empty")
	case strings.Contains(c.keyID, ":"):
		return fmt.Errorf("management API key ID must not contain a colon")
	case hasControl(c.keyID) || hasControl(secret):
		return fmt.Errorf("management API key must not contain control characters")
	}
	return nil
}

func (c BasicCredentials) secrets() []string {
	return []string{c.keySecret.reveal(), c.encoded()}
}

func (c BasicCredentials) parts() []string {
	return []string{"basic", c.keyID, c.keySecret.reveal()}
}

// BearerToken is an alert API token. Printing it, with any fmt verb and even
// as an unexported field of another struct, never shows the token. The zero
// value is an empty token, which calls refuse.
type BearerToken struct {
	token hidden
}

// NewBearerToken returns the alert API token token.
func NewBearerToken(token string) BearerToken { return BearerToken{token: hide(token)} }

// String returns "<redacted>".
func (BearerToken) String() string { return redacted }

// GoString returns "<redacted>".
func (BearerToken) GoString() string { return redacted }

// Format makes every verb print "<redacted>".
func (BearerToken) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

func (t BearerToken) authorization() string { return "Bearer " + t.token.reveal() }

func (t BearerToken) validate() error {
	token := t.token.reveal()
	switch {
	case token == "":
		return fmt.Errorf("alert API token must not be empty")
	case hasControl(token):
		return fmt.Errorf("alert API token must not contain control characters")
	}
	return nil
}

func (t BearerToken) secrets() []string { return []string{t.token.reveal()} }

func (t BearerToken) parts() []string { return []string{"bearer", t.token.reveal()} }

// CredentialDigest is a SHA-256 digest of a credential. Equal digests mean
// equal credentials (unlike Fingerprint, which is short and names a budget),
// so it can key what only callers of the same credential may share, such as a
// result read with it, without keeping the credential itself.
type CredentialDigest [sha256.Size]byte

// CredentialID names the credential a budget is of: the credential itself,
// or only its digest, which is all that admission needs. A caller that waits
// for room in a budget can keep asking with the digest and read the
// credential again only when it is admitted.
type CredentialID interface {
	credentialDigest() CredentialDigest
}

func (c BasicCredentials) credentialDigest() CredentialDigest { return DigestOf(c) }

func (t BearerToken) credentialDigest() CredentialDigest { return DigestOf(t) }

func (d CredentialDigest) credentialDigest() CredentialDigest { return d }

// DigestOf returns the digest of cred.
func DigestOf(cred Credential) CredentialDigest {
	return CredentialDigest(digest(append([]string{"credential"}, cred.parts()...)...))
}

// credKey is a SHA-256 digest of a credential and what it is used for.
type credKey [sha256.Size]byte

// digest hashes length-prefixed parts, so that ("ab","c") and ("a","bc")
// differ.
func digest(parts ...string) credKey {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	var k credKey
	copy(k[:], h.Sum(nil))
	return k
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}
