package fakecloud

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"time"
)

// Budget is a service-side request budget, as the real APIs enforce one: at
// most Requests calls per credential in each fixed window of length Window.
// Windows start Phase after the Unix epoch and every Window after that, so
// their boundaries need not line up with the moment a client starts. The
// zero Budget enforces nothing.
type Budget struct {
	// Requests is how many calls a credential may make in one window.
	Requests int `json:"requests"`
	// Window is the length of a window.
	Window time.Duration `json:"window"`
	// Phase offsets the windows' boundaries from the Unix epoch.
	Phase time.Duration `json:"phase"`
}

func (b Budget) enabled() bool { return b.Requests > 0 && b.Window > 0 }

// windowStart returns the start of the window that holds t. It is computed
// from the wall clock alone, so that two calls in one window get equal starts
// whatever their monotonic clock readings.
func (b Budget) windowStart(t time.Time) time.Time {
	window := int64(b.Window)
	n := t.UnixNano() - int64(b.Phase)%window
	offset := n % window
	if offset < 0 {
		offset += window
	}
	return time.Unix(0, t.UnixNano()-offset)
}

// budgetCounter counts the calls of each credential in its current window.
// It is not safe for concurrent use; the server's lock guards it.
type budgetCounter struct {
	budget Budget
	counts map[string]windowCount // credential fingerprint → calls in its current window
}

type windowCount struct {
	start time.Time
	calls int
}

// admit counts one call made with a credential at now. When the call does
// not fit the credential's budget it is not counted, and the wait until the
// next window starts is returned.
func (c *budgetCounter) admit(credential string, now time.Time) (retryAfter time.Duration, ok bool) {
	if !c.budget.enabled() || credential == "" {
		return 0, true
	}
	if c.counts == nil {
		c.counts = map[string]windowCount{}
	}
	start := c.budget.windowStart(now)
	wc := c.counts[credential]
	if !wc.start.Equal(start) {
		wc = windowCount{start: start}
	}
	if wc.calls >= c.budget.Requests {
		return start.Add(c.budget.Window).Sub(now), false
	}
	wc.calls++
	c.counts[credential] = wc
	return 0, true
}

// retryAfterSeconds renders a wait as a Retry-After value: whole seconds,
// rounded up so that a client that honors it lands in the next window.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}

// Fingerprint identifies the key in the call log and for budgets without
// revealing it: the first 12 hex digits of the SHA-256 of the Authorization
// header the key is sent in.
func (k ManagementKey) Fingerprint() string {
	return fingerprint("Basic " + base64.StdEncoding.EncodeToString([]byte(k.KeyID+":"+k.KeySecret)))
}

// TokenFingerprint identifies an alert token in the call log and for budgets
// without revealing it, as ManagementKey.Fingerprint does for keys.
func TokenFingerprint(token string) string {
	return fingerprint("Bearer " + token)
}

// fingerprint digests an Authorization header value; "" stays "".
func fingerprint(authorization string) string {
	if authorization == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(authorization))
	return hex.EncodeToString(sum[:6])
}
