package redact

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The cloud's own data (a pipe's source, a member it sends that the types
// lack) carries what its users configured, and real configurations carry
// credentials in many forms: a member named like one (password, pwd,
// passphrase, accountKey, clientSecret, sessionToken, Authorization,
// Cookie), a key=value pair inside a longer value (an Azure connection
// string's AccountKey=, a keyword DSN's password=, a Kafka JAAS config's
// password = "…"), a PEM or PGP private key, the user info of a URL (also
// JSON-escaped, also with '/' or '?' in its password) or of a MySQL DSN
// (user:pass@tcp(host)/db), a signed URL's query (sig=, X-Amz-Signature=),
// an HTTP Authorization header's value. These rules find them by shape;
// the Scrubber finds the operator's own credentials by value.

// credentialWords are parts of member names that hold credentials. Names are
// compared in lower case without '_', '-', '.' and spaces, so that
// secret_key, secretKey and sasl.jaas.config match alike.
var credentialWords = []string{
	"password", "passwd", "pwd", "passphrase", "secret", "token", "privatekey", "credential",
	"connectionstring", "serviceaccountkey", "serviceaccountfile", "accesskey", "accountkey", "apikey",
	"sharedaccesssignature", "cookie", "jaasconfig",
}

// credentialNames are whole member names that hold credentials, too short
// or too common as parts of other names to be matched as parts: a SAS
// token's sig, a presigned URL's X-Amz-Signature, a header's Authorization.
var credentialNames = []string{"sig", "signature", "xamzsignature", "auth", "authorization", "proxyauthorization"}

// benignWords contain a credential word but name no credential: a
// secretary is a person, a tokenizer (tokenize, tokenization) a text
// analyser. Anything else that contains a credential word counts as one,
// passwordPolicy included: a name cannot tell a policy from a value
// (passwordB64, passwordEncrypted), and a redacted policy costs far less
// than a leaked password.
var benignWords = []string{"secretary", "secretariat", "tokeniz"}

// maxNameBytes bounds the name nameBefore reads before an '=' or ':'.
const maxNameBytes = 64

// IsCredentialName reports whether a member named name holds a credential.
func IsCredentialName(name string) bool {
	var buf [64]byte
	n := normalizeName(name, buf[:0])
	s := string(n)
	for _, w := range benignWords {
		for i := strings.Index(s, w); i >= 0; i = strings.Index(s, w) {
			n[i] = '#' // hides the word from the credential words
			s = string(n)
		}
	}
	if slices.Contains(credentialNames, s) {
		return true
	}
	for _, w := range credentialWords {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// normalizeName appends name to dst in lower case without separators.
func normalizeName(name string, dst []byte) []byte {
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-' || c == '.' || c == ' ':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// Value makes a string from the cloud safe to show: no control character
// (see Printable), URLs lose their user info and query (a connection
// string keeps its options that carry no secret), a MySQL-style DSN
// its user:password@, and a value that still holds a credential (a private
// key, a credential's key=value or key: value pair, an Authorization
// header's value) reads "<redacted>".
func Value(s string) string {
	// Controls go first: one inside a credential's name would hide it from
	// the rules below.
	s = Printable(s)
	if hasURL(s) {
		s = stripURLSecrets(s)
	}
	if holdsSecret(s) {
		return Placeholder
	}
	if strings.IndexByte(s, '@') >= 0 {
		s = stripBareUserInfo(s)
	}
	return s
}

// Name makes a member name from the cloud safe to show, wherever it goes
// (a pipe's sourceKind and its servicewatch_pipe_info label, the paths of
// otherFields): a name that is itself a credential (one that looks like a
// token, or holds one as Value finds them) reads "<redacted>", and a name
// holding a URL or DSN loses its user info and query, as a value does.
func Name(name string) string {
	shown := Value(name)
	if looksLikeToken(name) || looksLikeToken(shown) {
		return Placeholder
	}
	return shown
}

// privateKeyMarkers end the first line of a PEM private key (PKCS #8, RSA,
// EC, OpenSSH, encrypted) and of an armored PGP private key, in lower case.
var privateKeyMarkers = []string{"private key-----", "private key block-----"}

// holdsSecret reports whether s holds a credential by its shape.
func holdsSecret(s string) bool {
	if strings.Contains(s, "-----") {
		lower := strings.ToLower(s)
		for _, m := range privateKeyMarkers {
			if strings.Contains(lower, m) {
				return true
			}
		}
	}
	return assignsCredential(s) || hasAuthScheme(s)
}

// assignsCredential reports whether s assigns a value to a name that holds
// a credential: name=value, name = value, name: value, "name":value (JSON,
// also escaped), --name value (a command line). A ':' with neither a quote
// before it nor a space after it joins parts of an identifier
// (arn:aws:secretsmanager:…), not a name and a value.
func assignsCredential(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '=', ':':
			name, quoted := nameBefore(s, i)
			if s[i] == ':' && !quoted && i+1 < len(s) && !isSpace(s[i+1]) && s[i+1] != '"' && s[i+1] != '\'' {
				continue
			}
			if IsCredentialName(name) {
				return true
			}
		case '-':
			if i+1 < len(s) && s[i+1] == '-' && (i == 0 || isSpace(s[i-1])) && flagNamesCredential(s[i+2:]) {
				return true
			}
		}
	}
	return false
}

// flagNamesCredential reports whether s starts with the name of a
// command-line flag that holds a credential, followed by its value.
func flagNamesCredential(s string) bool {
	end := 0
	for end < len(s) && isNameChar(s[end]) {
		end++
	}
	return end > 0 && end < len(s) && isSpace(s[end]) && IsCredentialName(s[:end])
}

// nameBefore returns the name that ends before s[i], skipping the spaces,
// quotes and backslashes that may stand between a name and its '=' or ':',
// and whether a quote closed it.
func nameBefore(s string, i int) (name string, quoted bool) {
	end := i
	for end > 0 && (isSpace(s[end-1]) || s[end-1] == '"' || s[end-1] == '\'' || s[end-1] == '\\') {
		quoted = quoted || s[end-1] == '"' || s[end-1] == '\''
		end--
	}
	start := end
	for start > 0 && end-start < maxNameBytes && isNameChar(s[start-1]) {
		start--
	}
	return s[start:end], quoted
}

func isNameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// authSchemes are the HTTP authentication schemes whose value is a
// credential, as they start an Authorization header's value.
var authSchemes = []string{"bearer", "basic"}

// hasAuthScheme reports whether s holds an Authorization header's value
// without its name: a scheme, as a word in any case, then spaces and a
// credential-looking value (see credentialLike).
func hasAuthScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		if i > 0 && isLetter(s[i-1]) {
			continue
		}
		for _, scheme := range authSchemes {
			end := i + len(scheme)
			if end >= len(s) || !isSpace(s[end]) || !strings.EqualFold(s[i:end], scheme) {
				continue
			}
			rest := strings.TrimLeft(s[end:], " \t")
			if stop := strings.IndexAny(rest, " \t\r\n\"',;"); stop >= 0 {
				rest = rest[:stop]
			}
			if credentialLike(rest) {
				return true
			}
		}
	}
	return false
}

// credentialLike reports whether word may be a token or the base64 of
// user:password: eight characters or more of base64 and token alphabets,
// with a digit, a symbol or an upper-case letter after a lower-case one
// among them. Words ("basic authentication", "Bearer Token") have none.
func credentialLike(word string) bool {
	if len(word) < 8 {
		return false
	}
	special := false
	for i := 0; i < len(word); i++ {
		c := word[i]
		switch {
		case 'a' <= c && c <= 'z':
		case 'A' <= c && c <= 'Z':
			special = special || i > 0 && 'a' <= word[i-1] && word[i-1] <= 'z'
		case '0' <= c && c <= '9', strings.IndexByte("+/=_-.~", c) >= 0:
			special = true
		default:
			return false
		}
	}
	return special
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// schemeSeparators separate a URL's scheme from the rest: as written, and
// JSON-escaped once or twice (a JSON document held in a string).
var schemeSeparators = []string{"://", `:\/\/`, `:\\/\\/`}

func hasURL(s string) bool {
	i, _ := nextURL(s)
	return i >= 0
}

// nextURL returns where the first scheme separator of s starts, and its
// length; -1 when s has none.
func nextURL(s string) (at, size int) {
	at = -1
	for _, sep := range schemeSeparators {
		if i := strings.Index(s, sep); i >= 0 && (at < 0 || i < at) {
			at, size = i, len(sep)
		}
	}
	return at, size
}

// stripURLSecrets removes the user info (user:password@) of every URL in s,
// and its query (?…, which may hold signatures and tokens) but the options
// of a connection string that carry no secret (see harmlessQuery).
func stripURLSecrets(s string) string {
	var b strings.Builder
	for {
		i, size := nextURL(s)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+size])
		rest := s[i+size:]
		end := urlEnd(rest)
		u := withoutUserInfo(rest[:end])
		frag := ""
		if h := strings.IndexByte(u, '#'); h >= 0 {
			u, frag = u[:h], u[h:] // a '?' in the fragment starts no query
		}
		if q := strings.IndexByte(u, '?'); q >= 0 {
			u = u[:q] + harmlessQuery(schemeBefore(s[:i]), u[q+1:], size != len("://"))
		}
		b.WriteString(u)
		b.WriteString(frag)
		s = rest[end:]
	}
}

// withoutUserInfo returns u, a URL after its scheme, without its user info.
// A password should be percent-encoded but often is not: it may hold '/',
// '?', '#' or '@', which end the authority or the user info of a URL read by
// the standard. So once the URL has user info (an '@' in its authority, or
// a ':' there that starts no port), it ends at the URL's last '@': a path
// with an '@' after user info loses its start, never the password its end.
func withoutUserInfo(u string) string {
	at := strings.LastIndexByte(u, '@')
	if at < 0 {
		return u
	}
	authority := u
	if end := strings.IndexAny(u, "/?#"); end >= 0 {
		authority = u[:end]
	}
	if strings.IndexByte(authority, '@') >= 0 || startsPassword(authority) {
		return u[at+1:]
	}
	return u
}

// startsPassword reports whether authority, the text of a URL up to its
// first '/', '?' or '#', is user:start-of-password rather than host:port
// (or hosts with ports, h1:27017,h2:27017, or an IPv6 address).
func startsPassword(authority string) bool {
	if strings.HasPrefix(authority, "[") {
		return false
	}
	_, port, found := strings.Cut(authority, ":")
	if !found {
		return false
	}
	port, _, _ = strings.Cut(port, ",")
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return true
		}
	}
	return port == ""
}

// urlEnd is where the URL at the start of s ends: at white space, or at a
// quote or bracket that may enclose it.
func urlEnd(s string) int {
	if i := strings.IndexAny(s, " \t\r\n\"'<>"); i >= 0 {
		return i
	}
	return len(s)
}

// stripBareUserInfo removes user:password@ from the words of s that are no
// URLs (stripURLSecrets reads those), such as a MySQL DSN
// (user:pass@tcp(host:3306)/db): a word with a ':' before its last '@'
// loses what lies between its start (or the last '=', ';', ',' or '('
// before the ':') and that '@'. A password may hold '@' too: the last one
// ends it.
func stripBareUserInfo(s string) string {
	var b strings.Builder
	for s != "" {
		end := strings.IndexAny(s, " \t\r\n\"'")
		if end < 0 {
			end = len(s)
		}
		b.WriteString(withoutBareUserInfo(s[:end]))
		if end < len(s) {
			b.WriteByte(s[end])
			end++
		}
		s = s[end:]
	}
	return b.String()
}

func withoutBareUserInfo(word string) string {
	at := strings.LastIndexByte(word, '@')
	if at < 0 || hasURL(word) {
		return word
	}
	colon := strings.IndexByte(word[:at], ':')
	if colon < 0 {
		return word
	}
	start := strings.LastIndexAny(word[:colon], "=;,(") + 1
	return word[:start] + word[at+1:]
}

// looksLikeToken reports whether name is shaped like a token rather than a
// name: 24 characters or more of token alphabets with at least 4 digits and
// 4 letters (a random base62 string of that length has about 4 digits; a
// camelCase name has few), or a well-known token's prefix (a JWT, GitHub,
// GitLab, Slack, Stripe and Google tokens, AWS access key IDs). The cloud's
// UUIDs are no tokens.
func looksLikeToken(name string) bool {
	for _, p := range tokenPrefixes {
		if strings.HasPrefix(name, p) && len(name) >= len(p)+16 {
			return true
		}
	}
	if len(name) < 24 || isUUID(name) {
		return false
	}
	digits, letters := 0, 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case '0' <= c && c <= '9':
			digits++
		case isLetter(c):
			letters++
		case strings.IndexByte("+/=_-.~", c) < 0:
			return false
		}
	}
	return digits >= 4 && letters >= 4
}

// tokenPrefixes start tokens of well-known formats.
var tokenPrefixes = []string{"eyJ", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xoxb-", "xoxp-", "xoxa-", "sk_live_", "sk-", "AKIA", "ASIA", "AIza", "ya29."}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// isUUID reports whether s is a UUID in its canonical text form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHexDigit(c) {
				return false
			}
		}
	}
	return true
}

// MongoHostAndDatabase reads the hosts and the database of a MongoDB
// connection URI (mongodb://user:password@h1,h2/db?options), leaving out its
// user info, password and options. A password that holds '/' or '?' (not
// percent-encoded, as drivers accept) ends at the URI's last '@'.
func MongoHostAndDatabase(uri string) (host, database string) {
	rest := uri
	if _, after, ok := strings.Cut(uri, "://"); ok {
		rest = after
	}
	rest = withoutUserInfo(rest)
	rest, _, _ = strings.Cut(rest, "?")
	rest, _, _ = strings.Cut(rest, "#")
	authority, path, _ := strings.Cut(rest, "/")
	return Value(authority), Value(path)
}

// Printable is s without the characters a terminal acts on, for what the
// operator stores of the cloud's and the tenants' strings: the C0 controls
// (ESC among them), DEL and the C1 controls U+0080–U+009F are dropped. A
// newline and a tab stay: values such as a PEM certificate are made of
// lines, JSON and YAML carry them escaped, and every printer of ours
// escapes them (kubectl servicewatch shows them as \n and \t), so they
// command no terminal. A carriage return is dropped (a CRLF line ends in
// LF), and the other spacing controls (vertical tab, form feed, NEL)
// become a space. Nothing else changes: letters of every script, emoji and
// their joiners stay; in a value that held a control, a byte that is not
// UTF-8 is dropped too (the API server would not store it as it is), so
// that Printable(Printable(s)) == Printable(s) and it is never longer.
func Printable(s string) string {
	if !hasControl(s) {
		return s // the common case: no copy
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			// Dropped: kept, it could join the bytes around a dropped
			// control into a C1 control ("\xc2\x05\x9c"); what is left is
			// whole runes only, which no later pass changes.
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\r':
		case unicode.IsSpace(r) && unicode.Is(unicode.Cc, r):
			b.WriteByte(' ')
		case unicode.Is(unicode.Cc, r):
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// hasControl tells whether s holds a C0 or C1 control or DEL that
// Printable changes (a newline or a tab it keeps).
func hasControl(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Cc, r) && r != '\n' && r != '\t' {
			return true
		}
	}
	return false
}
