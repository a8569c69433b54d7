package redact

// The credential rules as they were before issue 27 (commit cc8b72b), kept
// for BenchmarkValue to measure the new ones against in the same run.

import (
	"bytes"
	"strings"
)

// oldCredentialWords are parts of member names that hold credentials in what
// the services send or accept: password, the secret of an access key, a
// private key, a connection string, a service account key or file, a whole
// credentials object, tokens and API keys. Names are compared in lower case
// without '_' and '-', so that secret_key and secretKey match alike.
var oldCredentialWords = []string{
	"password", "passwd", "secret", "token", "privatekey", "credential",
	"connectionstring", "serviceaccountkey", "serviceaccountfile", "accesskey", "apikey",
}

// oldIsCredentialName reports whether a member named name holds a credential.
func oldIsCredentialName(name string) bool {
	var buf [64]byte
	n := buf[:0]
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		n = append(n, c)
	}
	for _, w := range oldCredentialWords {
		if bytes.Contains(n, []byte(w)) {
			return true
		}
	}
	return false
}

// oldSecretMarkers are what a string value holding a credential contains,
// whatever its member is named: a private key in PEM form, or the key=value
// pairs of a connection string that carry a key or password.
var oldSecretMarkers = []string{
	"private key-----", "accountkey=", "sharedaccesskey=", "sharedaccesssignature=", "password=", "pwd=",
}

// Value makes a string from the cloud safe to show: a value that
// holds a private key or a connection string's secret reads "<redacted>",
// and URLs lose their user info and query.
func oldValue(s string) string {
	lower := strings.ToLower(s)
	for _, m := range oldSecretMarkers {
		if strings.Contains(lower, m) {
			return Placeholder
		}
	}
	if !strings.Contains(s, "://") {
		return s
	}
	return oldStripURLSecrets(s)
}

// oldStripURLSecrets removes the user info (user:password@) and the query
// (?…, which may hold signatures and tokens) of every URL in s.
func oldStripURLSecrets(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+3])
		rest := s[i+3:]
		end := oldURLEnd(rest)
		u := rest[:end]
		authEnd := strings.IndexAny(u, "/?#")
		if authEnd < 0 {
			authEnd = len(u)
		}
		if at := strings.LastIndexByte(u[:authEnd], '@'); at >= 0 {
			u = u[at+1:]
		}
		if q := strings.IndexByte(u, '?'); q >= 0 {
			frag := ""
			if h := strings.IndexByte(u[q:], '#'); h >= 0 {
				frag = u[q+h:]
			}
			u = u[:q] + frag
		}
		b.WriteString(u)
		s = rest[end:]
	}
}

// oldURLEnd is where the URL at the start of s ends: at white space, or at a
// quote or bracket that may enclose it.
func oldURLEnd(s string) int {
	if i := strings.IndexAny(s, " \t\r\n\"'<>"); i >= 0 {
		return i
	}
	return len(s)
}
