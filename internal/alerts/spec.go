package alerts

import (
	"fmt"
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

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
