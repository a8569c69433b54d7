package redact_test

import (
	"testing"
	"unicode"

	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
)

const r = redact.Placeholder

// Values in the forms the documentation of each source the service ingests
// from uses: none of their secrets shows, and what is no secret stays.
func TestValueRedactsTheFormsSourcesDocument(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		// Kafka, Confluent, MSK: SASL JAAS configs, also spaced.
		{"JAAS", `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`, r},
		{"JAAS spaced", `org.apache.kafka.common.security.scram.ScramLoginModule required username = "u" password = "p";`, r},
		{"JAAS alone, spaced", `sasl.jaas.config = x`, r},
		// Object storage.
		{"Azure connection string", "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=k0/+==;EndpointSuffix=core.windows.net", r},
		{"Azure SAS connection string", "BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&sig=abc", r},
		{"Azure SAS token alone", "sv=2022-11-02&ss=b&srt=sco&sp=rl&se=2026-01-01&sig=AbC%2Bd", r},
		{"Azure SAS URL", "https://a.blob.core.windows.net/c/f.csv?sv=2022-11-02&sig=AbC", "https://a.blob.core.windows.net/c/f.csv"},
		{"S3 presigned URL", "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4&X-Amz-Credential=AKIA%2F&X-Amz-Signature=ab12&X-Amz-Security-Token=tok",
			"https://b.s3.amazonaws.com/k"},
		{"S3 signature parameters alone", "X-Amz-Credential=AKIAEXAMPLE/20260101/us-east-1/s3/aws4_request", r},
		{"S3 signature alone", "X-Amz-Signature=ab12cd", r},
		{"AWS credentials file", "[default]\naws_access_key_id = AKIAEXAMPLE\naws_secret_access_key = wJalr/K7MDENG", r},
		{"AWS session token", "aws_session_token=FwoGZXIvYXdzE", r},
		// Databases.
		{"Postgres URL", "postgres://u:p@db.example.com:5432/app", "postgres://db.example.com:5432/app"},
		{"Postgres keyword DSN", "host=db.example.com port=5432 user=u password=p dbname=app", r},
		{"Postgres keyword DSN, spaced", "host=h password = p", r},
		{"MySQL DSN", "u:p@tcp(db.example.com:3306)/app?tls=true", "tcp(db.example.com:3306)/app?tls=true"},
		{"MySQL DSN, password with @", "u:p@ss@tcp(db:3306)/app", "tcp(db:3306)/app"},
		{"MySQL DSN after a name", "dsn=u:p@unix(/tmp/mysql.sock)/app", "dsn=unix(/tmp/mysql.sock)/app"},
		{"ODBC Pwd", "Server=db;Uid=u;Pwd=p;", r},
		{"MongoDB URL, / and ? in the password", "mongodb+srv://u:p/a?ss@cluster0.example.mongodb.net/app?retryWrites=true",
			"mongodb+srv://cluster0.example.mongodb.net/app?retryWrites=true"},
		{"MongoDB URL, @ in the password", "mongodb://u:p@ss@h1:27017,h2:27017/app", "mongodb://h1:27017,h2:27017/app"},
		// Keys.
		{"PEM private key", "-----BEGIN PRIVATE KEY-----\nMIIE", r},
		{"PEM RSA key", "-----BEGIN RSA PRIVATE KEY-----\nMIIE", r},
		{"PGP private key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOY", r},
		{"GCP service account JSON", `{"type":"service_account","project_id":"p","private_key_id":"abc","client_email":"x@p.iam.gserviceaccount.com"}`, r},
		{"GCP service account JSON, escaped", `{\"type\":\"service_account\",\"client_secret\":\"abc\"}`, r},
		{"passphrase", "ssl.key.passphrase=hunter2", r},
		{"clientSecret in YAML", "clientSecret: abc", r},
		{"command-line flag", "pg_dump --host db --password hunter2", r},
		// HTTP headers.
		{"Authorization Basic", "Authorization: Basic dXNlcjpwYXNz", r},
		{"Authorization Bearer, JSON", `{"Authorization":"Bearer abc.def"}`, r},
		{"Bearer without the header", "sent Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig", r},
		{"Basic without the header", "basic dXNlcjpwYXNz", r},
		{"Cookie", "Cookie: session=abc", r},
		{"Set-Cookie", "Set-Cookie: id=a3fWa; Secure", r},
		// URLs, JSON-escaped.
		{"JSON-escaped URL", `{"url":"https:\/\/u:p@h.example.com\/db?sig=x"}`, `{"url":"https:\/\/h.example.com\/db"}`},
		{"doubly JSON-escaped URL", `https:\\/\\/u:p@h.example.com\\/db`, `https:\\/\\/h.example.com\\/db`},
	} {
		if got := redact.Value(tt.in); got != tt.want {
			t.Errorf("%s: Value(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

// Near misses: values that look a little like credentials but hold none
// stay as they are.
func TestValueKeepsNearMisses(t *testing.T) {
	for _, in := range []string{
		"plain",
		"https://medium.com/@user/post",
		"https://host:8443/path@v2",
		"mongodb://h1:27017,h2:27017/app",
		"https://[::1]:8080/x",
		"ops@example.com",
		"arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbCdEf",
		"tokenizer=standard",
		"Basic authentication is off",
		"Bearer token expected",
		"the password must be rotated",
		"sortingKey=id, primaryKey=id",
		"at 10:30 UTC",
		"s3://bucket/events/*.json",
	} {
		if got := redact.Value(in); got != in {
			t.Errorf("Value(%q) = %q, want it unchanged", in, got)
		}
	}
}

func TestIsCredentialNameCoversWhatConfigurationsCarry(t *testing.T) {
	for name, want := range map[string]bool{
		"password": true, "pwd": true, "Pwd": true, "passphrase": true, "sslKeyPassphrase": true,
		"accountKey": true, "AccountKey": true, "clientSecret": true, "client_secret": true,
		"sessionToken": true, "aws_session_token": true, "aws_secret_access_key": true,
		"Authorization": true, "Proxy-Authorization": true, "Cookie": true, "Set-Cookie": true,
		"private_key": true, "sasl.jaas.config": true, "SharedAccessSignature": true, "sig": true,
		"X-Amz-Signature": true, "X-Amz-Credential": true, "X-Amz-Security-Token": true, "auth": true,
		// Decided: a name cannot tell a policy from a value; redacting a
		// policy costs less than leaking a password.
		"passwordPolicy": true,
		// Near misses.
		"tokenizer": false, "tokenization": false, "secretary": false, "sortingKey": false, "primaryKey": false,
		"keyId": false, "authSource": false, "authMechanism": false, "signatureVersion": false, "caCertificate": false,
	} {
		if got := redact.IsCredentialName(name); got != want {
			t.Errorf("IsCredentialName(%q) = %v, want %v", name, got, want)
		}
	}
}

// A member name reaches sourceKind, its metric label and the paths of
// otherFields: one that carries a credential does not show it.
func TestNameHidesCredentialsInNames(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"https://user:pass@h.example.com", "https://h.example.com"},
		{"user:pass@h.example.com", "h.example.com"},
		{"https://h.example.com/x?sig=abc", "https://h.example.com/x"},
		{"password=hunter2", r},
		{"ghp_0123456789abcdefghijABCDEFGHIJ", r},
		{"eyJhbGciOiJIUzI1NiJ9xxxxxxxxxxxxxxxx", r},
		{"AKIAIOSFODNN7EXAMPLE", r},
		{"Zm9vYmFyYmF6MTIzNDU2Nzg5MA0K", r},
		// Near misses: names stay.
		{"cassandra", "cassandra"},
		{"futureKind", "futureKind"},
		{"replicaCpuMillicores", "replicaCpuMillicores"},
		{"snapshotNumberOfParallelTables", "snapshotNumberOfParallelTables"},
		{"s3BucketArnForRegion2", "s3BucketArnForRegion2"},
		{"11111111-0000-4111-8111-000000000001", "11111111-0000-4111-8111-000000000001"},
	} {
		if got := redact.Name(tt.in); got != tt.want {
			t.Errorf("Name(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMongoHostAndDatabaseWithSlashOrQuestionMarkInThePassword(t *testing.T) {
	for _, uri := range []string{"mongodb+srv://u:p/a?ss@cluster0.example.net/app?tls=true", "mongodb://u:p?a/ss@cluster0.example.net/app"} {
		if host, db := redact.MongoHostAndDatabase(uri); host != "cluster0.example.net" || db != "app" {
			t.Errorf("MongoHostAndDatabase(%q) = %q, %q; want cluster0.example.net, app", uri, host, db)
		}
	}
}

// What a terminal acts on (ESC and the sequences it starts, the C1
// controls, DEL, BEL, backspace) never stays in a value of the cloud's;
// a newline and a tab stay (a PEM certificate is lines), a carriage
// return goes, other spacing controls become a space; everything else is
// kept.
func TestValueDropsControlCharacters(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"OSC 52 clipboard write", "pipe\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07", "pipe]52;c;Y3VybCBldmlsIHwgc2g="},
		{"CSI erase", "Running\x1b[1A\x1b[2K", "Running[1A[2K"},
		{"C1 CSI and OSC", "a\u009b2Jb\u009d8;;x\u009c", "a2Jb8;;x"},
		{"DEL and backspace", "Fail\x7fed\b\b", "Failed"},
		{"line breaks and tabs", "a\nb\r\nc\td\u0085e\vf", "a\nb\nc\td e f"},
		{"a PEM certificate keeps its lines", "-----BEGIN CERTIFICATE-----\r\nMIIB\r\n-----END CERTIFICATE-----\r\n", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"},
		{"letters, emoji and joiners stay", "naïve 日本 👩‍💻 \u202e", "naïve 日本 👩‍💻 \u202e"},
		{"a credential hidden by a control", "pass\x00word=hunter2", r},
		{"a URL's user info hidden by a control", "https://u:p@\x1bdb.example.com/x", "https://db.example.com/x"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := redact.Value(tt.in); got != tt.want {
				t.Errorf("Value(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// Printable leaves nothing for a second pass: dropping a control never
// joins the bytes around it into another (a C1 control from the halves of
// a UTF-8 sequence, found by FuzzValue).
func TestPrintableIsIdempotent(t *testing.T) {
	for _, in := range []string{"\xc2\x05\x9c", "a\xc2\x7f\x9bb", "\xe2\x80\x00\xa8", "ok\xff\x1b[2J"} {
		once := redact.Printable(in)
		if twice := redact.Printable(once); twice != once {
			t.Errorf("Printable(%q) = %q, and again %q", in, once, twice)
		}
		for _, r := range once {
			if r != '\n' && r != '\t' && unicode.Is(unicode.Cc, r) {
				t.Errorf("Printable(%q) = %q keeps %U", in, once, r)
			}
		}
	}
}
