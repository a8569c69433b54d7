package cloudapi

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
)

const redacted = "<redacted>"

// BasicCredentials are a management API key: a key ID and a key secret, sent
// with HTTP Basic authentication. Printing them with any fmt verb never shows
// the secret.
type BasicCredentials struct {
	KeyID     string
	KeySecret string
}

// String returns the key ID with the secret redacted.
func (c BasicCredentials) String() string {
	return fmt.Sprintf("BasicCredentials{KeyID: %q, KeySecret: %s}", c.KeyID, redacted)
}

// GoString is used by %#v; it redacts the secret too.
func (c BasicCredentials) GoString() string { return c.String() }

// Format makes every verb, including %v, %+v, %s, %q and %x, print the
// redacted form, so that no format string can leak the secret.
func (c BasicCredentials) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(c.String())) }

// authorization returns the value of the Authorization header.
func (c BasicCredentials) authorization() string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(c.KeyID+":"+c.KeySecret))
}

// validate rejects credentials that cannot be sent as HTTP Basic (RFC 7617:
// the user ID cannot contain a colon; no control characters anywhere).
func (c BasicCredentials) validate() error {
	switch {
	case c.KeyID == "" || c.KeySecret == "":
		return fmt.Errorf("management API key ID and key secret must not be empty")
	case strings.Contains(c.KeyID, ":"):
		return fmt.Errorf("management API key ID must not contain a colon")
	case hasControl(c.KeyID) || hasControl(c.KeySecret):
		return fmt.Errorf("management API key must not contain control characters")
	}
	return nil
}

// secrets returns the strings that must never appear in an error message.
func (c BasicCredentials) secrets() []string {
	return []string{c.KeySecret, strings.TrimPrefix(c.authorization(), "Basic ")}
}

// key returns the digest that identifies this credential in the client's
// per-credential state; the credential itself is never kept.
func (c BasicCredentials) key() credKey {
	return digest("management", c.KeyID, c.KeySecret)
}

// BearerToken is an alert API token. Printing it with any fmt verb shows
// "<redacted>".
type BearerToken string

// String returns "<redacted>".
func (BearerToken) String() string { return redacted }

// GoString returns "<redacted>".
func (BearerToken) GoString() string { return redacted }

// Format makes every verb print "<redacted>".
func (BearerToken) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

func (t BearerToken) authorization() string { return "Bearer " + string(t) }

func (t BearerToken) validate() error {
	switch {
	case t == "":
		return fmt.Errorf("alert API token must not be empty")
	case hasControl(string(t)):
		return fmt.Errorf("alert API token must not contain control characters")
	}
	return nil
}

func (t BearerToken) secrets() []string { return []string{string(t)} }

func (t BearerToken) key() credKey { return digest("alert", string(t)) }

// credKey is a SHA-256 digest of an API name and a credential.
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
