// Package accountcontroller serves ClusterCloudAccounts to the ServiceWatch
// controller and keeps their status.
//
// The ServiceWatch controller asks Accounts.Resolve, before it reads any
// Secret, which credential a watch that refers to an account uses, or why it
// may not (the account does not exist, or its conditions refuse the watch:
// see accountpolicy). Resolve reads the manager's cache only, so a refusal
// costs no Secret read and no call. The account's own small reconciler
// counts the namespaces and watches that use it and shows its key's budget
// as the manager sees it.
//
// The ClusterCloudAccount CRD is optional: a manager that finds it missing
// runs without accounts (Resolve refuses every watch that refers to one)
// and starts serving them, its reconciler and the ServiceWatch controller's
// watch of accounts included, once discovery shows the CRD (optional.go).
//
// It is apart from internal/controller so that the ServiceWatch reconciler
// keeps one job, and so that the account's rules are reviewed in one place.
package accountcontroller
