package cloudapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// A secret with the characters that encoders escape: quote, slash, plus,
// backslash, space, and some that are not ASCII.
const (
	awkwardKeyID  = "ops-key"
	awkwardSecret = `s3cr"t/+\v@lue wïth ☃`
	awkwardToken  = `tok/+"en\ 🔑 value`
)

// forbiddenForms are encodings of the awkward credentials that must never
// show in a message: each would give the credential away.
func forbiddenForms() map[string]string {
	forms := map[string]string{}
	for _, s := range []string{awkwardSecret, awkwardToken} {
		j, _ := json.Marshal(s)
		forms["raw "+s] = s
		forms["JSON "+s] = strings.Trim(string(j), `"`)
		forms["%q "+s] = strings.Trim(strconv.Quote(s), `"`)
		forms["ASCII %q "+s] = strings.Trim(strconv.QuoteToASCII(s), `"`)
		forms["query "+s] = url.QueryEscape(s)
		forms["path "+s] = url.PathEscape(s)
		forms["base64 "+s] = base64.StdEncoding.EncodeToString([]byte(s))
		forms["base64url "+s] = base64.RawURLEncoding.EncodeToString([]byte(s))
	}
	forms["Basic"] = base64.StdEncoding.EncodeToString([]byte(awkwardKeyID + ":" + awkwardSecret))
	return forms
}

// assertNoCredential fails when msg shows any encoding of the awkward
// credentials outside the placeholders.
func assertNoCredential(t *testing.T, msg string) {
	t.Helper()
	for piece := range strings.SplitSeq(msg, "<redacted>") {
		for name, form := range forbiddenForms() {
			if strings.Contains(piece, form) {
				t.Errorf("message %q shows the credential (%s)", msg, name)
			}
		}
	}
}

func TestErrorMessagesScrubEncodedCredentials(t *testing.T) {
	creds := cloudapi.NewBasicCredentials(awkwardKeyID, awkwardSecret)
	token := cloudapi.NewBearerToken(awkwardToken)
	basic := base64.StdEncoding.EncodeToString([]byte(awkwardKeyID + ":" + awkwardSecret))
	jsonEscapedAll := func(s string) string { // \u escapes for every non-alphanumeric character, as some encoders do
		var b strings.Builder
		for _, r := range s {
			switch {
			case r > 0xFFFF:
				r -= 0x10000
				fmt.Fprintf(&b, `\u%04X\u%04X`, 0xD800+r>>10, 0xDC00+r&0x3FF)
			case r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
				b.WriteRune(r)
			default:
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		}
		return b.String()
	}
	phpJSON := func(s string) string {
		j, _ := json.Marshal(s)
		return strings.ReplaceAll(strings.Trim(string(j), `"`), "/", `\/`)
	}
	tests := []struct {
		name        string
		contentType string
		body        func(secret string) string
		// managementOnly: the body carries the management key's Basic
		// value, which only a management call knows to scrub.
		managementOnly bool
	}{
		{name: "raw in plain text", body: func(s string) string { return "invalid key " + s }},
		{name: `JSON-escaped with \/ in a JSON object cut short`, body: func(s string) string {
			return `{"status":401,"error":"invalid key ` + phpJSON(s) // no closing: the object does not parse
		}},
		{name: `\u escapes in plain text`, body: func(s string) string { return "invalid key " + jsonEscapedAll(s) }},
		{name: "JSON string inside a JSON object's string", contentType: "application/json", body: func(s string) string {
			inner, _ := json.Marshal("key " + s)
			outer, _ := json.Marshal(string(inner))
			return `{"error":` + string(outer) + `}`
		}},
		{name: "bare JSON string", contentType: "application/json", body: func(s string) string {
			j, _ := json.Marshal("invalid key " + s)
			return string(j)
		}},
		{name: "%q in plain text", body: func(s string) string { return fmt.Sprintf("invalid key %q", s) }},
		{name: "%+q in plain text", body: func(s string) string { return fmt.Sprintf("invalid key %+q", s) }},
		{name: "query-escaped in a URL", body: func(s string) string {
			return "request to https://api.example.com/check?key=" + url.QueryEscape(s) + "&x=1 refused"
		}},
		{name: "path-escaped in a URL", body: func(s string) string { return "no such key /keys/" + url.PathEscape(s) + "/status" }},
		{name: "URL-encoded twice", body: func(s string) string { return "key=" + url.QueryEscape(url.QueryEscape(s)) }},
		{name: "base64", body: func(s string) string { return "token " + base64.StdEncoding.EncodeToString([]byte(s)) + " rejected" }},
		{name: "unpadded base64url", body: func(s string) string {
			return "token " + base64.RawURLEncoding.EncodeToString([]byte(s)) + " rejected"
		}},
		{name: "Authorization header echoed", managementOnly: true, body: func(s string) string {
			return "bad header Authorization: Basic " + basic + " / Bearer " + s
		}},
		{name: "base64 of id:secret, URL alphabet, in a cut JSON object", body: func(s string) string {
			b := base64.URLEncoding.EncodeToString([]byte(awkwardKeyID + ":" + s))
			return `{"error":"credential ` + b + `"` // cut: stays raw text
		}},
		{name: "HTML page title", contentType: "text/html", body: func(s string) string {
			return "<html><head><title>Denied for " + strings.ReplaceAll(s, "\"", "&quot;") + "</title></head></html>"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range []struct {
				name   string
				secret string
				call   callFunc
			}{
				{"management", awkwardSecret, func(ctx context.Context, c *cloudapi.Client, u string) error {
					_, err := c.ListPipes(ctx, u, creds, orgID, svcID, pipeOptions{})
					return err
				}},
				{"alert", awkwardToken, func(ctx context.Context, c *cloudapi.Client, u string) error {
					_, err := c.GetAlert(ctx, u, token, "a1")
					return err
				}},
			} {
				if tt.managementOnly && c.name != "management" {
					continue
				}
				srv, _ := serve(t, reply{status: 401, contentType: tt.contentType, body: tt.body(c.secret)})
				err := c.call(context.Background(), newClient(cloudapi.Options{}), srv.URL)
				e := asError(t, err)
				assertNoCredential(t, err.Error())
				if !strings.Contains(e.Message, "<redacted>") {
					t.Errorf("%s: Message %q: want the credential replaced by <redacted>", c.name, e.Message)
				}
			}
		})
	}
}

// An error body is read up to a cap; the cap may cut a secret, leaving its
// beginning at the end of the message.
func TestErrorMessagesScrubCredentialCutAtTheBodyCap(t *testing.T) {
	const bodyCap = 64 << 10
	creds := cloudapi.NewBasicCredentials(awkwardKeyID, awkwardSecret)
	j, _ := json.Marshal(awkwardSecret)
	basic := base64.StdEncoding.EncodeToString([]byte(awkwardKeyID + ":" + awkwardSecret))
	forms := []struct {
		name  string
		form  string
		shown []int // how much of form the cap lets through
	}{
		{"raw", awkwardSecret, []int{4, 9, len(awkwardSecret) - 1}},
		{"JSON", strings.Trim(string(j), `"`), []int{5, 6, 9}},
		{"query", url.QueryEscape(awkwardSecret), []int{5, 6, 12}},
		// The first 11 characters encode "ops-key:" and some bits of the
		// secret: a cut there shows no more than a byte of it.
		{"Basic", basic, []int{16, 24, len(basic) - 1}},
	}
	for _, f := range forms {
		name, form := f.name, f.form
		for _, shown := range f.shown {
			t.Run(fmt.Sprintf("%s, %d bytes", name, shown), func(t *testing.T) {
				// Padding that the message collapses, then the cut secret.
				head := `{"status":401,"error":"` + strings.Repeat(" ", bodyCap-23-len("bad key ")-shown) + "bad key "
				srv, _ := serve(t, reply{status: 401, contentType: "application/json", body: head + form + `"}`})
				_, err := listPipesAs(creds)(context.Background(), newClient(cloudapi.Options{}), srv.URL)
				e := asError(t, err)
				cut := form[:shown]
				if strings.Contains(e.Message, cut) || !strings.HasSuffix(e.Message, "bad key <redacted>") {
					t.Errorf("Message %q: want the cut %q redacted", e.Message, cut)
				}
			})
		}
	}
}

func listPipesAs(creds cloudapi.BasicCredentials) func(context.Context, *cloudapi.Client, string) (cloudapi.List[swv1.Pipe], error) {
	return func(ctx context.Context, c *cloudapi.Client, u string) (cloudapi.List[swv1.Pipe], error) {
		return c.ListPipes(ctx, u, creds, orgID, svcID, pipeOptions{})
	}
}

// Bidi overrides and isolates and zero-width characters can make a message
// read as something other than what it says; they never reach a message,
// and cannot hide a secret from the scrubber either.
func TestErrorMessagesDropInvisibleCharacters(t *testing.T) {
	invisible := []rune{'\u202E', '\u202D', '\u202A', '\u2066', '\u2067', '\u2068', '\u2069', '\u200B', '\u200C',
		'\u200D', '\u200E', '\u200F', '\u2060', '\uFEFF', '\u061C', '\u00AD', '\u0007', '\u001B', '\u0085'}
	var body strings.Builder
	body.WriteString("service ")
	for _, r := range invisible {
		body.WriteString("x" + string(r))
	}
	body.WriteString(" key fake-key\u200B-sec\u202Eret") // the secret, split by invisible characters
	srv, _ := serve(t, reply{status: 500, contentType: "text/plain", body: body.String()})
	err := listPipes(context.Background(), newClient(cloudapi.Options{}), srv.URL)
	e := asError(t, err)
	for _, r := range e.Error() {
		if unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Cc, r) {
			t.Errorf("message %q has the invisible character %U", e.Error(), r)
		}
	}
	if want := "service " + strings.Repeat("x", len(invisible)-1) + "x key <redacted>"; e.Message != want {
		t.Errorf("Message = %q, want %q", e.Message, want)
	}
}

// Go's transport errors quote the whole URL ("Get \"https://…\": dial tcp
// …"), and a base URL can be long: the message stays within the cap and
// still says what went wrong.
func TestErrorMessagesShortenLongURLs(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	base := closed.URL + "/" + strings.Repeat("prefix/", 2048/len("prefix/"))
	closed.Close()
	err := listPipes(context.Background(), newClient(cloudapi.Options{}), base)
	e := asError(t, err)
	msg := err.Error()
	t.Logf("message: %s", msg)
	if e.Reason != cloudapi.ReasonUnreachable || !strings.Contains(msg, "connection refused") {
		t.Errorf("got %q, want Unreachable saying the connection was refused", msg)
	}
	if n := utf8.RuneCountInString(msg); n > 300 {
		t.Errorf("message of %d runes, want at most 300: %q", n, msg)
	}
	if host := strings.TrimPrefix(closed.URL, "http://"); !strings.Contains(msg, host) || !strings.Contains(msg, "/pipes") {
		t.Errorf("message %q: want the host %s and the resource of the shortened URL", msg, host)
	}

	// The same for a URL in a service's message.
	long := "https://docs.example.com/" + strings.Repeat("a", 2048) + "/rate-limits"
	srv, _ := serve(t, reply{status: 503, contentType: "text/plain", body: "see " + long + " and retry later"})
	err = listPipes(context.Background(), newClient(cloudapi.Options{}), srv.URL)
	e = asError(t, err)
	if !strings.Contains(e.Message, "https://docs.example.com/aaa") || !strings.Contains(e.Message, "/rate-limits and retry later") ||
		utf8.RuneCountInString(e.Message) > 200 {
		t.Errorf("Message = %q, want the URL shortened and the rest kept", e.Message)
	}
}
