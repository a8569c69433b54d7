package alerts

import (
	"fmt"
	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/metrics/statemetrics"
	"k8s.io/utils/ptr"
	"strings"
	"time"
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
	item := statemetrics.Alert{ID: a.ID, Name: a.Label(), State: ptr.Deref(a.State, ""), FetchFailed: a.Error != "",
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

// InUse tells whether a watch follows alerts, by ID or selector.
func InUse(spec *swv1.ServiceWatchSpec) bool {
	return len(spec.AlertIDs) > 0 || spec.AlertSelector != nil
}

// FromManagement tells whether a watch's alerts come from the management
// API of its service, with the management key.
func FromManagement(spec *swv1.ServiceWatchSpec) bool {
	return spec.AlertsFrom == swv1.AlertsFromManagementAPI
}

// SharedList tells whether the list a watch reads its alerts from may be
// shared with watches of other services: an alert host's list is one for
// every watch on the host and token, while the management API lists the
// alerts of one service.
func SharedList(spec *swv1.ServiceWatchSpec) bool { return InUse(spec) && !FromManagement(spec) }

// API is the API whose host, credential and budget read a watch's alerts.
func API(spec *swv1.ServiceWatchSpec) string {
	if FromManagement(spec) {
		return cloudapi.APIManagement
	}
	return cloudapi.APIAlert
}

// BudgetName names the budget of a watch's alerts in messages.
func BudgetName(spec *swv1.ServiceWatchSpec) string {
	if FromManagement(spec) {
		return "management API key"
	}
	return "alert API token"
}

// AllFailed are the entries of a watch whose alerts could not be read at
// all (no credential, no list route for its selector): each ID, and each
// alert its selector matched before, keeps its last data and says f.
func AllFailed(spec *swv1.ServiceWatchSpec, previous []swv1.AlertStatus, f *ReadError) []Entry {
	var entries []Entry
	for _, id := range spec.AlertIDs {
		entries = append(entries, Entry{ID: id, SelectedBy: swv1.SelectedByID, Failed: f})
	}
	for _, a := range previous {
		if a.SelectedBy == swv1.SelectedBySelector && spec.AlertSelector != nil {
			entries = append(entries, Entry{ID: a.ID, SelectedBy: a.SelectedBy, Failed: f})
		}
	}
	return entries
}

// Later is an alert ID left for a later sync's batch: one fetched before
// keeps its last fetch; one never fetched waits for its turn, and its
// watch is not Ready until it came.
func Later(spec *swv1.ServiceWatchSpec, previous []swv1.AlertStatus, id string, batch int) Entry {
	for _, a := range previous {
		if a.ID == id && a.Error == "" {
			return Entry{ID: id, SelectedBy: swv1.SelectedByID, Later: true}
		}
	}
	return Entry{ID: id, SelectedBy: swv1.SelectedByID, Failed: &ReadError{Reason: swv1.ReasonRateLimited, Message: fmt.Sprintf(
		"not fetched yet: the %s's rate budget admits at most %d calls at once, and each sync fetches the next %d alerts", BudgetName(spec), batch, batch)}}
}

// NoListRoute is the failure of a selector on a host that answers the list
// route with 404 or 405: only a list tells which alerts match.
func NoListRoute(url string) *ReadError {
	return &ReadError{Reason: swv1.ReasonListNotServed, Message: url + " has no alert list route (it answered 404 or 405): spec.alertSelector needs a host that lists alerts; " +
		"name the alerts in spec.alertIds instead, or upgrade the host (the operator tries the list again now and then)"}
}

// ListAge is how old a host's list that another watch read may be for a
// sync of a watch of interval every to reuse it: 90 % of its interval, so
// that a hundred watches on one host cost about one list per interval. The
// watches of one list sync together just after its read (their phase group
// is the list's, see pacing.Pacer.ReadsList), so the first of them to sync
// in a round finds the last round's read, an interval old, too old, and
// reads afresh: each sees a change made before that read at that sync. A
// sync the user asked for (fresh) reads afresh: -1.
func ListAge(every time.Duration, fresh bool) time.Duration {
	if fresh {
		return -1
	}
	return every * 9 / 10
}

// Source is where a watch's alerts are read, with which credential: the
// management API of its service with the management key when they come
// from there (alertURL is then the management API's), else the alert API
// with its token.
func Source(spec *swv1.ServiceWatchSpec, alertURL string, token cloudapi.BearerToken, key cloudapi.BasicCredentials) cloudapi.AlertSource {
	if FromManagement(spec) {
		return cloudapi.AlertSource{API: cloudapi.APIManagement, BaseURL: alertURL, Key: key, OrganizationID: spec.OrganizationID, ServiceID: spec.ServiceID}
	}
	return cloudapi.AlertSource{API: cloudapi.APIAlert, BaseURL: alertURL, Token: token}
}
