package alerts

import (
	"fmt"
	"slices"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/egress"
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

// Index is what a host's list kept for the watches that share it (see
// Filter): read once, indexed once, so that a hundred watches cost one
// index, not a hundred, and never the whole list.
type Index struct {
	byID     map[string]*cloudapi.AlertResult
	tooLarge map[string]bool
	selected map[string]selected
	filter   *Filter
	read     int
	seen     func(id string) bool
	stopped  string
}

// Stopped says why paging stopped before the list's end; "" when it did
// not.
func (idx *Index) Stopped() string { return idx.stopped }

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
