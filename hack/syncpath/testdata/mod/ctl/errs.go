package ctl

type failure struct{}

func (failure) Error() string { return "failure" }

// NewErr returns an error of the module's.
func NewErr() error { return failure{} }
