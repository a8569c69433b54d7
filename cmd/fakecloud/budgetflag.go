package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// budgetFlag parses a service-side budget written REQUESTS/WINDOW, such as
// 10/10s, in the syntax of the manager's rate flags (ratebudget.ParseRateLimit)
// less the burst; "0" turns enforcement off.
type budgetFlag fakecloud.Budget

func (f *budgetFlag) String() string {
	return ratebudget.RateLimit{Requests: f.Requests, Per: f.Window, Burst: f.Requests}.String()
}

func (f *budgetFlag) Set(value string) error {
	// The service counts whole windows and takes no burst.
	if strings.Count(value, "/") > 1 {
		return fmt.Errorf("want REQUESTS/WINDOW, got %q", value)
	}
	l, err := ratebudget.ParseRateLimit(value)
	if err != nil {
		return err
	}
	*f = budgetFlag{}
	if l.Requests > 0 {
		*f = budgetFlag{Requests: l.Requests, Window: l.Per}
	}
	return nil
}

// budget returns the budget with its windows' phase: the one given, or a
// random one, so that no client can count on windows starting when it does.
func (f budgetFlag) budget(phase time.Duration, phaseGiven bool) fakecloud.Budget {
	b := fakecloud.Budget(f)
	if b.Requests > 0 {
		b.Phase = phase
		if !phaseGiven {
			b.Phase = rand.N(b.Window)
		}
	}
	return b
}
