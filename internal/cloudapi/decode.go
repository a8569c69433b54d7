package cloudapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"
)

// managementEnvelope is the body of every management API response.
type managementEnvelope[T any] struct {
	// Status is a pointer so that an absent status is tolerated, while a
	// present one can be checked against the HTTP status.
	Status    *int64  `json:"status"`
	RequestID *string `json:"requestId"`
	// Result is a pointer so that an absent or null result, which is no
	// array, can be told from an empty one.
	Result *[]T `json:"result"`
}

// alertEnvelope is the body of a successful alert API response.
type alertEnvelope struct {
	Data json.RawMessage `json:"data"`
}

// decodeManagement checks the management envelope of a success response and
// decodes its result, in one pass over the body. It returns the envelope's
// request ID even when the result is unusable, so the error can carry it.
func decodeManagement[T any](body []byte, httpStatus int) (string, []T, error) {
	var env managementEnvelope[T]
	err := json.Unmarshal(body, &env)
	requestID := ""
	if env.RequestID != nil {
		requestID = *env.RequestID
	}
	switch {
	case err != nil:
		return requestID, nil, fmt.Errorf("decode management response: %w", err)
	case env.Status != nil && *env.Status != int64(httpStatus):
		return requestID, nil, fmt.Errorf("envelope status %d disagrees with HTTP status %d", *env.Status, httpStatus)
	case env.Result == nil:
		return requestID, nil, errors.New("envelope result is missing or null, not an array")
	}
	return requestID, *env.Result, nil
}

// decodePipes decodes a list-pipes response body.
func decodePipes(body []byte, httpStatus int) (PipeList, error) {
	id, items, err := decodeManagement[Pipe](body, httpStatus)
	return PipeList{RequestID: id, Items: items}, err
}

// decodeReversePrivateEndpoints decodes a list-reverse-private-endpoints
// response body.
func decodeReversePrivateEndpoints(body []byte, httpStatus int) (ReversePrivateEndpointList, error) {
	id, items, err := decodeManagement[ReversePrivateEndpoint](body, httpStatus)
	return ReversePrivateEndpointList{RequestID: id, Items: items}, err
}

// decodeAlert decodes a get-alert response body: {"data": {...}}.
func decodeAlert(body []byte) (Alert, error) {
	var env alertEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return Alert{}, fmt.Errorf("decode alert envelope: %w", err)
	}
	if firstByte(env.Data) != '{' {
		return Alert{}, errors.New("alert envelope data is not an object")
	}
	var a Alert
	if err := json.Unmarshal(env.Data, &a); err != nil {
		return Alert{}, fmt.Errorf("decode alert: %w", err)
	}
	return a, nil
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
