// Command prog wires the program whose sync the test walks.
package main

import (
	"example.com/mod/ctl"
	"example.com/mod/impl"
)

func main() {
	r := &ctl.R{Stores: []ctl.Store{impl.Real{}, ctl.NewCached()}, Err: ctl.NewErr()}
	r.Reconcile()
}
