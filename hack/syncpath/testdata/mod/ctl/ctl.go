// Package ctl is the followed package: the walk reads its insides.
package ctl

import "example.com/mod/impl"

// Store is an interface the module declares: a call through it goes to its
// implementations.
type Store interface{ Get() int }

// R is the reconciler.
type R struct {
	Stores []Store
	Err    error
}

// Reconcile is the root.
func (r *R) Reconcile() {
	for _, s := range r.Stores {
		s.Get()
	}
	helper()
	impl.Do()
	_ = r.Err.Error() // error is not the module's: the path ends
}
