package alerts

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/metrics/statemetrics"
)

// maxListMessageBytes bounds the list of failing or incomplete alerts in
// a message, so that Ready, which joins the failing parts' messages, stays
// within the condition's bound.
const maxListMessageBytes = 1 << 10

// ReadError is why one alert's read failed: a condition reason, the user's
// message, and the wait the cloud asked for.
type ReadError struct {
	Reason     string
	Message    string
	RetryAfter time.Duration
}

// Error is the failure as an entry's error shows it.
func (f *ReadError) Error() string { return f.Reason + ": " + f.Message }

// Entry is one alert a watch follows and what this sync read of it.
type Entry struct {
	ID string
	// SelectedBy is swv1.SelectedByID or swv1.SelectedBySelector.
	SelectedBy string
	// Alert is what this sync read, nil when it failed or was left for
	// later. It may be shared with other watches: Apply copies it.
	Alert *swv1.AlertStatus
	// LeftOut names the members of the alert whose values could not be
	// read (cloudapi.AlertResult.LeftOut).
	LeftOut []string
	// Failed says why the read failed; the entry keeps its last fetch.
	Failed *ReadError
	// Later: not in this sync's batch; the entry keeps its last fetch.
	Later bool
}

// Told is what the alerts part's condition says of its entries.
type Told struct {
	// Message is the condition's message when the part synced.
	Message string
	// Failure is the condition's failure: the reason of the first failing
	// entry, every failing ID with its reason, and a stop of paging; nil
	// when every entry synced.
	Failure *ReadError
}

// Tell is what the condition says of entries. stopped, when set, says why
// paging stopped before the list's end.
func Tell(entries []Entry, stopped string) Told {
	return Told{Message: fetchedMessage(entries) + leftOutNote(entries), Failure: summarize(entries, stopped)}
}

// Apply writes entries into status, in their order: each read entry as
// read (a copy: the read may be shared), each failed one with its last
// successful fetch, if any, and its error, each left for later as it was.
// matched counts every selector match, also those beyond the entries, for
// the summary; readBy is status.alertsReadBy. It returns the entries
// written, before any truncation of the status, for the state metrics.
func Apply(s *swv1.ServiceWatchStatus, entries []Entry, matched int, readBy string) []swv1.AlertStatus {
	previous := make(map[string]swv1.AlertStatus, len(s.Alerts))
	for _, a := range s.Alerts {
		previous[a.ID] = a
	}
	var alerts []swv1.AlertStatus
	failed, selected := 0, 0
	for _, e := range entries {
		entry := previous[e.ID] // the last successful fetch, if there was one
		switch {
		case e.Failed != nil:
			entry.Error = e.Failed.Error()
			failed++
		case e.Alert != nil:
			entry = *e.Alert.DeepCopy()
		}
		entry.ID, entry.SelectedBy = e.ID, e.SelectedBy
		if e.SelectedBy == swv1.SelectedBySelector {
			selected++
		}
		alerts = append(alerts, entry)
	}
	s.Alerts, s.AlertsReadBy = alerts, readBy
	if s.Summary != nil {
		s.Summary.Alerts = int32(len(alerts) - failed + max(0, matched-selected))
	}
	return alerts
}

// fetchedMessage says how many alerts this sync read, and, when the
// token's budget made it fetch only a batch, that the others keep their last
// fetch.
func fetchedMessage(entries []Entry) string {
	later := 0
	for _, e := range entries {
		if e.Later {
			later++
		}
	}
	if later == 0 {
		return fmt.Sprintf("Fetched %d alerts", len(entries))
	}
	return fmt.Sprintf("Fetched %d of %d alerts: the alert API token's rate budget admits fewer calls at once than there are alerts, so each sync fetches the next ones in turn and the others keep their last fetch", len(entries)-later, len(entries))
}

// leftOutNote tells which alerts had values the operator could not read and
// left out (the rest of each alert is in status), bounded; "" when none.
func leftOutNote(entries []Entry) string {
	var notes []string
	for _, e := range entries {
		if len(e.LeftOut) > 0 && e.Failed == nil {
			notes = append(notes, fmt.Sprintf("%s (%s)", e.ID, strings.Join(e.LeftOut, ", ")))
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return fmt.Sprintf("; %d left out values of a type the operator cannot read: %s", len(notes), bound.Join(notes, maxListMessageBytes))
}

// summarize is the failure AlertsSynced shows: the reason of the first
// failing alert in order, and every failing ID with its reason; a stop of
// paging comes first, as InvalidResponse.
func summarize(entries []Entry, stopped string) *ReadError {
	var first *ReadError
	var failed []string
	for _, e := range entries {
		if e.Failed == nil {
			continue
		}
		if first == nil {
			first = e.Failed
		}
		failed = append(failed, fmt.Sprintf("%s (%s)", e.ID, e.Failed.Error()))
	}
	var msgs []string
	if stopped != "" {
		first = &ReadError{Reason: swv1.ReasonInvalidResponse}
		msgs = append(msgs, "paging the host's alert list stopped before its end: "+stopped+"; the alerts read are shown")
	}
	if first == nil {
		return nil
	}
	if len(failed) > 0 {
		msgs = append(msgs, fmt.Sprintf("%d of %d alerts failed: %s", len(failed), len(entries), bound.Join(failed, maxListMessageBytes)))
	}
	return &ReadError{Reason: first.Reason, RetryAfter: first.RetryAfter, Message: strings.Join(msgs, "; ")}
}

// Items are what the state metrics show of alerts.
func Items(alerts []swv1.AlertStatus) []statemetrics.Alert {
	items := make([]statemetrics.Alert, len(alerts))
	for i := range alerts {
		items[i] = item(&alerts[i])
	}
	return items
}

// item is what the state metrics show of an alert: with the silence
// and the execution errors, so that an alert that is silenced or whose
// evaluations or deliveries fail is visible to alerting.
func item(a *swv1.AlertStatus) statemetrics.Alert {
	item := statemetrics.Alert{ID: a.ID, Name: a.Label(), State: ptr.Deref(a.State, ""), FetchFailed: a.Error != "", Since: sinceOf(a),
		Silenced: a.Silenced != nil, ExecutionErrors: len(a.ExecutionErrors)}
	if a.Silenced != nil && a.Silenced.Until != nil {
		if until, err := time.Parse(time.RFC3339Nano, *a.Silenced.Until); err == nil {
			item.SilencedUntil = until
		}
	}
	for _, e := range a.ExecutionErrors {
		if at := cloudapi.ExecutionErrorTime(e); at.After(item.LastExecutionError) {
			item.LastExecutionError = at
		}
	}
	return item
}

// sinceOf is the alert's since; zero when status has none.
func sinceOf(a *swv1.AlertStatus) time.Time {
	if a.Since == nil {
		return time.Time{}
	}
	return a.Since.Time
}
