package cloudapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
)

// Bounds of what is kept of one alert, so that a hundred alerts always fit in
// a status whatever the alert API sends (swv1.AlertStatus documents them).
// The reader's own bounds (channels, left-out members) are lenient's.
const (
	maxExecutionErrors            = 5
	maxExecutionErrorMessageRunes = redact.MaxMessageRunes
	maxNoteRunes                  = 1024
	// maxWordRunes bounds the short strings of an execution error (its
	// type and timestamp).
	maxWordRunes = 64
	// maxTagRunes bounds each of an alert's tags.
	maxTagRunes = 64
)

// alertEnvelope is the body of a successful alert API response.
type alertEnvelope struct {
	Data json.RawMessage `json:"data"`
}

// decodeAlert decodes a get-alert response body, {"data": {...}}, of either
// shape of the alert API (see swv1.AlertStatus). Only a body that is not
// such an envelope fails. Free text the cloud wrote (execution errors, the
// note) is cleaned with s.
func decodeAlert(body []byte, s *redact.Scrubber) (a swv1.AlertStatus, leftOut []string, err error) {
	if a, leftOut, err = readAlertEnvelope(body); err != nil {
		return swv1.AlertStatus{}, nil, err
	}
	cleanAlert(&a, s)
	return a, leftOut, nil
}

// cleanAlert scrubs every string of an alert read as the cloud sent it of
// the call's credential, and bounds its free text and tags.
func cleanAlert(a *swv1.AlertStatus, s *redact.Scrubber) {
	redactStrings(reflect.ValueOf(a).Elem(), s)
	if a.Note != nil {
		a.Note = new(s.CleanTo(*a.Note, maxNoteRunes))
	}
	for i, tag := range a.Tags {
		a.Tags[i] = s.CleanTo(tag, maxTagRunes)
	}
	a.ExecutionErrors = latestExecutionErrors(a.ExecutionErrors, s)
}

// readAlertEnvelope reads the alert in {"data": {...}} as the lenient reader
// does, uncleaned.
func readAlertEnvelope(body []byte) (swv1.AlertStatus, []string, error) {
	var env alertEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return swv1.AlertStatus{}, nil, fmt.Errorf("decode alert envelope: %w", err)
	}
	if lenient.FirstByte(env.Data) != '{' {
		return swv1.AlertStatus{}, nil, errors.New("alert envelope data is not an object")
	}
	a, leftOut := lenient.ReadAlert(env.Data)
	return a, leftOut, nil
}

// latestExecutionErrors cleans an alert's recent failures and keeps the
// latest maxExecutionErrors, oldest first: ordered by timestamp (those
// without a readable one count as oldest), in the order sent among equals.
// Sorting the kept ones again changes nothing, so an unchanged cloud yields
// an unchanged status.
func latestExecutionErrors(errs []swv1.AlertExecutionError, s *redact.Scrubber) []swv1.AlertExecutionError {
	if errs == nil {
		return nil
	}
	for i := range errs {
		e := &errs[i]
		e.Timestamp = cleanWord(e.Timestamp, s)
		e.Type = cleanWord(e.Type, s)
		if e.Message != nil {
			e.Message = new(s.CleanTo(redact.HostOnlyURLs(*e.Message), maxExecutionErrorMessageRunes))
		}
	}
	type dated struct {
		at  time.Time
		err swv1.AlertExecutionError
	}
	all := make([]dated, len(errs))
	for i, e := range errs {
		all[i] = dated{at: ExecutionErrorTime(e), err: e}
	}
	slices.SortStableFunc(all, func(x, y dated) int { return x.at.Compare(y.at) })
	all = all[max(0, len(all)-maxExecutionErrors):]
	out := make([]swv1.AlertExecutionError, len(all))
	for i, x := range all {
		out[i] = x.err
	}
	return out
}

// redactStrings redacts the credentials s finds from every string of v, an
// alert or a part of one. Every string, not a list of fields: a field added
// to swv1.AlertStatus is covered without a change here. Decimals are left
// alone: they hold numbers only, and a redacted one could not be stored.
func redactStrings(v reflect.Value, s *redact.Scrubber) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			redactStrings(v.Elem(), s)
		}
	case reflect.Struct:
		for _, field := range v.Fields() {
			redactStrings(field, s)
		}
	case reflect.Slice:
		for i := range v.Len() {
			redactStrings(v.Index(i), s)
		}
	case reflect.String:
		if v.Type() == decimalType {
			return
		}
		if clean := s.Redact(v.String()); clean != v.String() {
			v.SetString(clean)
		}
	}
}

var decimalType = reflect.TypeFor[swv1.Decimal]()

// cleanWord cleans a short string of the cloud's.
func cleanWord(w *string, s *redact.Scrubber) *string {
	if w == nil {
		return nil
	}
	return new(s.CleanTo(*w, maxWordRunes))
}

// ExecutionErrorTime is when an execution error happened, the zero time when
// its timestamp is absent or not an RFC 3339 date-time.
func ExecutionErrorTime(e swv1.AlertExecutionError) time.Time {
	if e.Timestamp == nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, *e.Timestamp)
	if err != nil {
		return time.Time{}
	}
	return t
}

// managedAlertEnvelope is the management API's answer of one alert.
type managedAlertEnvelope struct {
	Status    *int64          `json:"status"`
	RequestID *string         `json:"requestId"`
	Result    json.RawMessage `json:"result"`
	Error     json.RawMessage `json:"error"`
	Message   json.RawMessage `json:"message"`
}

// decodeManagedAlert decodes the management API's answer of one alert,
// {"status":200,"requestId":..,"result":{...}}, its alert read and cleaned
// as decodeAlert does. An envelope whose status disagrees with the HTTP
// status is an envelopeStatusError with its words.
func decodeManagedAlert(body []byte, httpStatus int, s *redact.Scrubber) (requestID string, a swv1.AlertStatus, leftOut []string, err error) {
	var env managedAlertEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return "", a, nil, fmt.Errorf("decode management envelope: %w", err)
	}
	requestID = deref(env.RequestID)
	if env.Status != nil && *env.Status != int64(httpStatus) {
		words := envelopeWords(env.Error, env.Message)
		return requestID, a, nil, &envelopeStatusError{Status: *env.Status, HTTPStatus: httpStatus, words: &words}
	}
	if lenient.FirstByte(env.Result) != '{' {
		return requestID, a, nil, errors.New("management envelope result is not an alert object")
	}
	a, leftOut = lenient.ReadAlert(env.Result)
	cleanAlert(&a, s)
	return requestID, a, leftOut, nil
}

// envelopeWords are the words of an envelope's error or message member: a
// string, or an object's message; error first, as the spec names it.
func envelopeWords(members ...json.RawMessage) string {
	for _, raw := range members {
		if words, ok := lenient.String(raw); ok && words != "" {
			return words
		}
		if obj, ok := lenient.Object(raw); ok {
			if words := firstString(obj, "message", "error"); words != "" {
				return words
			}
		}
	}
	return ""
}
