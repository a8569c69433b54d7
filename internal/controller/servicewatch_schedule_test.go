package controller

import (
	"testing"
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/pacing"
)

func TestAssess(t *testing.T) {
	tests := []struct {
		name    string
		results []partResult
		want    pacing.Outcome
	}{
		{"all synced", []partResult{{}, {}, {}}, pacing.Outcome{}},
		{"a stalled failure is not transient", []partResult{failed(swv1.ReasonUnauthorized, ""), {}, {}}, pacing.Outcome{Failed: true}},
		{"an idle service waits for the interval", []partResult{failed(swv1.ReasonServiceIdle, ""), failed(swv1.ReasonServiceIdle, ""), {}}, pacing.Outcome{Failed: true}},
		{"any transient failure makes the sync transient", []partResult{failed(swv1.ReasonUnauthorized, ""), failed(swv1.ReasonServerError, ""), {}}, pacing.Outcome{Failed: true, Transient: true}},
		{"the longest Retry-After wins", []partResult{
			{failure: &failure{reason: swv1.ReasonRateLimited, retryAfter: time.Minute}},
			{failure: &failure{reason: swv1.ReasonRateLimited, retryAfter: time.Hour}}, {},
		}, pacing.Outcome{Failed: true, Transient: true, RetryAfter: time.Hour}},
	}
	for _, tt := range tests {
		if got := assess(tt.results); got != tt.want {
			t.Errorf("%s: assess = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
