package ratebudget

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxHold caps the wait a service can ask for, and any hold, so that a
// broken header or a clock gone wrong cannot block a credential for years.
const MaxHold = 24 * time.Hour

// epochThreshold tells a Unix timestamp from a delay in X-RateLimit-Reset:
// some services send the reset time, others the seconds left.
const epochThreshold = 1_000_000_000

// RetryAfter returns the wait a 429 asks for: Retry-After in seconds or as an
// HTTP date, else RateLimit-Reset or X-RateLimit-Reset in seconds (or, for a
// value that can only be a Unix time, until then). It returns 0 when the
// response gives no usable hint.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if d, ok := parseSeconds(v, now); ok {
			return d
		}
		if t, err := http.ParseTime(v); err == nil {
			return clampWait(t.Sub(now))
		}
	}
	for _, name := range []string{"RateLimit-Reset", "X-RateLimit-Reset"} {
		if d, ok := parseSeconds(strings.TrimSpace(h.Get(name)), now); ok {
			return d
		}
	}
	return 0
}

// parseSeconds parses a non-negative number of seconds (fractions allowed, as
// some services send them), or a Unix time in seconds.
func parseSeconds(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f < 0 {
		return 0, false
	}
	if f >= epochThreshold {
		if f > float64(now.Add(MaxHold).Unix()) {
			return MaxHold, true
		}
		return clampWait(time.Unix(int64(f), 0).Sub(now)), true
	}
	return clampWait(time.Duration(f * float64(time.Second))), true
}

func clampWait(d time.Duration) time.Duration {
	return max(0, min(d, MaxHold))
}
