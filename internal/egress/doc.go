// Package egress decides where the operator's credentials may be sent: the
// security boundary between the URLs tenants write in a ServiceWatch and the
// hosts the manager can reach, reviewable in one place.
//
// Whoever can create a ServiceWatch chooses the URL its namespace's key and
// token are sent to, and the manager can reach hosts its tenants cannot: its
// own loopback, the node's link-local addresses (the cloud metadata service
// among them), in-cluster services. Two guards let a cluster admin bound
// that: a [URLAllowList], checked by the controller before it reads a
// credential, and [RefuseLocalAddress], the dial hook the cloud client
// installs with cloudapi.Options.DenyLocalAddresses, checked at each
// connection, after name resolution. A client whose destination the
// cluster admin sets, not a tenant (the change sink), may have the guard
// let through the addresses the admin names, a cloud metadata address never
// ([RefuseLocalAddressExcept]).
//
// A path prefix in the allow list holds however a gateway in front of the API
// normalizes paths: paths are compared as the most aggressive of them reads
// them (NormalizePath: dot segments also when percent-encoded, ";" path
// parameters, "\", %2F and %5C as separators) and as they read plainly, and
// an ID placed in a path must stay one segment under that reading
// (PathSegment).
//
// It is separate from the cloud client so that what may be called is not
// mixed with how it is called: it knows no HTTP client, no credential and no
// Kubernetes type, only URLs and addresses.
//
// HostKey says when two URLs name the same API host: the one normalisation
// of a host that the allow-list, the rate budgets and the controller's
// per-host read slots all use. A host is counted in several places (a rate budget
// per credential and host, an allow-list entry, a slot of concurrent reads
// per host), and each had grown its own notion of one: with three notions,
// "API.example.com:443" and "https://api.example.com" could share a budget
// yet hold two read slots. One function, one answer.
package egress
