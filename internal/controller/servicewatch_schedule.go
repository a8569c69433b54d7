package controller

import (
	"github.com/servicewatch/servicewatch/internal/pacing"
)

// assess sums up a sync's results for the schedule.
func assess(results []partResult) pacing.Outcome {
	var o pacing.Outcome
	for _, res := range results {
		if f := res.failure; f != nil {
			o.Failed = true
			o.Transient = o.Transient || isTransientReason(f.reason)
			o.RetryAfter = max(o.RetryAfter, f.retryAfter)
		}
	}
	return o
}
