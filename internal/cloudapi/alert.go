package cloudapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/redact"
)

// Bounds of what is kept of one alert, so that a hundred alerts always fit in
// a status whatever the alert API sends (swv1.AlertStatus documents them).
const (
	maxAlertChannels              = 10
	maxExecutionErrors            = 5
	maxExecutionErrorMessageRunes = redact.MaxMessageRunes
	maxNoteRunes                  = 1024
	// maxWordRunes bounds the short strings of an execution error (its
	// type and timestamp).
	maxWordRunes = 64
	// maxLeftOut bounds AlertResult.LeftOut.
	maxLeftOut = 10
)

// alertRules read an alert with the reader of list items (lenient.go): a
// member of a type the operator cannot use is left out, and named, while
// the others stay. Unlike a list item, an alert takes strings only as JSON
// strings, names what it leaves out in the order of swv1.AlertStatus's
// fields, and keeps nothing of the members it does not know.
var alertRules = itemRules{maxLeftOut: maxLeftOut, onlyStringsAreStrings: true, inFieldOrder: true}

// alertEnvelope is the body of a successful alert API response.
type alertEnvelope struct {
	Data json.RawMessage `json:"data"`
}

// decodeAlert decodes a get-alert response body, {"data": {...}}, of either
// shape of the alert API (see swv1.AlertStatus). Only a body that is not
// such an envelope fails. Free text the cloud wrote (execution errors, the
// note) is cleaned with s.
func decodeAlert(body []byte, s *redact.Scrubber) (a swv1.AlertStatus, leftOut []string, err error) {
	var env alertEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return swv1.AlertStatus{}, nil, fmt.Errorf("decode alert envelope: %w", err)
	}
	if firstByte(env.Data) != '{' {
		return swv1.AlertStatus{}, nil, errors.New("alert envelope data is not an object")
	}
	r := &itemReader{rules: alertRules}
	r.object(reflect.ValueOf(&a).Elem(), env.Data, "")
	if a.Note != nil {
		a.Note = new(s.CleanTo(*a.Note, maxNoteRunes))
	}
	a.ExecutionErrors = latestExecutionErrors(a.ExecutionErrors, s)
	return a, r.leftOut, nil
}

var (
	alertType        = reflect.TypeFor[swv1.AlertStatus]()
	alertChannelType = reflect.TypeFor[swv1.AlertChannel]()
	alertSilenceType = reflect.TypeFor[swv1.AlertSilence]()
)

// renamedAlertMembers are the members newer alert API servers renamed, by
// their new name, to the old one that names their field. The new name wins
// when both are usable: it is always the identifier, while the old name may
// hold the referenced document itself.
var renamedAlertMembers = map[string]string{
	"teamId":        "team",
	"dashboardId":   "dashboard",
	"savedSearchId": "savedSearch",
}

// otherNamesOf returns the other names of the member name of a struct of
// type t, which are read before it (see schema).
func otherNamesOf(t reflect.Type, name string) []string {
	if t != alertType {
		return nil
	}
	var names []string
	for newName, oldName := range renamedAlertMembers {
		if oldName == name {
			names = append(names, newName)
		}
	}
	return names
}

// alertHookFor returns how the member name of a struct of type t of an
// alert is read when its field's type is not enough to say; nil otherwise.
func alertHookFor(t reflect.Type, name string) memberHook {
	switch {
	case t == alertType && name == "channels":
		return readChannelsMember
	case t == alertType, t == alertChannelType, t == alertSilenceType:
		return alertReferences[memberKey{t, name}]
	}
	return nil // not an alert's: spare a list item's every member the lookup
}

// alertReferences read the members that reference another object, as its
// identifier or the referenced document (refID); a renamed one into its
// field under the old name, winning over it. Built once, here, and never
// changed.
var alertReferences = func() map[memberKey]memberHook {
	hooks := map[memberKey]memberHook{
		{alertChannelType, "webhookId"}: readInto("webhookId", refID, true),
		{alertSilenceType, "by"}:        readInto("by", refID, true),
	}
	for newName, oldName := range renamedAlertMembers {
		hooks[memberKey{alertType, newName}] = readInto(oldName, refID, true)
		hooks[memberKey{alertType, oldName}] = readInto(oldName, refID, false)
	}
	return hooks
}()

// refID reads a reference to another object: its identifier as a string, or
// the object itself with a string id or _id (a server may send the
// referenced document in its place).
func refID(raw []byte) (string, bool) {
	if s, ok := jsonString(raw); ok {
		return s, true
	}
	obj, ok := jsonObject(raw)
	if !ok {
		return "", false
	}
	for _, key := range []string{"id", "_id"} {
		if s, ok := jsonString(obj[key]); ok {
			return s, true
		}
	}
	return "", false
}

// readChannelsMember reads the list of channels, the first maxAlertChannels
// of them.
func readChannelsMember(r *itemReader, v reflect.Value, raw []byte, path string) {
	r.sliceWithin(v.FieldByName("Channels"), raw, path, maxAlertChannels)
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
