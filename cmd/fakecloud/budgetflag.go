package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// budgetFlag parses a service-side budget written REQUESTS/WINDOW, such as
// 10/10s; "0" turns enforcement off.
type budgetFlag fakecloud.Budget

func (f *budgetFlag) String() string {
	if f.Requests <= 0 {
		return "0"
	}
	return fmt.Sprintf("%d/%s", f.Requests, f.Window)
}

func (f *budgetFlag) Set(value string) error {
	if value == "0" {
		*f = budgetFlag{}
		return nil
	}
	requests, window, ok := strings.Cut(value, "/")
	if !ok {
		return fmt.Errorf("want REQUESTS/WINDOW, got %q", value)
	}
	n, err := strconv.Atoi(requests)
	if err != nil || n <= 0 {
		return fmt.Errorf("requests must be a positive integer, got %q", requests)
	}
	d, err := time.ParseDuration(window)
	if err != nil || d <= 0 {
		return fmt.Errorf("window must be a positive duration, got %q", window)
	}
	*f = budgetFlag{Requests: n, Window: d}
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
