// Package alertselect decides which alerts a watch follows and what its
// status and its AlertsSynced condition say of them: the alerts named in
// spec.alertIds and those spec.alertSelector matches, picked from a host's
// list or fetched one by one, each entry keeping its last good fetch when
// its read fails.
//
// It exists apart from the controller because these are rules over plain
// values (a listing, the previous entries, a selector) that need no API
// server to test and would otherwise crowd the controller, whose size is
// bounded: which ID of a list is NotFound, what a selector matches and in
// which order, how many matches the status takes, and how failures and
// waits are told. Each rule is a table test here.
package alertselect
