// Package managedfields moves an object's managed fields off API versions
// its CRD no longer serves.
//
// The API server converts an object to the version of each of its managed
// fields entries whenever someone applies or updates it. Once a version is
// removed from a CRD, an entry that still names it makes every apply fail
// ("request to convert CR to an invalid group/version",
// kubernetes/kubernetes#111937): GitOps tools stop working on the object.
// Dropping such entries would lose who owns which field, and a GitOps tool
// would then leave behind the fields it stops applying. Where the versions
// share one schema (conversion None, as servicewatch's do), an entry's
// field set is as true of the storage version as of the version it names,
// so the entry is renamed instead, and merged with the manager's own entry
// of that version when it has one.
//
// It is pure (no client): storagemigration writes what it computes.
package managedfields
