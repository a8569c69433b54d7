package changes

import (
	"net/http"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// What an answer says of the next attempt: 2xx delivered; 408, 429 and 5xx
// again later, after a Retry-After if given (bounded by the backoff's cap);
// anything else never.
func TestJudgeAnswers(t *testing.T) {
	now := time.Date(2026, 5, 4, 3, 0, 0, 0, time.UTC)
	s := &CloudEventsSink{opts: DefaultSinkOptions(), clock: clocktesting.NewFakeClock(now)}
	for _, c := range []struct {
		status     int
		retryAfter string
		want       verdict
		wantWait   time.Duration
	}{
		{200, "", delivered, 0},
		{202, "", delivered, 0},
		{204, "", delivered, 0},
		{301, "", rejected, 0},
		{400, "", rejected, 0},
		{401, "", rejected, 0},
		{404, "", rejected, 0},
		{413, "", rejected, 0},
		{408, "", retry, 0},
		{429, "7", retry, 7 * time.Second},
		{429, now.Add(90 * time.Second).Format(http.TimeFormat), retry, 90 * time.Second},
		{429, now.Add(-time.Minute).Format(http.TimeFormat), retry, 0},
		{503, "86400", retry, DefaultSinkMaxBackoff + time.Second},
		{503, "soon", retry, 0},
		{500, "-3", retry, 0},
		{502, "", retry, 0},
	} {
		resp := &http.Response{StatusCode: c.status, Status: http.StatusText(c.status), Header: http.Header{}}
		if c.retryAfter != "" {
			resp.Header.Set("Retry-After", c.retryAfter)
		}
		got := s.judge(resp)
		if got.verdict != c.want || got.retryAfter != c.wantWait {
			t.Errorf("%d Retry-After %q: verdict %d wait %s, want %d %s", c.status, c.retryAfter, got.verdict, got.retryAfter, c.want, c.wantWait)
		}
	}
}

// The waits between attempts double from MinBackoff to MaxBackoff, of which
// the jitter takes a random half; a Retry-After is waited at least, never
// past MaxBackoff.
func TestBackoff(t *testing.T) {
	for _, c := range []struct {
		attempt    int
		jitter     float64
		retryAfter time.Duration
		want       time.Duration
	}{
		{0, 0, 0, 500 * time.Millisecond},
		{0, 0.999999, 0, time.Second - time.Microsecond/2},
		{1, 0.5, 0, 1500 * time.Millisecond},
		{3, 0, 0, 4 * time.Second},
		{8, 1, 0, 256 * time.Second},
		{9, 0, 0, 150 * time.Second},
		{1000, 0.5, 0, 225 * time.Second},
		{0, 0, 30 * time.Second, 30 * time.Second},
		{0, 0, time.Hour, 5 * time.Minute},
	} {
		s := &CloudEventsSink{opts: DefaultSinkOptions(), jitter: func() float64 { return c.jitter }}
		got := s.backoff(c.attempt, c.retryAfter)
		if diff := got - c.want; diff < -time.Microsecond || diff > time.Microsecond {
			t.Errorf("attempt %d jitter %v Retry-After %s: %s, want %s", c.attempt, c.jitter, c.retryAfter, got, c.want)
		}
	}
}
