// Package accountpolicy decides who may use a ClusterCloudAccount: whether
// one of its conditions selects a namespace (by name, label selector or
// pattern) and allows the organization and service a watch names, and if
// not, which condition failed and why, in words a tenant can act on. The
// account's alert token reads alerts of any service, so it goes only where
// a condition allows every organization and service (or the account says
// its alert API is Unrestricted).
//
// It is pure rules over the API types and a namespace's name and labels:
// no client, no clock, so that every rule is a table test and the
// controller asks it before any Secret is read or any call is made.
package accountpolicy
