package lenient_test

import (
	"encoding/json"
	"strings"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
)

// A pipe whose members carry credentials in their names, and in the forms
// real configurations use in their values: none of them reaches the pipe
// (sourceKind, otherFields' paths and values), and the names that carry
// none stay as sent.
func TestReadPipeHidesCredentialsInNamesAndValues(t *testing.T) {
	const pw = "s3cretpw"
	raw := `{"id":"p1","source":{` +
		`"https://user:` + pw + `@h.example.com":{"x":1},` +
		`"admin:` + pw + `@db.example.com":{},` +
		`"ghp_0123456789abcdefghij` + pw + `":"v",` +
		`"cassandra":{"https://u:` + pw + `@c.example.com":"x","tokenizer":"standard","passphrase":"` + pw + `",` +
		`"dsn":"u:` + pw + `@tcp(db:3306)/app","jaas":"PlainLoginModule required username = \"u\" password = \"` + pw + `\";",` +
		`"pgp":"-----BEGIN PGP PRIVATE KEY BLOCK-----\n` + pw + `","header":"Authorization: Basic ` + pw + `",` +
		`"config":"{\"url\":\"https:\\/\\/u:` + pw + `@x.example.com\\/db\"}","Cookie":"` + pw + `",` +
		`"mongo":"mongodb+srv://u:` + pw + `/a?b@m.example.net/app"}}}`
	var p swv1.Pipe
	_, err := lenient.ReadPipe(lenient.NewStrict(), []byte(raw), &p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), pw) || strings.Contains(string(b), "ghp_") {
		t.Errorf("the pipe shows a credential: %s", b)
	}
	if want := "https://h.example.com,db.example.com,<redacted>,cassandra"; p.SourceKind == nil || *p.SourceKind != want {
		t.Errorf("sourceKind = %q, want %q", deref(p.SourceKind), want)
	}
	other := strings.Join(p.OtherFields, "\n")
	for _, want := range []string{
		`source.https://h.example.com.x: 1`, `source.<redacted>: "<redacted>"`,
		`source.cassandra.https://c.example.com: "x"`, `source.cassandra.tokenizer: "standard"`,
		`source.cassandra.dsn: "tcp(db:3306)/app"`, `source.cassandra.mongo: "mongodb+srv://m.example.net/app"`,
	} {
		if !strings.Contains(other, want) {
			t.Errorf("otherFields lack %s:\n%s", want, other)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// A MongoDB source's connection string whose password holds '/' or '?'
// (drivers take it unencoded) shows its host and database, none of the
// password.
func TestReadPipeMongoDBPasswordWithSlashOrQuestionMark(t *testing.T) {
	raw := `{"id":"p1","source":{"mongodb":{"uri":"mongodb+srv://app:s3cret/pw?x@cluster0.example.net/orders?tls=true"}}}`
	var p swv1.Pipe
	_, err := lenient.ReadPipe(lenient.NewStrict(), []byte(raw), &p)
	if err != nil {
		t.Fatal(err)
	}
	m := p.Source.MongoDB
	if m == nil {
		t.Fatal("no mongodb source")
	}
	if deref(m.Host) != "cluster0.example.net" || deref(m.Database) != "orders" {
		t.Errorf("mongodb source host %q, database %q; want cluster0.example.net, orders", deref(m.Host), deref(m.Database))
	}
}
