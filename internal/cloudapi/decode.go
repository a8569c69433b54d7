package cloudapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"mime"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
)

// alertEnvelope is the body of a successful alert API response.
type alertEnvelope struct {
	Data json.RawMessage `json:"data"`
}

// alertData is the alert API's alert as the status type holds it. The status
// type's error member is the operator's: a member of that name in the cloud's
// answer is not the spec's, so it is dropped like any other unknown member.
type alertData struct {
	swv1.AlertStatus
	Error ignored `json:"error"`
}

// ignored accepts any JSON value and keeps nothing of it.
type ignored struct{}

// UnmarshalJSON discards the value.
func (*ignored) UnmarshalJSON([]byte) error { return nil }

// decodeAlert decodes a get-alert response body: {"data": {...}}.
func decodeAlert(body []byte) (swv1.AlertStatus, error) {
	var env alertEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return swv1.AlertStatus{}, fmt.Errorf("decode alert envelope: %w", err)
	}
	if firstByte(env.Data) != '{' {
		return swv1.AlertStatus{}, errors.New("alert envelope data is not an object")
	}
	var a alertData
	if err := json.Unmarshal(env.Data, &a); err != nil {
		return swv1.AlertStatus{}, fmt.Errorf("decode alert: %w", err)
	}
	return a.AlertStatus, nil
}

// firstByte returns the first non-space byte of a JSON value, or 0.
func firstByte(raw json.RawMessage) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// checkContentType accepts what a JSON API may plausibly send on a success:
// no content type, application/json, any +json type, text/json, and
// text/plain (some gateways mislabel JSON; the body must still parse).
// Anything else, an HTML page from a captive portal or a CDN in particular,
// is not the API's answer.
func checkContentType(contentType string) error {
	if strings.TrimSpace(contentType) == "" {
		return nil
	}
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) {
		return fmt.Errorf("unparsable content type %q", truncate(contentType, 64))
	}
	switch {
	case mediaType == "application/json", mediaType == "text/json", mediaType == "text/plain",
		strings.HasSuffix(mediaType, "+json"):
		return nil
	}
	return fmt.Errorf("content type %q is not JSON", truncate(mediaType, 64))
}

// maxMessageRunes bounds Error.Message.
const maxMessageRunes = 200

// errorDetails is what an error response body may tell: the service's words
// and its request ID.
type errorDetails struct {
	Message   string
	RequestID string
}

// parseErrorBody extracts the service's words from an error response body.
// Management errors look like {"status":404,"requestId":"...","error":"..."},
// alert errors like {"message":"..."}; others are plain text or an HTML page.
// Secrets are removed from the result.
func parseErrorBody(body []byte, contentType string, secrets []string) errorDetails {
	var d errorDetails
	if obj, ok := jsonObject(body); ok {
		d.RequestID = firstString(obj, "requestId", "request_id")
		d.Message = firstString(obj, "error", "message", "error_description", "detail", "title")
		if d.Message == "" {
			// {"error": {"message": "..."}} is a common variant.
			if inner, ok := jsonObject(obj["error"]); ok {
				d.Message = firstString(inner, "message")
			}
		}
	} else if looksLikeHTML(body, contentType) {
		d.Message = htmlTitle(body)
	} else {
		d.Message = string(body)
	}
	d.Message = cleanMessage(d.Message, secrets)
	d.RequestID = cleanMessage(d.RequestID, secrets)
	return d
}

func jsonObject(raw []byte) (map[string]json.RawMessage, bool) {
	if firstByte(raw) != '{' {
		return nil, false
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, false
	}
	return obj, true
}

// firstString returns the first of keys whose value is a non-empty string.
func firstString(obj map[string]json.RawMessage, keys ...string) string {
	for _, k := range keys {
		var s string
		if json.Unmarshal(obj[k], &s) == nil && strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

func looksLikeHTML(body []byte, contentType string) bool {
	mediaType, _, _ := mime.ParseMediaType(contentType)
	if mediaType == "text/html" || mediaType == "application/xhtml+xml" {
		return true
	}
	head := strings.ToLower(string(bytes.TrimSpace(body[:min(len(body), 512)])))
	return strings.HasPrefix(head, "<!doctype") || strings.HasPrefix(head, "<html") ||
		strings.HasPrefix(head, "<?xml") || strings.HasPrefix(head, "<head") || strings.HasPrefix(head, "<body")
}

var (
	titleRE = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)
	h1RE    = regexp.MustCompile(`(?is)<h1[^>]*>(.*?)</h1>`)
	tagRE   = regexp.MustCompile(`(?s)<[^>]*>`)
)

// htmlTitle returns an HTML page's title (or first heading) as text, never the
// page itself.
func htmlTitle(body []byte) string {
	for _, re := range []*regexp.Regexp{titleRE, h1RE} {
		if m := re.FindSubmatch(body); m != nil {
			return html.UnescapeString(tagRE.ReplaceAllString(string(m[1]), " "))
		}
	}
	return ""
}

// cleanMessage makes s fit for an error message and a condition: secrets
// removed, valid UTF-8, no control characters, whitespace collapsed, and at
// most maxMessageRunes runes.
func cleanMessage(s string, secrets []string) string {
	for _, secret := range secrets {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, redacted)
		}
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
	return truncate(s, maxMessageRunes)
}

// truncate cuts s to at most n runes, marking the cut with an ellipsis.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
