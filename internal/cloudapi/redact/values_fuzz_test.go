package redact_test

import (
	"testing"

	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
)

// Value and Name take any string, and what they show is already safe: a
// second pass changes nothing, so that a status written from their output
// reads the same when it is read again.
func FuzzValue(f *testing.F) {
	for _, seed := range []string{
		"mongodb+srv://u:p/a?ss@h/db?x=1", `https:\/\/u:p@h\/x`, "u:p@tcp(h:3306)/db", "password = x",
		"Authorization: Basic dXNlcjpwYXNz", "-----BEGIN PGP PRIVATE KEY BLOCK-----", "--password x", "a:b@c d:e@f",
		"mongodb://u:p@h1,h2/db?retryWrites=true&authSource=admin&tlsCertificateKeyFilePassword=x", "postgres://h/db?sslmode=require;password=p&",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, rule := range map[string]func(string) string{"Value": redact.Value, "Name": redact.Name} {
			once := rule(s)
			if twice := rule(once); twice != once {
				t.Errorf("%s(%q) = %q, and again %q", name, s, once, twice)
			}
			if len(once) > len(s) && once != redact.Placeholder {
				t.Errorf("%s(%q) = %q, longer than what it cleans", name, s, once)
			}
		}
	})
}
