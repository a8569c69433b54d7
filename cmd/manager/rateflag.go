package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// rateFlag parses a client-side rate limit written REQUESTS/PERIOD[/BURST],
// such as 10/10s or 100/1m/10. "0" disables the limit.
type rateFlag cloudapi.RateLimit

func (f *rateFlag) String() string {
	if f.Requests <= 0 {
		return "0"
	}
	return fmt.Sprintf("%d/%s/%d", f.Requests, f.Per, f.Burst)
}

func (f *rateFlag) Set(value string) error {
	if value == "0" {
		*f = rateFlag{Requests: -1}
		return nil
	}
	parts := strings.Split(value, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return fmt.Errorf("want REQUESTS/PERIOD[/BURST], got %q", value)
	}
	requests, err := strconv.Atoi(parts[0])
	if err != nil || requests <= 0 {
		return fmt.Errorf("requests must be a positive integer, got %q", parts[0])
	}
	per, err := time.ParseDuration(parts[1])
	if err != nil || per <= 0 {
		return fmt.Errorf("period must be a positive duration, got %q", parts[1])
	}
	burst := requests
	if len(parts) == 3 {
		if burst, err = strconv.Atoi(parts[2]); err != nil || burst <= 0 {
			return fmt.Errorf("burst must be a positive integer, got %q", parts[2])
		}
	}
	*f = rateFlag{Requests: requests, Per: per, Burst: burst}
	return nil
}
