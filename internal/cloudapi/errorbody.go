package cloudapi

import (
	"bytes"
	"encoding/json"
	"html"
	"mime"
	"regexp"
	"strings"
)

// errorDetails is what an error response body may tell: the service's words
// and its request ID, as sent: they are cleaned (scrubbed, shortened) only
// once the status is classified, since classifying may read the words.
type errorDetails struct {
	Message   string
	RequestID string
}

// parseErrorBody extracts the service's words from an error response body.
// Management errors look like {"status":404,"requestId":"...","error":"..."},
// alert errors like {"message":"..."}; others are a bare JSON string, plain
// text or an HTML page.
func parseErrorBody(body []byte, contentType string) errorDetails {
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
	} else if s, ok := jsonString(body); ok {
		d.Message = s
	} else if looksLikeHTML(body, contentType) {
		d.Message = htmlTitle(body)
	} else {
		d.Message = string(body)
	}
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

func jsonString(raw []byte) (string, bool) {
	if firstByte(raw) != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
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
