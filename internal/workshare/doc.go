// Package workshare gives each tenant (a namespace) a share of the work the
// manager does decoding the cloud's answers, and tells a tenant that used
// more than its share how long its next reads must wait.
//
// It exists because decoding is the one cost of a read that the cloud's
// answer, not the operator, decides: a tenant whose URL serves the worst
// answer it can (16 MiB of empty items, objects nested hundreds deep) costs
// the manager seconds of CPU per read, which every other tenant's syncs
// would pay for in latency. The cloud client bounds the work of one answer
// (cloudapi.Options.MaxDecodeWork); this package bounds a tenant's work over
// time: a token bucket per namespace, charged after each read with what its
// answer cost, and consulted before the namespace's next sync is admitted.
// Reads are deferred, never failed: a tenant over its share waits until it
// has earned the work back, and its data stays as it was meanwhile.
//
// It knows nothing of Kubernetes or HTTP: a tenant is a string, work is a
// number of units (lenient.Work), time comes from an injectable clock. Its
// rules are unit tests with a fake clock.
package workshare
