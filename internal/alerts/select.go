package alerts

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/egress"
	"github.com/servicewatch/servicewatch/internal/metrics/statemetrics"
)

// MaxSelected bounds the entries a selector adds to a status: a selector
// that matches a host's ten thousand alerts must not cost ten thousand
// entries of memory before the status size limit cuts them. The summary
// still counts every match, so StatusTruncated and the omitted metric say
// how many were left out.
const MaxSelected = 1000

// MaxNameBytes bounds the alert names a name pattern is tried on: a longer
// name matches no pattern (tags alone may still select its alert, and an
// ID names it). A host decides its names, and one may fill a 16 MiB answer,
// which every watch sharing the list would match once per sync; no real
// alert name comes near 4 KiB (a pattern has at most 256 characters).
const MaxNameBytes = 4 << 10

// Selector is an AlertSelector compiled once for every alert of a list it
// is tried on. A nil *Selector matches nothing.
type Selector struct {
	all  bool
	name *Pattern // nil: no name pattern
	tags []string
}

// Compile compiles sel; nil for nil.
func Compile(sel *swv1.AlertSelector) *Selector {
	if sel == nil {
		return nil
	}
	s := &Selector{all: sel.All, tags: sel.Tags}
	if sel.Name != "" {
		s.name = CompilePattern(sel.Name)
	}
	return s
}

// Matches tells whether an alert of that name and those tags matches: all,
// or every tag of the selector among tags and the name, at most
// MaxNameBytes, matching the selector's pattern (when it has one). A
// selector with neither matches nothing.
func (s *Selector) Matches(name string, tags []string) bool {
	var steps int64
	return s.matches(name, tags, &steps)
}

// matches is Matches, adding the steps it took to *steps (see
// Pattern.match; a comparison of two tags is one).
func (s *Selector) matches(name string, tags []string, steps *int64) bool {
	switch {
	case s == nil:
		return false
	case s.all:
		return true
	case s.name == nil && len(s.tags) == 0:
		return false
	}
	for _, t := range s.tags { // the tags first: they cost the least
		*steps += int64(len(tags))
		if !slices.Contains(tags, t) {
			return false
		}
	}
	return s.name == nil || (len(name) <= MaxNameBytes && s.name.match(name, steps))
}

// Matches tells whether an alert of that name and those tags matches sel:
// all, or the name matching sel.Name (when set, see Selector) and every
// tag of sel.Tags among tags. Picking compiles sel once instead (Compile).
func Matches(sel *swv1.AlertSelector, name string, tags []string) bool {
	return Compile(sel).Matches(name, tags)
}

// Glob tells whether s matches pattern whole: * matches any run of
// characters (none included), ? any one character, anything else itself
// (a byte that is not UTF-8 is one character, U+FFFD). Every pattern is
// valid, and the match takes time linear in len(s), whatever the pattern
// (see CompilePattern, which compiles a pattern once for many names).
func Glob(pattern, s string) bool { return CompilePattern(pattern).Match(s) }

// Picked is what picking a watch's alerts from a host's list found.
type Picked struct {
	// Entries are the alerts followed: the IDs in spec order (absent from
	// the list: Missing), then the selector's matches not named by an ID,
	// ordered by id, at most MaxSelected.
	Entries []Entry
	// Matched counts every alert the selector matched, those beyond
	// MaxSelected (or the bytes a list keeps of them) included.
	Matched int
	// Unread are the positions in Entries of the IDs the list read but did
	// not keep (they were named after it was read): each is to be read on
	// its own. Never reported missing: the list had them.
	Unread []int
}

// Pick picks the alerts a watch follows from a host's list: each ID of ids
// found there, or failed NotFound when the list is complete (the host's
// answer that it has no such alert, as a 404 of its single GET is); when
// paging stopped early an ID not among those read is not known to be gone:
// it fails InvalidResponse and keeps its last fetch. An ID the list read
// but did not keep is Unread, never missing. Then the alerts sel matches,
// which the list must serve (Index.Serves).
func Pick(ids []string, sel *swv1.AlertSelector, idx *Index) Picked {
	var out Picked
	named := make(map[string]bool, len(ids))
	alsoMatched := 0 // named alerts the selector matches: the ID's, not the selector's
	for _, id := range ids {
		named[id] = true
		entry := Entry{ID: id, SelectedBy: swv1.SelectedByID}
		got := idx.byID[id]
		switch {
		case got != nil:
			entry.Alert, entry.LeftOut = &got.Alert, got.LeftOut
			if sel != nil && Matches(sel, selectedName(&got.Alert), tagsOf(&got.Alert)) {
				alsoMatched++
			}
		case idx.tooLarge[id]:
			entry.Failed = &ReadError{Reason: swv1.ReasonInvalidResponse, Message: fmt.Sprintf(
				"listed, but the alerts named by the watches that share the host's list are larger than a list keeps for them (%d bytes a watch); its last fetch is kept", idx.filter.selectorBytes)}
		case !idx.filter.ids[id] && idx.seen != nil && idx.seen(id):
			out.Unread = append(out.Unread, len(out.Entries))
		default:
			entry.Failed = missing(id, idx.read, idx.stopped)
		}
		out.Entries = append(out.Entries, entry)
	}
	if sel == nil {
		return out
	}
	matches := idx.selected[selectorKey(sel)]
	out.Matched = matches.count - alsoMatched
	selected := 0
	for _, a := range matches.kept {
		if selected == MaxSelected {
			break
		}
		if !named[a.Alert.ID] {
			out.Entries = append(out.Entries, Entry{ID: a.Alert.ID, SelectedBy: swv1.SelectedBySelector, Alert: &a.Alert, LeftOut: a.LeftOut})
			selected++
		}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// missing is the failure of an ID absent from a list of n alerts. An ID
// that could not be fetched on its own (it cannot stay one path segment)
// fails as its single GET would, so that it reads the same on every host.
func missing(id string, n int, stopped string) *ReadError {
	if _, err := egress.PathSegment(id); err != nil {
		return &ReadError{Reason: swv1.ReasonConfigurationError, Message: fmt.Sprintf("alert ID in spec.alertIds: %v", err)}
	}
	if stopped != "" {
		return &ReadError{Reason: swv1.ReasonInvalidResponse,
			Message: fmt.Sprintf("not among the %d alerts read before paging stopped (%s); its last fetch is kept", n, stopped)}
	}
	return &ReadError{Reason: swv1.ReasonNotFound,
		Message: fmt.Sprintf("the host's list of %d alerts has no alert %q; check the ID in spec.alertIds", n, id)}
}

// tagsOf are an alert's tags, for a selector's tags.
func tagsOf(a *swv1.AlertStatus) []string { return a.Tags }

// selectedName is the name of a that spec.alertSelector.name matches: its
// displayName when not empty, else its name. It is what the selector
// matched while status showed displayName under name, so that a selector
// picks the same alerts now that status shows each under the cloud's own
// field name (swv1.AlertStatus.Label, the name people read, prefers name).
func selectedName(a *swv1.AlertStatus) string {
	if a.DisplayName != nil && *a.DisplayName != "" {
		return *a.DisplayName
	}
	return deref(a.Name)
}

// Weights of the work of a selection, in units of decode work (about 10 ns
// of a core each, see lenient.Work). A step of the matcher took 1 to 3 ns
// in BenchmarkGlobWorst (docs/benchmarks.md).
const (
	// SelectWorkPerAlert is the fixed charge of trying a selector on one
	// alert of a list: finding it in the index, its tags.
	SelectWorkPerAlert = 2
	// SelectStepsPerUnit are the matcher's steps (see Pattern.match) in a
	// unit of work: a name of n bytes costs at most about
	// 16n ÷ SelectStepsPerUnit units (see MaxNameBytes).
	SelectStepsPerUnit = 4
)

// selectionWork is the work of trying a selector on n alerts in steps
// steps of the matcher.
func selectionWork(n int, steps int64) int64 {
	return int64(n)*SelectWorkPerAlert + (steps+SelectStepsPerUnit-1)/SelectStepsPerUnit
}

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
	if a.Since != nil {
		item.Since = a.Since.Time
	}
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
