package controller

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/bound"
)

// DefaultStatusSizeLimit bounds the size of a status, well under etcd's
// 1.5 MiB object limit, leaving room for metadata, spec and managed fields.
// A status is charged the larger of its JSON and its decoded size (bound.GoSize):
// the manager's cache holds every watch decoded, and a list of tiny items
// decodes to many times its JSON (an empty pipe: 3 bytes of JSON, over a
// hundred decoded), so that the cached copy of a watch stays about the limit
// whatever the cloud sent.
const DefaultStatusSizeLimit = 800 << 10

// truncatedConditionBytes is room kept for the StatusTruncated condition,
// which is set after the lists are cut.
const truncatedConditionBytes = 512

// requestedAtRoom is the most status.lastHandledRequestedAt takes in JSON:
// its member name, and maxRequestedAtEcho bytes of at most 6 bytes each
// once escaped (\u00XX).
const requestedAtRoom = len(`,"lastHandledRequestedAt":""`) + 6*maxRequestedAtEcho

// statusList is how truncation sees one part's list in status.
type statusList struct {
	// field is the list's JSON name in status.
	field string
	// keepRank orders the lists for truncation: the lowest rank keeps its
	// items first, the highest is cut first.
	keepRank int
	sizes    func(s *swv1.ServiceWatchStatus) []int
	keep     func(s *swv1.ServiceWatchStatus, n int)
	length   func(s *swv1.ServiceWatchStatus) int
	// total is how many items the list would have untruncated.
	total func(w *swv1.ServiceWatch) int
}

// truncate cuts the status lists, each from the end of its stable order,
// until the status fits in limit bytes, both as JSON and decoded (see
// DefaultStatusSizeLimit); the summary keeps the real counts. The same input
// always gives the same output, so a large, unchanged service still yields
// a byte-identical status.
func truncate(status *swv1.ServiceWatchStatus, lists []statusList, limit int) {
	if limit > 0 && fixedSize(status) > limit {
		lists = slices.Clone(lists)
		slices.SortStableFunc(lists, func(a, b statusList) int { return a.keepRank - b.keepRank })

		sizes := make([][]int, len(lists))
		bare := *status
		budget := limit
		for i, l := range lists {
			sizes[i] = l.sizes(status)
			l.keep(&bare, 0)
			budget -= len(`,"":[]`) + len(l.field)
		}
		budget -= fixedSize(&bare)
		for i, l := range lists {
			n, used := bound.Prefix(sizes[i], budget)
			budget -= used
			l.keep(status, n)
		}
	}
}

// fixedSize is the size status is measured at for truncation (the larger
// of its JSON and decoded size, see bound.Charge): as if
// the StatusTruncated condition and the echo of a requested sync took the
// most room they can, whether they are there yet or not. So the first sync,
// which has neither, cuts the lists where every later sync of the same data
// does, and the status stays under the limit once the condition is set.
func fixedSize(status *swv1.ServiceWatchStatus) int {
	s := *status
	s.LastHandledRequestedAt = ""
	s.Conditions = slices.DeleteFunc(slices.Clone(s.Conditions), func(c metav1.Condition) bool {
		return c.Type == swv1.ConditionStatusTruncated
	})
	return bound.Charge(&s) + truncatedConditionBytes + requestedAtRoom
}
