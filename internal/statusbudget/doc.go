// Package statusbudget books the bytes that each watch's status keeps in the
// manager's memory, by namespace, against a budget per namespace and one for
// the whole manager.
//
// A status is bounded per watch (the status size limit), and the manager's
// cache holds every watch's status, so without more a namespace that creates
// enough watches whose answers reach that bound can push the manager past
// its memory limit. The ledger turns the per-watch bound into one that also
// holds per namespace and in all: the manager's budget is divided into equal
// parts between the namespaces with watches, a watch may keep what its
// namespace's budget and part have left once the namespace's other watches
// are counted (fixed parts included), and when that is less than it needs,
// its lists are cut (the controller's truncation) and it says why, naming
// nothing of the other namespaces. So one namespace's watches, however many,
// never take another namespace's room.
//
// It is separate from the controller so that the accounting is plain Go with
// table tests: it knows no Kubernetes type, only namespaces, names and byte
// counts, and is safe for concurrent use.
package statusbudget
