package cloudapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"mime"
	"net/http"
	"regexp"
	"strings"

	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
)

// errorDetails is what an error response body may tell: the service's words
// and its request ID, as sent: they are cleaned (scrubbed, shortened) only
// once the status is classified, since classifying may read the words.
type errorDetails struct {
	Message   string
	RequestID string
	// Code and ServiceState are the structured members of a 424's body, such
	// as {"code":"SERVICE_NOT_RUNNING","serviceState":"awaking"}.
	Code         string
	ServiceState string
	// Shape is what kind of body it was.
	Shape bodyShape
}

// bodyShape is the kind of an error response body.
type bodyShape int

const (
	shapeEmpty      bodyShape = iota // nothing but white space
	shapeJSONObject                  // the APIs' own error bodies
	shapeJSONString
	shapeHTML
	shapeText // anything else
)

// parseErrorBody extracts the service's words from an error response body.
// Management errors look like {"status":404,"requestId":"...","error":"..."},
// alert errors like {"message":"..."}; others are a bare JSON string, plain
// text or an HTML page.
func parseErrorBody(body []byte, contentType string) errorDetails {
	if obj, ok := lenient.Object(body); ok {
		return objectDetails(obj)
	}
	if s, ok := lenient.String(body); ok {
		return errorDetails{Shape: shapeJSONString, Message: s}
	}
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		return errorDetails{Shape: shapeEmpty}
	case looksLikeHTML(body, contentType):
		return errorDetails{Shape: shapeHTML, Message: htmlText(body)}
	default:
		return errorDetails{Shape: shapeText, Message: string(body)}
	}
}

// objectDetails reads a JSON error body.
func objectDetails(obj map[string]json.RawMessage) errorDetails {
	d := errorDetails{
		Shape:        shapeJSONObject,
		RequestID:    firstString(obj, "requestId", "request_id"),
		Code:         firstString(obj, "code"),
		ServiceState: firstString(obj, "serviceState"),
		Message:      firstString(obj, "error", "message", "error_description", "detail", "title"),
	}
	if d.Message == "" {
		// {"error": {"message": "..."}} is a common variant.
		if inner, ok := lenient.Object(obj["error"]); ok {
			d.Message = firstString(inner, "message")
		}
	}
	return d
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
	preRE   = regexp.MustCompile(`(?is)<pre[^>]*>(.*?)</pre>`)
	tagRE   = regexp.MustCompile(`(?s)<[^>]*>`)
)

// cannotRE finds a web framework's words for a route it does not have, such
// as "Cannot GET /v1/organizations/...", in a page's <pre>.
var cannotRE = regexp.MustCompile(`(?i)^\s*cannot [a-z]+ `)

// htmlText returns the words of an HTML error page, never its markup: a
// framework's "Cannot GET /path" (it says which route is missing, where the
// title only says "Error"), else the title or first heading, else the text
// the page shows. A proxy's page without a title (an ingress's bare
// "<center>...</center>", a gateway's body of paragraphs) still has words
// for the user; the caller bounds them.
func htmlText(body []byte) string {
	if m := preRE.FindSubmatch(body); m != nil {
		if text := html.UnescapeString(tagRE.ReplaceAllString(string(m[1]), " ")); cannotRE.MatchString(text) {
			return text
		}
	}
	if title := htmlTitle(body); strings.TrimSpace(title) != "" {
		return title
	}
	return visibleText(body)
}

// invisibleRE finds what a browser does not show of a page: comments,
// scripts and style sheets, which may hold anything (a trace ID, code).
var invisibleRE = regexp.MustCompile(`(?is)<!--.*?-->|<script\b.*?</script\s*>|<style\b.*?</style\s*>|<head\b.*?</head\s*>`)

// visibleText is the text of a page as a browser shows it, before the
// caller collapses its white space.
func visibleText(body []byte) string {
	text := invisibleRE.ReplaceAllLiteral(body, []byte(" "))
	return html.UnescapeString(string(tagRE.ReplaceAllLiteral(text, []byte(" "))))
}

// descriptionRE finds the error_description parameter of an auth challenge,
// quoted (with backslash escapes) or as a token (RFC 6750 section 3).
var descriptionRE = regexp.MustCompile(`(?i)(?:^|[\s,])error_description\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))`)

// quotedPairRE finds one backslash escape of a quoted string.
var quotedPairRE = regexp.MustCompile(`\\(.)`)

// challengeDescription returns the error_description of the first
// WWW-Authenticate challenge that has one: a gateway's or identity
// provider's words on why the credential was refused ("The access token
// expired"), often the only words of a 401 whose body is empty or generic.
func challengeDescription(h http.Header) string {
	for _, v := range h.Values("WWW-Authenticate") {
		if m := descriptionRE.FindStringSubmatch(v); m != nil {
			if m[1] != "" {
				return quotedPairRE.ReplaceAllString(m[1], "$1")
			}
			return m[2]
		}
	}
	return ""
}

// ownWords are the words of the service (or of what answers in front of
// it) on a failed call: its body's, with an auth challenge's description
// when the body does not already say it.
func ownWords(d errorDetails, h http.Header) string {
	words := strings.TrimSpace(d.Message)
	desc := strings.TrimSpace(challengeDescription(h))
	switch {
	case desc == "" || strings.Contains(words, desc):
		return words
	case words == "":
		return desc
	}
	return words + "; " + desc
}

// htmlTitle returns an HTML page's title (or first heading) as text.
func htmlTitle(body []byte) string {
	for _, re := range []*regexp.Regexp{titleRE, h1RE} {
		if m := re.FindSubmatch(body); m != nil {
			return html.UnescapeString(tagRE.ReplaceAllString(string(m[1]), " "))
		}
	}
	return ""
}

// idleRE finds the word "idle" in a 424's message, such as "FAILED_DEPENDENCY:
// Service is not running. Current state: idle".
var idleRE = regexp.MustCompile(`(?i)\bidle\b`)

// notRunningRE finds "not running" in a 424's message.
var notRunningRE = regexp.MustCompile(`(?i)\bnot running\b`)

// currentStateRE finds the state a 424's message names, as in
// "FAILED_DEPENDENCY: Service is not running. Current state: stopped".
var currentStateRE = regexp.MustCompile(`(?i)\bcurrent state:\s*([a-z][a-z_-]*)`)

// serviceIsRE finds a state of a service that is neither running nor idle
// in a 424's message, as in "FAILED_DEPENDENCY: Service is stopping": a
// service on its way down or up cannot serve the call any more than a
// stopped one. The states are those of the service lifecycle; another word
// after "Service is" says nothing of a state.
var serviceIsRE = regexp.MustCompile(`(?i)\bservice is (stopping|stopped|starting|awaking|waking|provisioning|terminating|terminated)\b`)

// maxServiceStateRunes bounds Error.ServiceState.
const maxServiceStateRunes = 32

// reasonForResponse maps an HTTP status code that is not a success, and what
// the body says, to a reason. op tells the alert API's 404s apart.
func reasonForResponse(code int, d errorDetails, op string) Reason {
	switch {
	case code == 424:
		return reasonFor424(d)
	case code == 400:
		return ReasonBadRequest
	case code == 401:
		return ReasonUnauthorized
	case code == 403:
		return ReasonForbidden
	case code == 404:
		if isAPINotFound(d, op) {
			return ReasonNotFound
		}
		return ReasonEndpointNotFound
	case code == 429:
		return ReasonRateLimited
	case code >= 500 && code <= 599:
		return ReasonServerError
	default:
		return ReasonUnexpectedStatus
	}
}

// reasonFor424 reads a 424 (Failed Dependency): the management API answers
// it when the service cannot serve the call. A structured body says why in
// code and serviceState; an older one only in its words.
func reasonFor424(d errorDetails) Reason {
	state := serviceStateOf(d)
	switch {
	case strings.EqualFold(d.Code, "SERVICE_IDLE"), strings.EqualFold(state, "idle"):
		return ReasonServiceIdle
	case state != "", strings.EqualFold(d.Code, "SERVICE_NOT_RUNNING"), notRunningRE.MatchString(d.Message):
		return ReasonServiceNotRunning
	case idleRE.MatchString(d.Message):
		return ReasonServiceIdle
	}
	return ReasonUnexpectedStatus
}

// serviceStateOf is the state of the service a 424 names: serviceState, or
// "Current state: ..." or "Service is stopping" (see serviceIsRE) in its
// words; "" for none.
func serviceStateOf(d errorDetails) string {
	if s := strings.TrimSpace(d.ServiceState); s != "" {
		return s
	}
	for _, re := range []*regexp.Regexp{currentStateRE, serviceIsRE} {
		if m := re.FindStringSubmatch(d.Message); m != nil {
			return m[1]
		}
	}
	return ""
}

// isAPINotFound tells a 404 the API sent about a resource from one of a web
// server that has no such route. The APIs answer errors with a JSON object;
// an empty body tells nothing either way and keeps the older reading. The
// alert API also answers a missing alert with the bare status text "Not
// Found" (its server's default for a 404 it sends itself), which a route
// that does not exist never does: that server's own 404 is an HTML page
// "Cannot GET /...".
func isAPINotFound(d errorDetails, op string) bool {
	switch d.Shape {
	case shapeJSONObject, shapeEmpty:
		return true
	case shapeText, shapeJSONString:
		return op == OperationGetAlert && strings.EqualFold(strings.TrimSpace(d.Message), "Not Found")
	}
	return false
}

// noListRoute marks err as ErrNoListRoute when it says the host has no
// list route: a 404 or a 405 not in the API's own JSON, a 2xx that is not
// JSON or holds no list.
func noListRoute(err error) error {
	e, ok := errors.AsType[*Error](err)
	if !ok || errors.Is(err, ErrNoListRoute) {
		return err
	}
	switch {
	case (e.StatusCode == http.StatusNotFound || e.StatusCode == http.StatusMethodNotAllowed) && !e.fromAPI,
		e.Reason == ReasonInvalidResponse && errors.Is(e.Err, errNotJSON):
		if e.Err == nil {
			e.Err = ErrNoListRoute
		} else {
			e.Err = fmt.Errorf("%w: %w", ErrNoListRoute, e.Err)
		}
	}
	return err
}
