// Package accountcontroller serves ClusterCloudAccounts to the ServiceWatch
// controller and keeps their status.
//
// The ServiceWatch controller asks Accounts.Resolve, before it reads any
// Secret, which credential a watch that refers to an account uses, or why it
// may not (the account does not exist, or its conditions refuse the watch:
// see DecideUse, policy.go). Resolve reads the manager's cache only, so a refusal
// costs no Secret read and no call. The account's own small reconciler
// counts the namespaces and watches that use it and shows its key's budget
// as the manager sees it.
//
// The ClusterCloudAccount CRD is optional: a manager that finds it missing
// runs without accounts (Resolve refuses every watch that refers to one)
// and starts serving them, its reconciler and the ServiceWatch controller's
// watch of accounts included, once discovery shows the CRD (optional.go).
//
// The account's rules (policy.go: whether one of its conditions selects a
// namespace, by name, label selector or pattern, and allows the organization
// and service a watch names, and if not which condition failed and why, in
// words a tenant can act on; shares.go: its reserve and namespace weights)
// are pure, over the API types and a namespace's name and labels: no client,
// no clock, so that every rule is a table test and the controller asks them
// before any Secret is read or any call is made. The account's alert token
// reads alerts of any service, so it goes only where a condition allows
// every organization and service (or the account says its alert API is
// Unrestricted).
//
// It is apart from internal/controller so that the ServiceWatch reconciler
// keeps one job, and so that the account's rules are reviewed in one place.
package accountcontroller
