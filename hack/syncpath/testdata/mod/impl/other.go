package impl

// Do is called directly from ctl.
func Do() {}
