// Package pacing decides when a watch syncs and whether it may call the cloud
// now: the work levels that order syncs, the schedule and the phases that
// spread periodic syncs over an interval, the demand each rate budget carries (and the factor that
// stretches intervals when it is over), the claims that let work a user
// asked for use a busy budget first (within its namespace), and the
// reservations that keep a budget's room for the syncs of a namespace within
// its share against one over its own, by its intervals or by what it spent
// (spending).
//
// The controller speaks to the books through one front, Pacer: it builds a
// Watch from the watch once per reconcile, asks the Pacer one question per
// event of a sync (Due, Level, Fresh, ReadsList, Demand, Ask, AlertBatch and
// Took, Admitted, Synced), and calls Forget once when the watch goes away; the
// books themselves are unexported. The read slots (Slots) and the
// workqueue's order among namespaces (FairQueue) stand apart: the
// background reads and the workqueue hold them, not a sync's steps.
//
// It knows nothing of Kubernetes: the books are generic over the keys they
// book (a watch's namespaced name, in the controller), and time comes from an
// injected clock (Clock) or as arguments, so every rule has a table test with
// a fixed clock.
package pacing
