package cloudapi

import swv1 "github.com/servicewatch/servicewatch/api/v1beta1"

// The items are decoded straight into the api/v1beta1 types, which carry the
// field documentation users read with kubectl explain: one schema, no copy
// that could drift from it.

// ListOptions bound what a list call keeps of a response.
type ListOptions[T any] struct {
	// KeepBytes bounds the summed JSON size of List.Items, each item counting
	// at least 64 bytes however small its JSON (each item's
	// encoding plus one byte for its comma). <= 0 keeps everything.
	KeepBytes int
	// Charge, when set, is what an item counts against KeepBytes when that
	// is more than its JSON: the caller's measure of what the item costs it
	// kept, such as its size as a Go value (an item of empty nested objects
	// is 60 bytes of JSON and several hundred decoded).
	Charge func(*T) int
	// Each, when set, is called once for every distinct item of the response,
	// in response order, after redaction and before the item is kept or
	// dropped, so the caller can count or project items it will not keep.
	// It must not retain the pointer. For an id that repeats, Each sees its
	// first occurrence, and Replace hears when another takes its place in
	// List.Items.
	//
	// The envelope's status may follow its result, so Each can have seen
	// items of a response the call then rejects: count into a scratch value
	// and use it only when the call succeeds.
	Each func(*T)
	// Replace, when set, hears each time an item whose id repeats takes the
	// place of the one List.Items kept for that id (old as kept, perhaps
	// slimmed: its identity is whole), so that counts made in Each count
	// what the list keeps, whatever the response's order. Of an id that
	// falls outside KeepBytes, Each's first occurrence stays counted.
	Replace func(old, replacement *T)
	// Work, when set, is told once per call how much decoding its answer
	// cost, in units of lenient.Work (about one byte scanned each), whether
	// the call succeeded or not: the caller charges it to whoever asked for
	// the call (see internal/tenancy).
	Work func(units int64)
}

// List is what a list call returns.
type List[T any] struct {
	// RequestID is the management envelope's requestId, cleaned as an
	// error's is (credentials scrubbed, at most 200 characters).
	RequestID string
	// Items are the response's distinct items ordered by id (items without an
	// id first, ordered by a hash of their content). When they do not fit
	// ListOptions.KeepBytes, the items that need attention (a failing state,
	// see the API types' NeedsAttention) are kept first, then the others in
	// id order, slimmed and cut to their identities before any is left out
	// (see slim.Keeper); what is kept is still ordered by id. The same items in
	// another order give the same Items: a cloud that shuffles its answer
	// does not change the status.
	//
	// Of items that share an id, the one whose JSON encoding sorts first is
	// kept, and the id counts against KeepBytes with the largest of its
	// encodings: which occurrence comes first decides nothing. An empty id
	// counts as no id.
	Items []T
	// Total counts the distinct items of the response, kept or not.
	Total int
	// Incomplete counts the items of the response of which some fields were
	// left out because their values could not be used (they are kept as
	// sent in the items' otherFields), and the items left out whole because
	// they were not JSON objects. The other items and fields are unaffected.
	Incomplete int
	// IncompleteItems describe the first few of them, each as its id (or
	// "item N") and the paths left out: "p1 (scaling.replicaCpuMillicores)".
	IncompleteItems []string
}

// AlertResult is the result of fetching one alert.
type AlertResult struct {
	// Alert is the value of the response's data member. Its error field is
	// never set: it is the operator's, not the cloud's.
	Alert swv1.AlertStatus
	// RequestID is the X-Request-Id response header, when the alert API sends
	// one (its body carries no request ID).
	RequestID string
	// LeftOut names the members of the alert that were left out because
	// their value was of a type the operator cannot use, such as
	// "threshold" or "channels[2].webhookId": at most 10, in the order of
	// Alert's fields. The other members are in Alert.
	LeftOut []string
}
