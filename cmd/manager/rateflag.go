package main

import "github.com/servicewatch/servicewatch/internal/ratebudget"

// rateFlag parses a client-side rate limit written REQUESTS/PERIOD[/BURST],
// such as 10/10s or 100/1m/10 (ratebudget.ParseRateLimit). "0" disables the
// limit.
type rateFlag ratebudget.RateLimit

func (f *rateFlag) String() string { return ratebudget.RateLimit(*f).String() }

func (f *rateFlag) Set(value string) error {
	l, err := ratebudget.ParseRateLimit(value)
	if err != nil {
		return err
	}
	*f = rateFlag(l)
	return nil
}
