package ctl

func helper() {}
