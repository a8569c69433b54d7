// Package bound cuts strings to a size, the one way the whole repository
// does it: never inside a UTF-8 sequence, and, where the caller asks for it,
// with an ellipsis that says something was cut.
//
// It is separate because every size the operator keeps (a condition message,
// an event note, an error message, an otherFields entry, a status list) is
// bounded by the API server or the CRD, and a cutter written once per caller
// had drifted into five, each with its own edge cases (a marker longer than
// the room left, a rune split at the cut). One tested cutter is one set of
// edge cases.
package bound
