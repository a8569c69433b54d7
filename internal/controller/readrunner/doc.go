// Package readrunner runs slow reads in the background, off the reconcile
// workers, and bounds their calls with per-host, per-tenant and total slots
// (slotQueue), held only while a read calls a host.
//
// It exists so that a source that is slow, hangs or asks to wait never
// holds a reconcile worker: a worker starts a read and moves on, and the
// read's end wakes the key again (Wake) to write what was read. A read
// holds a host's slot only while it calls that host, its calls to one host
// at once share one slot, and reads of a higher level get slots first (issue
// 17: watches whose alert API hung held the shared management host's slots
// for the whole sync timeout). It is generic over the key a read is for and
// the result it ends with; what a read does, and what its result means, are
// the caller's.
//
// client-go's workqueue and controller-runtime's priority queue order work,
// but neither bounds calls per host while they run, nor cancels a read whose
// key went away: that is why this runner is ours.
package readrunner
