// Package storagemigration rewrites every object of the operator's CRDs in
// the CRD's storage version, then trims the CRD's status.storedVersions to
// that version alone, as cluster-api's CRD migrator does.
//
// Kubernetes refuses to drop a version from a CRD while status.storedVersions
// still lists it, and an object stays encoded in etcd in the version it was
// last written in until something writes it again. Without this pass, the
// release that stops serving v1alpha1 would be blocked (a Helm upgrade fails
// on storedVersions) or, worse, leave objects nobody can read. The manager
// runs it once per leadership, before anyone has to think about it.
//
// It is apart from the controller because it is Kubernetes plumbing with a
// life of its own: it knows the API server's clients and the CRD types,
// nothing of the cloud nor of what a ServiceWatch means, and the controller
// package is kept small.
package storagemigration
