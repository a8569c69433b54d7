package lenient

import (
	"reflect"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
)

// Bounds of what the reader keeps of one alert, so that a hundred alerts
// always fit in a status whatever the alert API sends (swv1.AlertStatus
// documents them).
const (
	maxAlertChannels = 10
	// MaxAlertTags bounds the tags kept of one alert.
	MaxAlertTags = 20
	// maxLeftOut bounds the members ReadAlert names as left out.
	maxLeftOut = 10
)

// ReadAlert reads the alert raw, the data object of an alert API response,
// of either shape of the alert API (see swv1.AlertStatus): a member of a type
// the operator cannot use is left out of the result and named in leftOut
// (at most 10, such as "threshold" or "channels[2].webhookId", in the order
// of swv1.AlertStatus's fields); members the types lack are not kept. Its
// strings lose their control characters (redact.Printable); its free text
// is otherwise as the cloud wrote it: cleaning it is the caller's.
func ReadAlert(raw []byte) (a swv1.AlertStatus, leftOut []string) {
	a, leftOut, _ = ReadAlertWithin(raw, nil)
	return a, leftOut
}

// ReadAlertWithin reads the alert raw as ReadAlert does, charging what it
// costs to work, the budget of the answer it is an item of (a list of
// alerts): it fails with ErrWorkBudget once that is spent.
func ReadAlertWithin(raw []byte, work *Work) (a swv1.AlertStatus, leftOut []string, err error) {
	r := &itemReader{rules: alertRules, work: work}
	r.object(reflect.ValueOf(&a).Elem(), raw, "")
	printableStrings(reflect.ValueOf(&a).Elem())
	return a, r.leftOut, work.Charge(0)
}

// printableStrings drops the control characters of every string of v, an
// alert or a part of one (redact.Printable), as redact.Value does for the
// items of a list: an alert's strings are scrubbed by the cloud client,
// which knows the call's token, but what a terminal would act on goes here,
// on every path an alert is read by (a GET of either API, a page of a list).
// Every string, not a list of fields, so that a field added to
// swv1.AlertStatus is covered without a change here.
func printableStrings(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			printableStrings(v.Elem())
		}
	case reflect.Struct:
		for _, field := range v.Fields() {
			printableStrings(field)
		}
	case reflect.Slice:
		for i := range v.Len() {
			printableStrings(v.Index(i))
		}
	case reflect.String:
		if clean := redact.Printable(v.String()); clean != v.String() {
			v.SetString(clean)
		}
	}
}

// alertRules read an alert with the reader of list items (reader.go): a
// member of a type the operator cannot use is left out, and named, while
// the others stay. Unlike a list item, an alert takes strings only as JSON
// strings, names what it leaves out in the order of swv1.AlertStatus's
// fields, and keeps nothing of the members it does not know.
var alertRules = itemRules{maxLeftOut: maxLeftOut, onlyStringsAreStrings: true, inFieldOrder: true}

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
	case t == alertType && name == "tags":
		return readTagsMember
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
	if s, ok := String(raw); ok {
		return s, true
	}
	obj, ok := Object(raw)
	if !ok {
		return "", false
	}
	for _, key := range []string{"id", "_id"} {
		if s, ok := String(obj[key]); ok {
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

// readTagsMember reads the alert's tags, the first MaxAlertTags of them;
// cutting each to a length is the caller's, with the rest of its cleaning.
func readTagsMember(r *itemReader, v reflect.Value, raw []byte, path string) {
	r.sliceWithin(v.FieldByName("Tags"), raw, path, MaxAlertTags)
}
