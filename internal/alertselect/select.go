package alertselect

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

// Matches tells whether an alert of that name and those tags matches sel:
// all, or the name matching sel.Name (when set) and every tag of sel.Tags
// among tags.
func Matches(sel *swv1.AlertSelector, name string, tags []string) bool {
	if sel == nil {
		return false
	}
	if sel.All {
		return true
	}
	if sel.Name != "" && !Glob(sel.Name, name) {
		return false
	}
	for _, t := range sel.Tags {
		if !slices.Contains(tags, t) {
			return false
		}
	}
	return sel.Name != "" || len(sel.Tags) > 0
}

// Glob tells whether s matches pattern whole: * matches any run of
// characters (none included), ? any one character, anything else itself.
// Every pattern is valid, and the match is linear in len(pattern)+len(s)
// but for backtracking to the last star, so that no pattern a tenant
// writes can cost the manager more than their product.
func Glob(pattern, s string) bool {
	p, r := []rune(pattern), []rune(s)
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(r) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == r[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi, mark = star+1, mark+1
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

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
			if sel != nil && Matches(sel, deref(got.Alert.Name), tagsOf(&got.Alert)) {
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
