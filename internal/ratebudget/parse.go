package ratebudget

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseRateLimit reads a rate limit written REQUESTS/PERIOD[/BURST], such as
// 10/10s or 100/1m/10, the way the manager's and the fake cloud's flags take
// it, so that both read one syntax; BURST defaults to REQUESTS. "0" gives
// Requests -1: the limit disabled, not the zero value that means the default.
func ParseRateLimit(value string) (RateLimit, error) {
	if value == "0" {
		return RateLimit{Requests: -1}, nil
	}
	parts := strings.Split(value, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return RateLimit{}, fmt.Errorf("want REQUESTS/PERIOD[/BURST], got %q", value)
	}
	requests, err := strconv.Atoi(parts[0])
	if err != nil || requests <= 0 {
		return RateLimit{}, fmt.Errorf("requests must be a positive integer, got %q", parts[0])
	}
	per, err := time.ParseDuration(parts[1])
	if err != nil || per <= 0 {
		return RateLimit{}, fmt.Errorf("period must be a positive duration, got %q", parts[1])
	}
	burst := requests
	if len(parts) == 3 {
		if burst, err = strconv.Atoi(parts[2]); err != nil || burst <= 0 {
			return RateLimit{}, fmt.Errorf("burst must be a positive integer, got %q", parts[2])
		}
	}
	return RateLimit{Requests: requests, Per: per, Burst: burst}, nil
}

// String writes the limit as ParseRateLimit reads it, leaving out a BURST
// equal to REQUESTS; a disabled limit is "0".
func (l RateLimit) String() string {
	switch {
	case l.Requests <= 0:
		return "0"
	case l.Burst == l.Requests:
		return fmt.Sprintf("%d/%s", l.Requests, l.Per)
	default:
		return fmt.Sprintf("%d/%s/%d", l.Requests, l.Per, l.Burst)
	}
}
