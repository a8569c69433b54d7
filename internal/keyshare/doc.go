// Package keyshare divides one key's rate budget between the namespaces
// that draw on it: each gets a share by weight (equal by default), a
// namespace that needs less than its share leaves the rest to the others
// (work-conserving: weighted max-min fairness, by water-filling), and a
// reserved fraction of the key's budget is left to callers outside the
// cluster (a Terraform run, a scraper).
//
// It exists because the budget books (internal/pacing) stretched every
// watch on a key by one factor: a namespace with 500 watches on a shared
// key stretched the interval of another namespace's one watch as much as
// its own. With shares, a namespace is stretched only by what it asks
// beyond its own share, so one namespace's many watches cannot stretch
// another's interval past what that namespace's share allows.
//
// It is arithmetic only: no clock, no locks, no Kubernetes, so every rule
// is a table test. The books call Divide with what each namespace asks;
// the weights and the reserve are plain inputs (today a manager flag and
// equal weights; later a cloud account's settings).
package keyshare
