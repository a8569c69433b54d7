package v1beta1

import "strings"

// What needs attention, said once per kind: when a list does not fit in
// status, the items that need attention are kept first (then the others,
// each group in id order) and the list is shown in id order. The cloud does
// not enumerate its states (the spec: "Allowed values are not
// enumerated"); these are the words it has been seen to use for a failure,
// compared without regard to case. Any other word (an unknown state too)
// does not need attention.

// NeedsAttention reports whether the pipe is in a failing state: Failed,
// InternalError or Degraded. Such a pipe moves no data until a user acts.
func (p *Pipe) NeedsAttention() bool {
	if p.State == nil {
		return false
	}
	switch strings.ToLower(*p.State) {
	case "failed", "internalerror", "degraded":
		return true
	}
	return false
}

// NeedsAttention reports whether the endpoint is in a failing status:
// Failed, Rejected or Expired. Such an endpoint does not connect until a
// user acts.
func (e *ReversePrivateEndpoint) NeedsAttention() bool {
	if e.Status == nil {
		return false
	}
	switch strings.ToLower(*e.Status) {
	case "failed", "rejected", "expired":
		return true
	}
	return false
}

// NeedsAttention reports whether the alert fires (state ALERT), failed to
// evaluate (it has executionErrors), or could not be read (error).
func (a *AlertStatus) NeedsAttention() bool {
	return (a.State != nil && strings.EqualFold(*a.State, "ALERT")) || len(a.ExecutionErrors) > 0 || a.Error != ""
}
