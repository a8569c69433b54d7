// Package unused implements ctl.Store but the program does not link it.
package unused

// Other is not in the program.
type Other struct{}

// Get is never counted.
func (Other) Get() int { return 3 }
