package changes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/servicewatch/servicewatch/internal/egress"
)

// verdict is what one attempt to send a change says of the next.
type verdict int

const (
	// retry: no answer, or one that may change (5xx, 408, 429).
	retry verdict = iota
	delivered
	// rejected: an answer that would be the same again (4xx, 3xx).
	rejected
)

// outcome is one attempt's verdict, with the code the failed-attempts
// metric counts it under, the wait the receiver asked for and why it failed.
type outcome struct {
	verdict    verdict
	code       string
	retryAfter time.Duration
	err        error
}

// maxDiscardedBody bounds what is read of an answer's body, only so that
// the connection can be kept.
const maxDiscardedBody = 64 << 10

// send POSTs event once, in structured mode (the whole event as one
// application/cloudevents+json document, which any HTTP endpoint can log or
// forward as it is), encoded by the CloudEvents SDK.
func (s *CloudEventsSink) send(ctx context.Context, event cloudevents.Event) outcome {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.opts.URL, http.NoBody)
	if err != nil {
		return outcome{verdict: rejected, err: err}
	}
	if err := cehttp.WriteRequest(binding.WithForceStructured(ctx), binding.ToMessage(&event), req); err != nil {
		return outcome{verdict: rejected, err: fmt.Errorf("encoding the event: %w", err)}
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return outcome{verdict: retry, code: noAnswerCode(ctx, err), err: err}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDiscardedBody))
	_ = resp.Body.Close()
	return s.judge(resp)
}

// judge reads a receiver's answer.
func (s *CloudEventsSink) judge(resp *http.Response) outcome {
	code := strconv.Itoa(resp.StatusCode)
	err := fmt.Errorf("the receiver answered %s", resp.Status)
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		return outcome{verdict: delivered}
	case c == http.StatusRequestTimeout || c == http.StatusTooManyRequests || c >= 500:
		return outcome{verdict: retry, code: code, retryAfter: s.retryAfter(resp.Header.Get("Retry-After")), err: err}
	default:
		return outcome{verdict: rejected, code: code, err: err}
	}
}

// retryAfter reads a Retry-After header, in seconds or as an HTTP date; 0
// when absent, unreadable or past.
func (s *CloudEventsSink) retryAfter(value string) time.Duration {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(value, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(min(secs, int64(s.opts.MaxBackoff/time.Second)+1)) * time.Second
	}
	if at, err := http.ParseTime(value); err == nil {
		return max(at.Sub(s.clock.Now()), 0)
	}
	return 0
}

// noAnswerCode names why an attempt got no answer, for the metric.
func noAnswerCode(ctx context.Context, err error) string {
	if _, refused := errors.AsType[*egress.AddressNotAllowedError](err); refused {
		return "address_not_allowed"
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	if errors.Is(err, context.Canceled) {
		return "canceled"
	}
	return "error"
}
