// Package tenancy is what one namespace may take of what the manager shares
// between them: of a shared key's rate budget (Divide), of the work of
// decoding the cloud's answers (WorkShares), and of the bytes statuses keep
// in the manager's memory (StatusLedger), the three books of tenancy.go.
// Each book gives a namespace its share, lets it use what others leave where
// that is safe, and tells the namespace over its share what it sees (a
// longer interval, a deferred read, a cut list), naming nothing of the other
// namespaces. So one namespace's watches, however many, never take another
// namespace's part.
//
// Keys (Divide): one key's rate budget is divided between the namespaces
// that draw on it: each gets a share by weight (equal by default), a
// namespace that needs less than its share leaves the rest to the others
// (work-conserving: weighted max-min fairness, by water-filling), and a
// reserved fraction of the key's budget is left to callers outside the
// cluster (a Terraform run, a scraper). Without shares, the budget books
// (internal/pacing) stretched every watch on a key by one factor: a
// namespace with 500 watches on a shared key stretched the interval of
// another namespace's one watch as much as its own. With them, a namespace
// is stretched only by what it asks beyond its own share. The books call
// Divide with what each namespace asks; the weights and the reserve are
// plain inputs (a manager flag, a cloud account's settings).
//
// Decode work (WorkShares): decoding is the one cost of a read that the
// cloud's answer, not the operator, decides: a tenant whose URL serves the
// worst answer it can (16 MiB of empty items, objects nested hundreds deep)
// costs the manager seconds of CPU per read, which every other tenant's
// syncs would pay for in latency. The cloud client bounds the work of one
// answer (cloudapi.Options.MaxDecodeWork); WorkShares bounds a namespace's
// work over time: a token bucket per namespace, charged after each read with
// what its answer cost (lenient.Work), and consulted before the namespace's
// next sync is admitted. Reads are deferred, never failed: a namespace over
// its share waits until it has earned the work back, and its data stays as
// it was meanwhile.
//
// Status bytes (StatusLedger): a status is bounded per watch (the status
// size limit), and the manager's cache holds every watch's status, so
// without more a namespace that creates enough watches whose answers reach
// that bound can push the manager past its memory limit. The StatusLedger
// turns the per-watch bound into one that also holds per namespace and in
// all: the manager's budget is divided into equal parts between the
// namespaces with watches, a watch may keep what its namespace's budget and
// part have left once the namespace's other watches are counted (fixed parts
// included), and when that is less than it needs, its lists are cut (the
// controller's truncation) and it says why.
//
// It is plain Go: no Kubernetes type and no HTTP. The key shares are
// arithmetic only (no clock, no locks); WorkShares and StatusLedger are safe
// for concurrent use, WorkShares with an injectable clock. A namespace is a
// string, so every rule is a table test.
package tenancy
