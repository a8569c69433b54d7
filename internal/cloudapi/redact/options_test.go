package redact_test

import (
	"strings"
	"testing"

	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
)

// A connection string keeps its scheme, hosts, database and the options
// that say how it connects, and loses its user info and the options that
// carry secrets (named so by the drivers' documentation, or named or
// valued like a credential). Any other URL's query still goes whole.
func TestValueKeepsAConnectionStringsHarmlessOptions(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"MongoDB: user info and a key's password go, the rest stays",
			"mongodb://u:p@h1,h2/db?retryWrites=true&authSource=admin&tlsCertificateKeyFilePassword=x",
			"mongodb://h1,h2/db?retryWrites=true&authSource=admin"},
		{"MongoDB SRV, options only", "mongodb+srv://cluster0.example.net/?retryWrites=true&w=majority&appName=shop",
			"mongodb+srv://cluster0.example.net/?retryWrites=true&w=majority&appName=shop"},
		{"MongoDB AWS: the session token's properties go",
			"mongodb://h/db?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:FwoGZXIvYXdzE&replicaSet=rs0",
			"mongodb://h/db?authMechanism=MONGODB-AWS&replicaSet=rs0"},
		{"MongoDB legacy ';' separators and sslPEMKeyPassword", "mongodb://h/db?ssl=true;sslPEMKeyPassword=x;replicaSet=rs0",
			"mongodb://h/db?ssl=true;replicaSet=rs0"},
		{"MongoDB: a key file's path goes (a key, conservatively)", "mongodb://h/db?tls=true&tlsCertificateKeyFile=/etc/k.pem&tlsCAFile=/etc/ca.pem",
			"mongodb://h/db?tls=true&tlsCAFile=/etc/ca.pem"},
		{"MongoDB: an option named like a secret goes, known or not", "mongodb://h/db?retryWrites=true&x_secret=a&myToken=b&apiKey=c&Credential=d",
			"mongodb://h/db?retryWrites=true"},
		{"a percent-encoded secret option's name goes", "mongodb://h/db?pass%77ord=x&w=1", "mongodb://h/db?w=1"},
		{"an option whose value looks like a token goes", "mongodb://h/db?appName=ghp_abcdefghijklmnopqrstuvwx&w=1", "mongodb://h/db?w=1"},
		{"every option secret: no query", "mongodb://u:p@h/db?password=x&tlsCertificateKeyFilePassword=y", "mongodb://h/db"},
		{"Postgres: password, sslpassword, sslkey and user go",
			"postgres://db.example.com:5432/app?sslmode=verify-full&sslpassword=x&password=y&sslkey=/k&user=u&application_name=etl",
			"postgres://db.example.com:5432/app?sslmode=verify-full&application_name=etl"},
		{"JDBC Postgres", "jdbc:postgresql://db/app?user=u&password=p&ssl=true", "jdbc:postgresql://db/app?ssl=true"},
		{"Redis", "rediss://:p@cache:6380/0?dial_timeout=3s&password=p", "rediss://cache:6380/0?dial_timeout=3s"},
		{"an HTTPS URL's query still goes whole", "https://hooks.example.com/x?code=abc&retry=true", "https://hooks.example.com/x"},
		{"a JSON-escaped connection string's query goes whole", `mongodb:\/\/h\/db?w=1`, `mongodb:\/\/h\/db`},
	} {
		if got := redact.Value(tt.in); got != tt.want {
			t.Errorf("%s: Value(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

// Reading a connection string's options stays linear: a query of a
// million options is read in one pass and keeps what is harmless.
func TestValueReadsAHugeQueryOnce(t *testing.T) {
	query := strings.Repeat("w=1&password=x&", 1<<16)
	got := redact.Value("mongodb://h/db?" + query)
	if want := "mongodb://h/db?" + strings.TrimSuffix(strings.Repeat("w=1&", 1<<16), "&"); got != want {
		t.Errorf("Value of %d options: %d bytes, want %d", 2<<16, len(got), len(want))
	}
}
