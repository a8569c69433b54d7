package ctl

func fromCache() int { return 1 }
