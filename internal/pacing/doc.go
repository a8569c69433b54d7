// Package pacing decides when a watch syncs and whether it may call the cloud
// now: the work levels that order syncs, the read slots that bound the calls
// in flight, the schedule and the phases that spread periodic syncs over an
// interval, the demand each rate budget carries (and the factor that
// stretches intervals when it is over), and the claims that let work a user
// asked for use a busy budget first.
//
// It knows nothing of Kubernetes: the books are generic over the keys they
// book (a watch's namespaced name, in the controller), and time comes in as
// arguments, so every rule has a table test with a fixed clock.
package pacing
