package alerts

import (
	"context"
	"fmt"
	"hash/maphash"
	"slices"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// Fetch reads one page at offset, handing each alert of it to each as it
// streams (cloudapi.AlertPageRequest.Each) and returning the work each
// said it cost: the page itself keeps none.
type Fetch func(ctx context.Context, offset int, each func(*cloudapi.AlertResult) int) (cloudapi.AlertPage, error)

// Keep is handed each alert of a list once, the first time paging reads
// it, and keeps what its caller uses of it; it returns the work that cost.
type Keep func(a *cloudapi.AlertResult) (work int)

// Listing is what paging read of a whole list; its alerts are what Keep
// kept.
type Listing struct {
	// Read counts the alerts read, each id once.
	Read int
	// Seen tells whether an id was among those read.
	Seen Seen
	// Pages counts the calls made.
	Pages int
	// Stopped is non-empty when paging stopped before the list's end
	// (e.g. "the host repeated the page at offset 999: it ignores offset;
	// read 1000 alerts of a list of 2500"); the alerts read are still
	// handed to Keep.
	Stopped string
}

// Seen tells which ids a ReadAll read, in 4 bytes an id whatever their
// length: a hash of each, so it may say yes for an id never read (about
// one in 2^32 / Read), never no for one read. The zero value has seen
// nothing.
type Seen struct {
	seed maphash.Seed
	sums []uint32 // sorted
}

// Has tells whether id may have been read: false means it was not.
func (s Seen) Has(id string) bool {
	if len(s.sums) == 0 {
		return false
	}
	_, found := slices.BinarySearch(s.sums, uint32(maphash.String(s.seed, id)>>32))
	return found
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
// Each alert is handed to keep the first time it is read, as its page
// streams, and dropped unless keep keeps it: what a read holds is what
// keep keeps, plus 8 bytes per id read (at most MaxPages times limit) to
// tell a page that continues the list and one that repeats.
//
// Each next page overlaps the one before by one alert, and must begin
// with an alert already read: then nothing present before and after a
// change is lost, whatever was created or deleted before it (the cloud's
// order is stable). A page that does not (alerts before it were deleted,
// so it begins past alerts not yet read) makes ReadAll step back until one
// does.
func ReadAll(ctx context.Context, limit int, fetch Fetch, keep Keep) (Listing, error) {
	if limit <= 0 {
		limit = cloudapi.MaxAlertPageLimit
	}
	r := reader{fetch: fetch, keep: keep, seed: maphash.MakeSeed(), seen: map[uint64]struct{}{}, back: max(1, limit/10)}
	return r.readAll(ctx)
}

// reader is the state of one ReadAll.
type reader struct {
	fetch   Fetch
	keep    Keep
	listing Listing
	// seen are the hashes of the ids read, by seed.
	seed maphash.Seed
	seen map[uint64]struct{}
	// back is the first step back of a run of them.
	back int
	// page is what the page being read showed; last the page before,
	// and its offset, to tell a page repeated.
	page, last pageView
	lastOffset int
}

// pageView is what paging needs of a page: its answer's counts and the
// hashes of its alerts' ids in order, not the alerts.
type pageView struct {
	cloudapi.AlertPage
	ids []uint64
	// continues: its first alert had been read before it.
	continues bool
}

func (r *reader) readAll(ctx context.Context) (Listing, error) {
	// stepBacks counts the read's steps back, run those of the current run.
	offset, stepBacks, run := 0, 0, 0
	for {
		if r.listing.Pages == MaxPages {
			return r.stop(fmt.Sprintf("stopped after %d pages, the most one read makes", MaxPages)), nil
		}
		if err := ctx.Err(); err != nil {
			return Listing{}, fmt.Errorf("read the alert list: %w", err)
		}
		r.page = pageView{ids: make([]uint64, 0, min(len(r.last.ids)+1, cloudapi.MaxAlertPageLimit))}
		answer, err := r.fetch(ctx, offset, r.each)
		r.page.AlertPage = answer
		r.listing.Pages++
		if err != nil {
			return Listing{}, fmt.Errorf("alert list page %d at offset %d: %w", r.listing.Pages, offset, err)
		}
		page := r.page
		if r.listing.Pages > 1 && offset != r.lastOffset && repeats(page, r.last) {
			r.last = page
			return r.stop(fmt.Sprintf("the host repeated the page at offset %d: it ignores offset", offset)), nil
		}
		r.last, r.lastOffset = page, offset
		if offset > 0 && !page.continues {
			stepBacks++
			if stepBacks > maxStepBacks {
				return r.stop(fmt.Sprintf("the list kept changing while it was read (%d times a page began with an alert not read yet)", stepBacks)), nil
			}
			offset = max(0, offset-r.back<<run)
			run++
			continue
		}
		run = 0
		n := len(page.ids) + page.Skipped
		if page.Total < 0 && page.Beyond > 0 {
			return r.stop(fmt.Sprintf("the host sent %d alerts more than the %d asked for, without the meta to page through them", page.Beyond, n)), nil
		}
		if page.Total < 0 || n == 0 || offset+n >= page.Total {
			return r.done(), nil
		}
		offset += n - min(n-1, 1) // overlap by one alert, when the page has two
	}
}

// each notes an alert of the page being read, and hands it to keep the
// first time it is read.
func (r *reader) each(a *cloudapi.AlertResult) int {
	h := maphash.String(r.seed, a.Alert.ID)
	_, seen := r.seen[h]
	if len(r.page.ids) == 0 {
		r.page.continues = seen
	}
	r.page.ids = append(r.page.ids, h)
	if seen {
		return 0
	}
	r.seen[h] = struct{}{}
	r.listing.Read++
	return r.keep(a)
}

// done is the listing, its ids read kept as Seen.
func (r *reader) done() Listing {
	sums := make([]uint32, 0, len(r.seen))
	for h := range r.seen {
		sums = append(sums, uint32(h>>32))
	}
	slices.Sort(sums)
	r.listing.Seen = Seen{seed: r.seed, sums: slices.Compact(sums)}
	return r.listing
}

// stop says why paging ended before the list did, and how much was read.
func (r *reader) stop(why string) Listing {
	of := "an unknown number of"
	if r.last.Total >= 0 {
		of = fmt.Sprint(r.last.Total)
	}
	r.listing.Stopped = fmt.Sprintf("%s; read %d alerts of a list of %s", why, r.listing.Read, of)
	return r.done()
}

// repeats reports whether page is prev again: the same alerts in the same
// order, the same count of items skipped, of a list of the same total. A
// list that moved by exactly the pages' distance shows the same alerts
// too, but its total moved with it.
func repeats(page, prev pageView) bool {
	return page.Total == prev.Total && page.Skipped == prev.Skipped && len(page.ids)+page.Skipped > 0 && slices.Equal(page.ids, prev.ids)
}
