package pacing

import "time"

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
