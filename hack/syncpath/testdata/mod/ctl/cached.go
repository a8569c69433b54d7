package ctl

type cached struct{}

// NewCached returns the second implementation of Store.
func NewCached() Store { return cached{} }

func (cached) Get() int { return fromCache() }
