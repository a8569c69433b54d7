package redact

import (
	"net/url"
	"slices"
	"strings"
)

// connectionSchemes are the URL schemes of database and broker connection
// strings, in lower case. Their query holds the driver's options, named by
// the driver's documentation, of which only a few carry secrets: a URL of
// these schemes keeps its options but those (see harmlessOptions). The
// query of any other URL (https among them) goes whole: a web service names
// its parameters as it likes, and a signed URL's or a webhook's
// (?sig=, ?X-Goog-Signature=, ?code=, ?k=) cannot be told by a list.
var connectionSchemes = []string{
	"mongodb", "mongodb+srv", "postgres", "postgresql", "mysql", "mariadb", "sqlserver", "mssql",
	"redis", "rediss", "amqp", "amqps", "clickhouse", "kafka", "nats",
}

// secretOptions are the connection-string options that carry a secret or
// the user, normalized as normalizeName does. Sources:
//   - MongoDB, https://www.mongodb.com/docs/manual/reference/connection-string-options/:
//     tlsCertificateKeyFilePassword and its legacy sslPEMKeyPassword (the
//     client key's passphrase), authMechanismProperties (may hold
//     AWS_SESSION_TOKEN for MONGODB-AWS);
//   - libpq, https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-PARAMKEYWORDS:
//     password, sslpassword, user;
//   - MySQL Connector/J and go-sql-driver/mysql, Redis and AMQP URIs:
//     password, user, username.
//
// Options named like any credential (IsCredentialName: password, secret,
// token, credential, ...) or holding secretOptionWords go too, known or
// not, and so does any option whose value looks like a credential.
var secretOptions = []string{"authmechanismproperties", "tlscertificatekeyfilepassword", "sslpemkeypassword", "sslpassword", "password", "user", "username"}

// secretOptionWords are parts of option names that point at a secret,
// beyond IsCredentialName's words: a key (sslkey, tlsCertificateKeyFile,
// sslPEMKeyFile) may be the key itself or the path of one; pass and cred
// catch the short forms (passfile, pass, creds).
var secretOptionWords = []string{"key", "pass", "cred"}

// harmlessQuery is the query of a URL of scheme, as "?"+the options that
// carry no secret, in the order and with the separators ('&' or ';') they
// had; "" when none is left, or when the URL is not a connection string
// (connectionSchemes), or when it was written JSON-escaped (escaped), whose
// separators a plain reading would miss.
func harmlessQuery(scheme, query string, escaped bool) string {
	if escaped || !slices.Contains(connectionSchemes, strings.ToLower(scheme)) || strings.IndexByte(query, '\\') >= 0 {
		return ""
	}
	var b strings.Builder
	sep := byte('&') // the separator before the option read
	for query != "" {
		end := strings.IndexAny(query, "&;")
		if end < 0 {
			end = len(query)
		}
		if option := query[:end]; isHarmlessOption(option) {
			if b.Len() == 0 {
				b.WriteByte('?')
			} else {
				b.WriteByte(sep)
			}
			b.WriteString(option)
		}
		if end == len(query) {
			break
		}
		sep, query = query[end], query[end+1:]
	}
	return b.String()
}

// isHarmlessOption reports whether option, name=value of a connection
// string's query, carries no secret: its name, percent-decoded, is none of
// secretOptions and looks like no credential, and its value looks like no
// credential either.
func isHarmlessOption(option string) bool {
	rawName, rawValue, _ := strings.Cut(option, "=")
	name, err := url.QueryUnescape(rawName)
	if err != nil || name == "" || len(name) > maxNameBytes {
		return false
	}
	value, err := url.QueryUnescape(rawValue)
	if err != nil {
		return false
	}
	var buf [maxNameBytes]byte
	normalized := string(normalizeName(name, buf[:0]))
	if slices.Contains(secretOptions, normalized) || IsCredentialName(name) {
		return false
	}
	for _, w := range secretOptionWords {
		if strings.Contains(normalized, w) {
			return false
		}
	}
	return !looksLikeToken(value) && !holdsSecret(value) && !holdsSecret(option)
}

// schemeBefore is the URL scheme that ends s (written up to a "://").
func schemeBefore(s string) string {
	start := len(s)
	for start > 0 && isSchemeByte(s[start-1]) {
		start--
	}
	return s[start:]
}

func isSchemeByte(c byte) bool {
	return isLetter(c) || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'
}
