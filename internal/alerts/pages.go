package alerts

import (
	"sync"
	"time"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// PagesFor is how many pages ReadAll calls for a list of total alerts at
// limit a page (<= 0: cloudapi.MaxAlertPageLimit), the list standing
// still: the first page reads limit alerts, each next one limit-1 more,
// since it overlaps the one before by one alert. At least 1: an empty
// list is still one call.
func PagesFor(total, limit int) int {
	limit = pageLimit(limit)
	if total <= limit || limit < 2 {
		return 1
	}
	return 1 + (total-limit+limit-2)/(limit-1)
}

// pageLimit is limit, or the hosts' default when it is not positive.
func pageLimit(limit int) int {
	if limit <= 0 {
		return cloudapi.MaxAlertPageLimit
	}
	return limit
}

// PageCounts remember how many pages the last read of each list took, or
// showed it would take: the next read's admission reserves them all at
// once, so that a list of several pages is read whole in one sync, not
// begun in every sync and finished in none. A count is forgotten keepFor
// after it was last noted. Safe for concurrent use; a nil PageCounts keeps
// nothing.
type PageCounts[K comparable] struct {
	now func() time.Time
	mu  sync.Mutex
	of  map[K]pageCount
}

// pageCount is a list's page count and until when it is kept.
type pageCount struct {
	pages int
	until time.Time
}

// NewPageCounts returns no counts, on the clock now.
func NewPageCounts[K comparable](now func() time.Time) *PageCounts[K] {
	return &PageCounts[K]{now: now, of: map[K]pageCount{}}
}

// Note records that a read of key took (or needs) pages pages, kept for
// keepFor; the counts past their time go.
func (p *PageCounts[K]) Note(key K, pages int, keepFor time.Duration) {
	if p == nil {
		return
	}
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, c := range p.of {
		if !now.Before(c.until) {
			delete(p.of, k)
		}
	}
	p.of[key] = pageCount{pages: max(1, pages), until: now.Add(keepFor)}
}

// Of is the pages the last read of key took; 0 when none is known (or p
// is nil: no counts kept).
func (p *PageCounts[K]) Of(key K) int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.of[key]
	if !ok || !p.now().Before(c.until) {
		return 0
	}
	return c.pages
}

// Len is how many lists' counts are kept.
func (p *PageCounts[K]) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.of)
}

// ListPages is how many pages of a list a sync's admission reserves with
// its other calls of the budget: as many as the last read of the list took
// (at least its first), so that the pacer starts the sync when the budget
// has room for the whole list and no page is refused halfway; no more than
// fit in one batch of most calls beside others (most 0: no limit), since a
// larger batch is never admitted. Pages past those ask the budget as the
// read reaches them (see MayWaitForPage).
func ListPages(last, others, most int) int {
	pages := max(1, last)
	if most > 0 {
		pages = min(pages, max(1, most-others))
	}
	return pages
}

// MayWaitForPage tells whether a read that has waited waited for room in
// its budget for the pages of a list may wait wait more for the next one,
// rather than leave the whole list to a later sync, which would begin it
// again from its first page: while its waits together are short beside
// its interval every (a quarter of it), so that it still ends within it,
// and take at most half of left, the time to the sync's deadline (left <= 0:
// none).
func MayWaitForPage(waited, wait, every, left time.Duration) bool {
	if wait <= 0 {
		return true
	}
	total := waited + wait
	return total <= every/4 && (left <= 0 || total <= left/2)
}
