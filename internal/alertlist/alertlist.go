package alertlist

import (
	"context"
	"fmt"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// Fetch reads one page at offset.
type Fetch func(ctx context.Context, offset int) (cloudapi.AlertPage, error)

// Listing is a whole list as paging read it.
type Listing struct {
	// Alerts are each id once, in the order first seen.
	Alerts []cloudapi.AlertResult
	// Pages counts the calls made.
	Pages int
	// Stopped is non-empty when paging stopped before the list's end
	// (e.g. "the host repeated the page at offset 999: it ignores offset;
	// read 1000 alerts of a list of 2500"); the alerts read are still
	// returned.
	Stopped string
}

// MaxPages bounds the calls of one ReadAll: 100 pages of 1000 alerts
// are 100,000 alerts, far more than any service has, while a host that
// never ends its list costs at most 100 calls of its budget per read.
const MaxPages = 100

// maxStepBacks bounds how often one ReadAll steps back to find where a
// moving list continues; each step back of a run is twice the one before.
// A list that changes faster than it can be read is read no more than
// that, not until MaxPages.
const maxStepBacks = 8

// ReadAll pages through a list with limit per page (<= 0: the hosts'
// default, cloudapi.MaxAlertPageLimit) until it has read meta.total (or
// the answer had no meta), an empty page, or MaxPages; it neither
// duplicates nor loses an alert present in both pages' views when the
// total moves while paging, and stops at the first repeated page. A
// page's error ends it: ReadAll returns that error (wrapped with %w,
// keeping errors.Is(err, cloudapi.ErrNoListRoute) and cloudapi's
// classification) and no Listing.
//
// Each next page overlaps the one before by one alert, and must begin
// with an alert already read: then nothing present before and after a
// change is lost, whatever was created or deleted before it (the cloud's
// order is stable). A page that does not (alerts before it were deleted,
// so it begins past alerts not yet read) makes ReadAll step back until one
// does. Alerts are kept once each, by id, the first time they are seen.
func ReadAll(ctx context.Context, limit int, fetch Fetch) (Listing, error) {
	if limit <= 0 {
		limit = cloudapi.MaxAlertPageLimit
	}
	r := reader{fetch: fetch, seen: map[string]bool{}, back: max(1, limit/10)}
	return r.readAll(ctx)
}

// reader is the state of one ReadAll.
type reader struct {
	fetch   Fetch
	listing Listing
	seen    map[string]bool
	// back is the first step back of a run of them.
	back int
	// last is the page fetched last and its offset, to tell a page repeated.
	last       cloudapi.AlertPage
	lastOffset int
}

func (r *reader) readAll(ctx context.Context) (Listing, error) {
	// stepBacks counts the read's steps back, run those of the current run.
	offset, stepBacks, run := 0, 0, 0
	for {
		if r.listing.Pages == MaxPages {
			r.stop(fmt.Sprintf("stopped after %d pages, the most one read makes", MaxPages))
			return r.listing, nil
		}
		if err := ctx.Err(); err != nil {
			return Listing{}, fmt.Errorf("read the alert list: %w", err)
		}
		page, err := r.fetch(ctx, offset)
		r.listing.Pages++
		if err != nil {
			return Listing{}, fmt.Errorf("alert list page %d at offset %d: %w", r.listing.Pages, offset, err)
		}
		if r.listing.Pages > 1 && offset != r.lastOffset && repeats(page, r.last) {
			r.last = page
			r.stop(fmt.Sprintf("the host repeated the page at offset %d: it ignores offset", offset))
			return r.listing, nil
		}
		continues := offset == 0 || r.continues(page)
		r.add(page)
		r.last, r.lastOffset = page, offset
		if !continues {
			stepBacks++
			if stepBacks > maxStepBacks {
				r.stop(fmt.Sprintf("the list kept changing while it was read (%d times a page began with an alert not read yet)", stepBacks))
				return r.listing, nil
			}
			offset = max(0, offset-r.back<<run)
			run++
			continue
		}
		run = 0
		n := len(page.Alerts) + page.Skipped
		if page.Total < 0 || n == 0 || offset+n >= page.Total {
			return r.listing, nil
		}
		offset += n - min(n-1, 1) // overlap by one alert, when the page has two
	}
}

// continues reports whether a page at an offset past 0 begins where the
// list read so far ends: with an alert already read. An empty one does
// not: the list shrank past the offset.
func (r *reader) continues(page cloudapi.AlertPage) bool {
	return len(page.Alerts) > 0 && r.seen[page.Alerts[0].Alert.ID]
}

// add keeps the page's alerts not seen yet, in order.
func (r *reader) add(page cloudapi.AlertPage) {
	for _, a := range page.Alerts {
		if !r.seen[a.Alert.ID] {
			r.seen[a.Alert.ID] = true
			r.listing.Alerts = append(r.listing.Alerts, a)
		}
	}
}

// stop says why paging ended before the list did, and how much was read.
func (r *reader) stop(why string) {
	of := "an unknown number of"
	if r.last.Total >= 0 {
		of = fmt.Sprint(r.last.Total)
	}
	r.listing.Stopped = fmt.Sprintf("%s; read %d alerts of a list of %s", why, len(r.listing.Alerts), of)
}

// repeats reports whether page is prev again: the same alerts in the same
// order, the same count of items skipped, of a list of the same total. A
// list that moved by exactly the pages' distance shows the same alerts
// too, but its total moved with it.
func repeats(page, prev cloudapi.AlertPage) bool {
	if page.Total != prev.Total || page.Skipped != prev.Skipped || len(page.Alerts) != len(prev.Alerts) || len(page.Alerts)+page.Skipped == 0 {
		return false
	}
	for i := range page.Alerts {
		if page.Alerts[i].Alert.ID != prev.Alerts[i].Alert.ID {
			return false
		}
	}
	return true
}
