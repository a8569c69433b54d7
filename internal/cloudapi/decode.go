package cloudapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"strings"
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

// truncate cuts s to at most n runes, marking the cut with an ellipsis.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
