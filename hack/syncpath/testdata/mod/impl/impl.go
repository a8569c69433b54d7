// Package impl holds the production implementation of ctl.Store.
package impl

// Real is the implementation the program links.
type Real struct{}

// Get is visited through ctl.Store; its insides are not.
func (Real) Get() int { return deeper() }
