// Package alertlist reads a host's whole alert list through pages
// (ReadAll) and remembers which hosts serve that list at all (Routes).
//
// It exists apart from the cloud client and the controller because paging
// has rules of its own that need no HTTP and no API server to test: the
// list may change while it is read (an alert created or deleted between
// two pages shifts every offset), a host may ignore offset and answer the
// same page forever, and an older host has no list route, so that its
// alerts are read one by one until it is upgraded. Each rule is a table
// test here, with an injected clock and fake pages.
package alertlist
