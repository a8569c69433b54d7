package cloudapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
)

// errorFor returns the *Error the client makes of an error response with
// body, for a management call made with cred.
func errorFor(t *testing.T, cred BasicCredentials, status int, contentType string, body []byte) *Error {
	t.Helper()
	c := New(Options{})
	u, err := url.Parse("https://api.example.com/v1/organizations/o/services/s/pipes")
	if err != nil {
		t.Fatal(err)
	}
	cl := c.prepare(call{api: APIManagement, op: OperationListPipes, url: u, cred: cred})
	resp := &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {contentType}}, Body: io.NopCloser(bytes.NewReader(body))}
	return c.statusError(cl, resp)
}

// assertCleanText checks what holds for every message, whatever the body.
func assertCleanText(t *testing.T, what, s string) {
	t.Helper()
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > redact.MaxMessageRunes {
		t.Fatalf("%s %q: invalid UTF-8 or longer than %d runes", what, s, redact.MaxMessageRunes)
	}
	for _, r := range s {
		if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) {
			t.Fatalf("%s %q has the invisible character %U", what, s, r)
		}
	}
}

func FuzzParseErrorBody(f *testing.F) {
	const secret = "fuzz-secret-value"
	f.Add([]byte(`{"status":404,"requestId":"r","error":"service not found"}`), "application/json")
	f.Add([]byte(`{"message":"Alert not found"}`), "application/json")
	f.Add([]byte("Unauthorized\n"), "text/plain")
	f.Add([]byte("<html><head><title>504 Gateway Time-out</title></head></html>"), "text/html")
	f.Add([]byte("bad key "+secret), "")
	cred := NewBasicCredentials("fuzz-key-id", secret)
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		e := errorFor(t, cred, 401, contentType, body)
		for what, s := range map[string]string{"Message": e.Message, "RequestID": e.RequestID} {
			assertCleanText(t, what, s)
			if strings.Contains(s, secret) {
				t.Fatalf("%s %q contains the secret", what, s)
			}
		}
	})
}

// encodedForm is one way a service may echo a credential: its text, and
// where in it the first character of the secret is complete (a cut before
// that shows nothing of the secret).
type encodedForm struct {
	name      string
	text      string
	firstEnds int
	// base64 forms mix the secret's bits with their neighbours': a cut shows
	// part of the secret only past secretStart characters.
	base64      bool
	secretStart int
}

// perRune encodes s one rune at a time.
func perRune(name, s string, enc func(r rune) string) encodedForm {
	var b strings.Builder
	first := 0
	for i, r := range s {
		b.WriteString(enc(r))
		if i == 0 {
			first = b.Len()
		}
	}
	return encodedForm{name: name, text: b.String(), firstEnds: first}
}

func unquoted(q string) string { return q[1 : len(q)-1] }

// encodedForms lists the encodings of secret the scrubber must catch; built
// with the standard library's encoders wherever one exists, independently of
// the scrubber.
func encodedForms(keyID, secret string) []encodedForm {
	jsonEscaped := func(escapeHTML bool) func(r rune) string {
		return func(r rune) string {
			var b bytes.Buffer
			e := json.NewEncoder(&b)
			e.SetEscapeHTML(escapeHTML)
			_ = e.Encode(string(r))
			return unquoted(strings.TrimSpace(b.String()))
		}
	}
	forms := []encodedForm{
		perRune("raw", secret, func(r rune) string { return string(r) }),
		perRune("JSON", secret, jsonEscaped(true)),
		perRune("JSON without HTML escaping", secret, jsonEscaped(false)),
		perRune(`JSON with \/`, secret, func(r rune) string {
			return strings.ReplaceAll(jsonEscaped(false)(r), "/", `\/`)
		}),
		perRune(`JSON all \uXXXX`, secret, func(r rune) string {
			if r > 0xFFFF {
				hi, lo := utf16Pair(r)
				return fmt.Sprintf(`\u%04X\u%04X`, hi, lo)
			}
			return fmt.Sprintf(`\u%04x`, r)
		}),
		perRune("JSON in JSON", secret, func(r rune) string {
			return unquoted(strconv.Quote(jsonEscaped(true)(r)))
		}),
		perRune("%q", secret, func(r rune) string { return unquoted(fmt.Sprintf("%q", string(r))) }),
		perRune("strconv.QuoteToASCII", secret, func(r rune) string { return unquoted(strconv.QuoteToASCII(string(r))) }),
		perRune("%+q", secret, func(r rune) string { return unquoted(fmt.Sprintf("%+q", string(r))) }),
		perRune("url.QueryEscape", secret, func(r rune) string { return url.QueryEscape(string(r)) }),
		perRune("url.PathEscape", secret, func(r rune) string { return url.PathEscape(string(r)) }),
		perRune("URL-encoded twice", secret, func(r rune) string { return url.QueryEscape(url.QueryEscape(string(r))) }),
	}
	encodings := map[string]*base64.Encoding{
		"std": base64.StdEncoding, "url": base64.URLEncoding, "raw std": base64.RawStdEncoding, "raw url": base64.RawURLEncoding,
	}
	for name, enc := range encodings {
		forms = append(forms,
			encodedForm{name: "base64 " + name, text: enc.EncodeToString([]byte(secret)), base64: true},
			encodedForm{name: "base64 " + name + " of keyId:keySecret", text: enc.EncodeToString([]byte(keyID + ":" + secret)),
				base64: true, secretStart: (8 * (len(keyID) + 1)) / 6})
	}
	return forms
}

func utf16Pair(r rune) (hi, lo rune) {
	r -= 0x10000
	return 0xD800 + r>>10, 0xDC00 + r&0x3FF
}

// The kinds of error body a credential may come back in.
const (
	bodyJSONObject = iota // {"error":"…"}, the form's text spliced in as is
	bodyJSONMarshalled
	bodyBareJSONString
	bodyPlainText
	bodyHTMLTitle
	bodyRequestID
	bodyCutAtCap     // plain text, cut by the error-body cap inside the form
	bodyJSONCutAtCap // a JSON object cut by the cap inside the form
	bodyKinds
)

// errorBody builds a body of kind with text in it; for the cut kinds, the
// cap falls cut bytes into form.
func errorBody(kind int, before, form, after string, cut int) []byte {
	text := before + form + after
	marshal := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	switch kind {
	case bodyJSONObject:
		return []byte(`{"status":401,"requestId":"r-1","error":"` + text + `"}`)
	case bodyJSONMarshalled:
		return []byte(`{"status":401,"error":` + marshal(text) + `}`)
	case bodyBareJSONString:
		return []byte(marshal(text))
	case bodyHTMLTitle:
		return []byte("<html><head><title>" + text + "</title></head><body>x</body></html>")
	case bodyRequestID:
		return []byte(`{"status":401,"requestId":` + marshal(text) + `,"error":"denied"}`)
	case bodyCutAtCap, bodyJSONCutAtCap:
		open := ""
		if kind == bodyJSONCutAtCap {
			open = `{"status":401,"error":"`
		}
		pad := maxErrorBodyBytes - len(open) - len(before) - cut
		if pad < 0 {
			return []byte(text)
		}
		return []byte(open + strings.Repeat(" ", pad) + text)
	default:
		return []byte(text)
	}
}

func printable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return utf8.ValidString(s)
}

// minFuzzSecretRunes: a secret shorter than this has no base64 run long
// enough to be told from chance (see minBase64Core).
const minFuzzSecretRunes = 4

// No encoding of a credential survives into an error message, whatever the
// credential's characters, the encoding, the body's shape and where a cap
// cuts it.
func FuzzScrubCredential(f *testing.F) {
	seeds := []struct {
		secret, keyID, before, after string
	}{
		{"fake-key-secret", "fake-key-id", "bad credentials: ", " (rejected)"},
		{`s3cr"t/+\value`, "id", "key ", ""},
		{"pä$$wörd 🔑 ∑", "clé", "", " invalid"},
		{"a  b  c  d", "x", "[", "]"},
		{"AKIAIOSFODNN7EXAMPLE/wJalrXUtnFEMI+K7MDENG", "ops@example.com", "Authorization: Basic ", ""},
	}
	for _, s := range seeds {
		for kind := range bodyKinds {
			f.Add(s.secret, s.keyID, s.before, s.after, uint8(kind), uint8(kind*3), uint16(kind*7))
		}
	}
	f.Fuzz(func(t *testing.T, secret, keyID, before, after string, kind, formIndex uint8, cut uint16) {
		if !printable(secret) || utf8.RuneCountInString(secret) < minFuzzSecretRunes {
			t.Skip("not a printable credential of the length the scrubber covers")
		}
		if keyID == "" || strings.Contains(keyID, ":") || !printable(keyID) {
			keyID = "fuzz-key-id"
		}
		if !utf8.ValidString(before) || !utf8.ValidString(after) {
			t.Skip("the text around the credential is not UTF-8")
		}
		forms := encodedForms(keyID, secret)
		form := forms[int(formIndex)%len(forms)]
		cutAt := 1 + int(cut)%len(form.text)
		body := errorBody(int(kind)%bodyKinds, before, form.text, after, cutAt)
		e := errorFor(t, NewBasicCredentials(keyID, secret), 401, "text/plain", body)

		for what, s := range map[string]string{"Message": e.Message, "RequestID": e.RequestID, "Error()": e.Error()} {
			if what != "Error()" {
				assertCleanText(t, what, s)
			}
			pieces := strings.Split(s, redact.Placeholder)
			for _, piece := range pieces {
				for _, f := range forms {
					if strings.Contains(piece, f.text) {
						t.Fatalf("%s %q contains the credential as %s %q (body ending %q)", what, s, f.name, f.text, bodyEnd(body))
					}
				}
			}
			// Where the cap cuts the form, the message must not end with
			// what the cap left of it. Elsewhere a message ending with the
			// beginning of a form is the service's own text, shown as it
			// is: redacting it would tell whoever wrote it (an alert ID
			// echoed) that it begins the secret.
			if what == "Error()" || !cutByCap(int(kind)%bodyKinds) {
				continue
			}
			end := strings.TrimSuffix(pieces[len(pieces)-1], "…")
			for _, f := range forms {
				if n := cutPrefixShown(end, f); n > 0 {
					t.Fatalf("%s %q ends with %d bytes of the credential as %s %q (body ending %q)", what, s, n, f.name, f.text, bodyEnd(body))
				}
			}
		}
	})
}

// bodyEnd returns the end of a body for a failure message: cut bodies are
// mostly padding.
func bodyEnd(body []byte) []byte { return body[max(0, len(body)-300):] }

func cutByCap(kind int) bool { return kind == bodyCutAtCap || kind == bodyJSONCutAtCap }

// minShownBytes is the shortest beginning of a form that cutPrefixShown
// counts: shorter ones occur by chance in any text.
const minShownBytes = 4

// cutPrefixShown returns the length of the beginning of f that end ends
// with, when that beginning shows part of the secret, and 0 otherwise.
func cutPrefixShown(end string, f encodedForm) int {
	for n := len(f.text) - 1; n >= minShownBytes; n-- {
		if !strings.HasSuffix(end, f.text[:n]) {
			continue
		}
		switch {
		case f.base64 && n >= f.secretStart+8:
			return n
		case !f.base64 && n >= f.firstEnds:
			return n
		}
	}
	return 0
}
