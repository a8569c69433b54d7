// Package alerts is what the operator knows of the cloud's alerts beyond
// one call: how a host's whole alert list is read through pages (ReadAll)
// and which hosts serve that list at all (Routes), and which of its alerts
// a watch follows and what its status and its AlertsSynced condition say of
// them (the alerts named in spec.alertIds and those spec.alertSelector
// matches, picked from a list or fetched one by one, each entry keeping its
// last good fetch when its read fails).
//
// These are rules over plain values (pages, a listing, the previous
// entries, a selector) that need no HTTP and no API server to test, and
// each is a table test here with an injected clock and fake pages: the
// list may change while it is read (an alert created or deleted between
// two pages shifts every offset), a host may ignore offset and answer the
// same page forever, an older host has no list route, which ID of a list
// is NotFound, what a selector matches, at what cost and in which order,
// how many matches the status takes, and how failures and waits are told.
//
// read.go is where and how a list is read (its source, its route, its
// pages); select.go is what a watch takes of it (needs, picks, status).
package alerts
