// Package reads runs the controller's reads of the cloud: in the background,
// off the reconcile workers (Runner), each call holding a host's slot
// (Slots, bounded per host, per tenant and in total), and shared between the
// watches that read the same thing at about the same time (Shared).
//
// The Runner exists so that a source that is slow, hangs or asks to wait
// never holds a reconcile worker: a worker starts a read and moves on, and
// the read's end wakes the key again (Wake) to write what was read. A read
// holds a host's slot only while it calls that host, its calls to one host
// at once share one slot, and reads of a higher level get slots first (issue
// 17: watches whose alert API hung held the shared management host's slots
// for the whole sync timeout). client-go's workqueue and controller-runtime's
// priority queue order work, but neither bounds calls per host while they
// run, nor cancels a read whose key went away: that is why this runner is
// ours.
//
// Shared exists because watches of one service sync at the same moment and
// would otherwise spend their rate budget on identical calls: a read under
// way is joined, and a finished one is reused for a short window. Its key
// must name one read exactly (every input of the call, the credential
// included), so that a result is only ever shared between callers that
// would have made the same call. golang.org/x/sync/singleflight joins calls
// under way but keeps nothing once they end, knows no expected reads, and
// lets a panic reach every caller; the reuse window, the expectations and
// the panic recovery are why Shared is not singleflight.
//
// Both are generic over the key a read is for and what it ends with; what a
// read does, and what its result means, are the caller's.
package reads
