package main

import "github.com/servicewatch/servicewatch/internal/cloudapi"

// rateFlag parses a client-side rate limit written REQUESTS/PERIOD[/BURST],
// such as 10/10s or 100/1m/10 (cloudapi.ParseRateLimit). "0" disables the
// limit.
type rateFlag cloudapi.RateLimit

func (f *rateFlag) String() string { return cloudapi.RateLimit(*f).String() }

func (f *rateFlag) Set(value string) error {
	l, err := cloudapi.ParseRateLimit(value)
	if err != nil {
		return err
	}
	*f = rateFlag(l)
	return nil
}
