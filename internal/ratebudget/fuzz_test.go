package ratebudget

import (
	"net/http"
	"testing"
	"time"
)

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"7", "0.5", "Wed, 21 Oct 2015 07:28:00 GMT", "1e308", "-1", "NaN", "1767254400", ""} {
		f.Add(s, s)
	}
	now := time.Unix(1_767_000_000, 0)
	f.Fuzz(func(t *testing.T, retryAfterValue, resetValue string) {
		h := http.Header{}
		h.Set("Retry-After", retryAfterValue)
		h["X-RateLimit-Reset"] = []string{resetValue} // the service's spelling, as it arrives
		if d := RetryAfter(h, now); d < 0 || d > MaxHold {
			t.Fatalf("RetryAfter(%q, %q) = %v", retryAfterValue, resetValue, d)
		}
	})
}
