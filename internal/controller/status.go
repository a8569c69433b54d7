package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/changes"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/pacing"
)

// Bounds on the strings the operator writes, so that whatever the cloud or a
// tenant sends, the status stays writable (the API server refuses condition
// messages over 32 KiB) and a condition stays readable in `kubectl get`.
const (
	// maxConditionMessageBytes bounds every condition message.
	maxConditionMessageBytes = 4 << 10
	// maxListMessageBytes bounds the list of failing items in a message, so
	// that Ready, which joins the failing parts' messages, stays in bounds.
	maxListMessageBytes = 1 << 10
)

// statusChange is what one reconcile has to say in a watch's status; exactly
// one of its fields is set. buildStatus turns it into the whole desired
// status, and writeStatus writes that.
type statusChange struct {
	// suspended: spec.suspend is true.
	suspended bool
	// announce, when set, says which work a sync that starts is for (waits: why it waits
	// for its namespace's share of a key): Reconciling until the sync's end is written.
	announce string
	waits    bool
	// synced is the end of a sync: what its reads found.
	synced *syncScope
}

// errChangedDuringSync: the user changed what a sync was for (the spec or
// the requested-at annotation) while it ran, so its result is not written;
// the change's own reconcile syncs again.
var errChangedDuringSync = errors.New("the watch changed during its sync; not written")

// maxStatusConflicts bounds how many times one status write is built again
// on the watch as the API server has it, after the API server refused it for
// an older resourceVersion.
const maxStatusConflicts = 3

// writeStatus is the one writer of a watch's status. It builds the desired
// status for change on the watch (buildStatus: the conditions this controller
// owns, lists, times) and sends a merge patch of what differs, so that an
// unchanged cloud costs at most a patch of lastSyncTime. The patch replaces
// whole lists, conditions included, and so carries the resourceVersion it was
// built on: when the API server has a newer watch (another writer's
// condition, or the controller's own last write that the cache has not shown
// yet), it refuses the patch, and the status is built again on the watch read
// from the API server. So another writer's conditions are never clobbered,
// and on a condition the controller owns its value wins. The result is not
// written when the user changed what the sync was for meanwhile (a new
// generation or requested-at value): that change syncs again.
//
// It returns the status it built on, for the events of what changed. On
// error nothing was written and watch's status is not what the API server
// has.
func (r *ServiceWatchReconciler) writeStatus(ctx context.Context, watch *swv1.ServiceWatch, change statusChange) (*swv1.ServiceWatch, error) {
	generation, asked := watch.Generation, requestedAt(watch)
	room := r.StatusBudget.Room(watch.Namespace, watch.Name, r.Options.StatusSizeLimit, change.synced != nil)
	if change.synced != nil {
		change.synced.statusRoom = room.Bytes
	}
	for conflicts := 0; ; conflicts++ {
		before := watch.DeepCopy()
		buildStatus(watch, change, room.Bytes)
		note := room.Kept(func() int { return fixedSize(&watch.Status) }) // books it; says why its lists were cut, if the budget did
		if c := watch.Condition(swv1.ConditionStatusTruncated); c != nil {
			c.Message += note
		}
		keepOthersConditions(watch, before.Status.Conditions, r.parts)
		if equality.Semantic.DeepEqual(before.Status, watch.Status) {
			return before, nil
		}
		if s := change.synced; s != nil { // before the write: see changes.go
			if s.toldChanges == nil {
				s.toldChanges = map[string]bool{}
			}
			r.tellChanges(ctx, watch, s.tracking.changes, s.toldChanges)
		}
		err := r.Client.Status().Patch(ctx, watch, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
		if err == nil {
			return before, nil
		}
		if !apierrors.IsConflict(err) {
			return before, fmt.Errorf("patching status: %w", err)
		}
		r.Metrics.RecordStatusConflict()
		if conflicts == maxStatusConflicts {
			return before, fmt.Errorf("patching status: %w", err)
		}
		live := &swv1.ServiceWatch{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(watch), live); err != nil {
			return before, fmt.Errorf("reading the watch after a conflicting status write: %w", err)
		}
		if live.Generation != generation || requestedAt(live) != asked {
			return before, errChangedDuringSync
		}
		*watch = *live
	}
}

// buildStatus makes the watch's status what change says, on top of the
// status it has: every condition this controller owns, the lists and their
// truncation, observedGeneration, the echo of a requested sync, lastSyncTime
// and retryNotBefore. The conditions of other writers are not touched.
func buildStatus(watch *swv1.ServiceWatch, change statusChange, sizeLimit int) {
	switch {
	case change.suspended:
		markSuspended(watch)
		watch.Status.LastHandledRequestedAt = requestedAt(watch)
	case change.synced != nil:
		applySync(watch, change.synced, sizeLimit)
	case change.waits:
		setCondition(watch, metav1.Condition{Type: swv1.ConditionReconciling, Status: metav1.ConditionTrue, Reason: swv1.ReasonBudgetExceeded, Message: change.announce})
	case change.announce != "":
		markReconciling(watch, change.announce)
	}
}

// applySync writes the end of a sync: its results, then what follows from
// them and from the time it ended.
func applySync(watch *swv1.ServiceWatch, end *syncScope, sizeLimit int) {
	end.tracking = applyResultsAt(watch, end.parts, end.results, sizeLimit, end.endedAt.Truncate(time.Second))
	watch.Status.ObservedGeneration = watch.Generation
	watch.Status.LastHandledRequestedAt = requestedAt(watch)
	if end.reachedCloud {
		watch.Status.LastSyncTime = &metav1.Time{Time: end.endedAt.Truncate(time.Second)}
	}
	setIntervalMetCondition(watch, end.allowed)
	watch.Status.RetryNotBefore, watch.Status.HeldBudgets = nil, nil
	if wait := end.outcome.RetryAfter; wait > 0 {
		// A second more, and whole seconds: the wait the cloud asked for
		// has passed once the time shown has.
		watch.Status.RetryNotBefore = &metav1.Time{Time: end.endedAt.Add(wait + time.Second).Truncate(time.Second)}
		watch.Status.HeldBudgets = heldBudgets(end)
	}
}

// heldBudgets label the budgets a 429 (the cloud's, or the client's hold of
// one) held for the sync's parts: those a restart holds again.
func heldBudgets(end *syncScope) (held []string) {
	for i, p := range end.parts {
		if f := end.results[i].failure; f != nil && f.reason == swv1.ReasonRateLimited && f.retryAfter > 0 {
			api, a := cloudapi.APIManagement, end.management.apiAccess
			if p.condition == swv1.ConditionAlertsSynced {
				api, a = end.alertSource().API, end.alerts.apiAccess
			}
			held = append(held, a.budget(api))
		}
	}
	slices.Sort(held)
	return slices.Compact(held)
}

// writerConditions are the conditions the status writer sets itself,
// whatever the parts: the summary of the parts (Ready, Stalled), the work in
// progress (Reconciling), the cut lists (StatusTruncated) and the stretched
// interval (IntervalMet).
func writerConditions() []string {
	return []string{swv1.ConditionReady, swv1.ConditionReconciling, swv1.ConditionStalled, swv1.ConditionStatusTruncated, swv1.ConditionIntervalMet}
}

// ownsCondition tells the condition types this controller writes: its own
// (writerConditions) and one per part, taken from the part table, so that a
// new part's condition is owned as soon as the part is in the table. A
// condition of any other type is another writer's (a policy engine, a
// reviewer's tool): the controller keeps it as the API server has it.
func ownsCondition(parts []part, condType string) bool {
	return slices.Contains(writerConditions(), condType) ||
		slices.ContainsFunc(parts, func(p part) bool { return p.condition == condType })
}

// keepOthersConditions makes the conditions of types the controller does not
// own (those of writerConditions and of parts) in watch exactly those of
// base, in their places, whatever a setter did.
func keepOthersConditions(watch *swv1.ServiceWatch, base []metav1.Condition, parts []part) {
	others := map[string]metav1.Condition{}
	for _, c := range base {
		if !ownsCondition(parts, c.Type) {
			others[c.Type] = c
		}
	}
	conds := make([]metav1.Condition, 0, len(watch.Status.Conditions)+len(others))
	for _, c := range watch.Status.Conditions {
		if ownsCondition(parts, c.Type) {
			conds = append(conds, c)
		} else if theirs, ok := others[c.Type]; ok {
			conds = append(conds, theirs)
			delete(others, c.Type)
		}
	}
	for _, c := range base { // any a setter dropped, in base's order
		if _, ok := others[c.Type]; ok {
			conds = append(conds, c)
		}
	}
	if len(conds) == 0 {
		conds = nil
	}
	watch.Status.Conditions = conds
}

// applyResultsAt writes the outcome of one sync into the watch's status, part
// by part in the order of parts, gives the items read their since (seen at
// now; zero: not followed) and finds their changes, derives Ready and
// Stalled, then truncates the lists to sizeLimit, keeping the since of the
// items left out in status.leftOutSince. A part that failed keeps its last
// good data and since; only its condition changes.
func applyResultsAt(watch *swv1.ServiceWatch, parts []part, results []partResult, sizeLimit int, now time.Time) tracking {
	if watch.Status.Summary == nil {
		watch.Status.Summary = &swv1.Summary{}
	}
	baseline := make([][]changes.Item, len(parts))
	for i, p := range parts {
		if p.list != nil {
			baseline[i] = p.list.track.items(&watch.Status)
		}
		if results[i].apply != nil {
			if err := results[i].apply(&watch.Status); err != nil { // what the read kept does not decode: a bug, told as the read's failure
				results[i] = partResult{failure: newFailure(swv1.ReasonInvalidResponse, "decoding the %s read: %v", p.noun, err)}
			}
		}
		setPartCondition(watch, p.condition, results[i])
	}
	left := changes.ParseLeftOut(watch.Status.LeftOutSince)
	found := trackItems(watch, parts, baseline, results, left, now)
	setSummaryConditions(watch, parts)
	read, items := make([]int, len(parts)), 0 // what each list holds before truncation
	for i, p := range parts {
		if p.list != nil {
			read[i] = p.list.length(&watch.Status)
			items += read[i]
		}
	}
	kept, room := watch.Status.LeftOutSince, 0
	watch.Status.LeftOutSince = nil // the lists are measured without it; it takes room of its own
	truncateKeeping(&watch.Status, listsOf(parts), sizeLimit, func() int {
		if !now.IsZero() {
			room = leftOutRoom(sizeLimit, items)
		}
		return room
	})
	watch.Status.LeftOutSince = kept
	if !now.IsZero() {
		watch.Status.LeftOutSince = leftOutRecord(watch, parts, results, found, left, room)
	}
	setTruncatedCondition(watch, parts, read, sizeLimit)
	return found
}

// setPartCondition reports one part's result in its condition. A deferred
// part keeps the condition it has, if any, unless it must say why.
func setPartCondition(watch *swv1.ServiceWatch, condType string, res partResult) {
	if res.deferred != nil {
		if watch.Condition(condType) == nil || res.sayWhy {
			setCondition(watch, metav1.Condition{Type: condType, Status: metav1.ConditionFalse, Reason: res.deferred.reason, Message: res.deferred.message})
		}
		return
	}
	c := metav1.Condition{Type: condType, Status: metav1.ConditionTrue, Reason: swv1.ReasonSynced, Message: res.message}
	if res.failure != nil {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, res.failure.reason, res.failure.message
	}
	setCondition(watch, c)
}

// setCondition sets a condition for the watch's generation, its message cut
// to a size the API server always accepts.
func setCondition(watch *swv1.ServiceWatch, c metav1.Condition) {
	c.ObservedGeneration = watch.Generation
	c.Message = bound.Cut(c.Message, maxConditionMessageBytes)
	watch.SetCondition(c)
}

// setSummaryConditions derives Ready and Stalled from the part conditions,
// and ends Reconciling: the work it announced is done.
func setSummaryConditions(watch *swv1.ServiceWatch, parts []part) {
	var failing []metav1.Condition
	for _, p := range parts {
		if c := watch.Condition(p.condition); c != nil && c.Status != metav1.ConditionTrue {
			failing = append(failing, *c)
		}
	}
	watch.DeleteCondition(swv1.ConditionReconciling)
	setStalledCondition(watch, failing)
	setReadyCondition(watch, parts, failing)
}

// setStalledCondition is True, with the first stalled part's reason, while a
// part fails in a way only the user can fix; absent otherwise.
func setStalledCondition(watch *swv1.ServiceWatch, failing []metav1.Condition) {
	for _, c := range failing {
		if isStalledReason(c.Reason) {
			setCondition(watch, metav1.Condition{Type: swv1.ConditionStalled, Status: metav1.ConditionTrue, Reason: c.Reason, Message: c.Message})
			return
		}
	}
	watch.DeleteCondition(swv1.ConditionStalled)
}

// setReadyCondition is True when every part synced; otherwise False with the
// first failing part's reason and every failing part's message.
func setReadyCondition(watch *swv1.ServiceWatch, parts []part, failing []metav1.Condition) {
	if len(failing) == 0 {
		counts := make([]string, 0, len(parts))
		for _, p := range parts {
			if p.count != nil {
				counts = append(counts, fmt.Sprintf("%d %s", p.count(&watch.Status), p.noun))
			}
		}
		setCondition(watch, metav1.Condition{Type: swv1.ConditionReady, Status: metav1.ConditionTrue, Reason: swv1.ReasonSynced,
			Message: "Synced " + joinAnd(counts)})
		return
	}
	msgs := make([]string, len(failing))
	for i, c := range failing {
		msgs[i] = fmt.Sprintf("%s: %s", c.Type, c.Message)
	}
	setCondition(watch, metav1.Condition{Type: swv1.ConditionReady, Status: metav1.ConditionFalse, Reason: failing[0].Reason,
		Message: strings.Join(msgs, "; ")})
}

// markSuspended records that the watch is suspended: no data is touched.
func markSuspended(watch *swv1.ServiceWatch) {
	watch.DeleteCondition(swv1.ConditionReconciling)
	watch.DeleteCondition(swv1.ConditionStalled)
	setCondition(watch, metav1.Condition{Type: swv1.ConditionReady, Status: metav1.ConditionFalse, Reason: swv1.ReasonSuspended,
		Message: "spec.suspend is true: no calls to the cloud; the status keeps its last data"})
	watch.Status.ObservedGeneration = watch.Generation
}

// markReconciling announces that a new generation or a requested sync is
// being worked on.
func markReconciling(watch *swv1.ServiceWatch, message string) {
	setCondition(watch, metav1.Condition{Type: swv1.ConditionReconciling, Status: metav1.ConditionTrue, Reason: swv1.ReasonProgressing, Message: message})
}

// setTruncatedCondition says which lists status cut, and by how much: what
// truncation cut of what the sync read (read, per part), and what the cloud
// counted beyond what a list kept while it streamed (the list's total). Items
// that were never read (alerts whose budget has not admitted their first
// fetch yet) are not cut: their part's condition says they wait.
func setTruncatedCondition(watch *swv1.ServiceWatch, parts []part, read []int, limit int) {
	counts := make([]string, 0, len(parts))
	left, cuts := 0, []string(nil)
	for i, p := range parts {
		if p.list == nil {
			continue
		}
		kept, total := p.list.length(&watch.Status), read[i]
		if p.list.total != nil {
			total = max(total, p.list.total(watch))
		}
		left += max(0, total-kept)
		counts = append(counts, fmt.Sprintf("%d of %d %s", kept, total, p.noun))
		cuts = append(cuts, p.list.cuts(&watch.Status)...)
	}
	if left == 0 && len(cuts) == 0 {
		watch.DeleteCondition(swv1.ConditionStatusTruncated)
		return
	}
	setCondition(watch, metav1.Condition{Type: swv1.ConditionStatusTruncated, Status: metav1.ConditionTrue, Reason: swv1.ReasonTooLarge,
		Message: fmt.Sprintf("status lists %s (%d items left out) to stay under %d KiB; summary counts are complete%s%s",
			joinAnd(counts), left, limit>>10, leftOutMessage(left), cutMessage(cuts, left))})
}

// leftOutMessage says, when whole items were left out, which were kept and
// where to look for the others: the summary counts them all, and the state
// metrics show them, within their own bound.
func leftOutMessage(left int) string {
	if left == 0 {
		return ""
	}
	return "; kept first: the items that need attention (failing pipes and endpoints, firing alerts), some by identity alone;" +
		" the others are in servicewatch_pipe_info and the other state metrics, up to --item-metrics-max-bytes"
}

// cutMessage names the items cut inside (as their omitted records do), as
// many as fit a bounded message; it promises every item listed only when no
// whole item was left out.
func cutMessage(cuts []string, left int) string {
	switch {
	case len(cuts) == 0:
		return ""
	case left == 0:
		return "; cut inside, every item still listed: " + bound.Join(cuts, maxListMessageBytes)
	default:
		return "; also cut inside: " + bound.Join(cuts, maxListMessageBytes)
	}
}

// listsOf are the parts' lists in status, for truncation; a part that is
// not a list has none.
func listsOf(parts []part) []statusList {
	lists := make([]statusList, 0, len(parts))
	for _, p := range parts {
		if p.list != nil {
			lists = append(lists, *p.list)
		}
	}
	return lists
}

// setIntervalMetCondition says, while the namespace's share of a budget
// stretches the watch's interval, by how much and why; absent when the
// interval is met.
func setIntervalMetCondition(watch *swv1.ServiceWatch, allowed pacing.Allowance) {
	every := watch.Spec.SyncInterval()
	if !allowed.Stretched(every) {
		watch.DeleteCondition(swv1.ConditionIntervalMet)
		return
	}
	setCondition(watch, metav1.Condition{Type: swv1.ConditionIntervalMet, Status: metav1.ConditionFalse, Reason: swv1.ReasonBudgetExceeded,
		Message: intervalMetMessage(every, allowed)})
}

// intervalMetMessage says how often a stretched watch syncs instead of every,
// and why: its namespace's share of the key and what the namespace's watches
// need. Calls are counted per minute, whatever the key's window: one unit
// for every API (the management key's 10 per 10 s, the alert token's 100 per
// minute) and whole numbers for the usual shares.
func intervalMetMessage(every time.Duration, allowed pacing.Allowance) string {
	return fmt.Sprintf("syncing every %s instead of every %s: this namespace's share of the key is %.1f calls/min; its watches need %.1f; data is as fresh as the budget allows",
		allowed.Every, every, allowed.Share.Share*60, allowed.Share.Need*60)
}

// joinAnd joins words as "a, b and c".
func joinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// DefaultStatusSizeLimit bounds the size of a status, 1 MiB.
// A status is charged the larger of its JSON and its decoded size (bound.GoSize):
// the manager's cache holds every watch decoded, and a list of tiny items
// decodes to many times its JSON (an empty pipe: 3 bytes of JSON, over a
// hundred decoded), so that the cached copy of a watch stays about the limit
// whatever the cloud sent.
//
// 1 MiB (800 KiB until issue 39) lists about 3,400 pipes by identity, each
// charged about 294 bytes decoded, where 800 KiB listed 2,647. It is safe
// under etcd, which refuses requests over 1.5 MiB: the rest of a
// ServiceWatch stays well under the remaining 512 KiB (the spec's fields
// all have MaxLength or MaxItems, a few KB; annotations are at most 256 KiB
// by the API server; the managed fields of an atomic list are one entry).
// The JSON is smaller still: a status of 3,000 identities is about 0.4 MB.
// The statuses kept stay bounded by the unchanged budgets
// (--total-status-budget, --namespace-status-budget; tenancy.StatusLedger),
// and a read waiting for its write holds its items encoded
// (cloudapi.ListOptions.KeepEncoded), so that 60 watches of the worst
// answers for memory stay under the Deployment's 256 MiB at this limit
// (docs/benchmarks.md, issue 39).
const DefaultStatusSizeLimit = 1 << 20

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
	// slim cuts inside the list's big items until it fits a budget, and
	// cuts says, per item, what that left out.
	slim func(s *swv1.ServiceWatchStatus, budget int)
	cuts func(s *swv1.ServiceWatchStatus) []string
	keep func(s *swv1.ServiceWatchStatus, n int)
	// attention says, per item, whether it needs attention (the API
	// types' NeedsAttention): those are kept first when the list is cut.
	attention func(s *swv1.ServiceWatchStatus) []bool
	// reorder puts the list's items in the order of the positions given.
	reorder func(s *swv1.ServiceWatchStatus, order []int)
	length  func(s *swv1.ServiceWatchStatus) int
	// total is how many items the cloud has, for a list that keeps fewer
	// while it streams; nil: the list holds every item it read.
	total func(w *swv1.ServiceWatch) int
	// track follows the states of the list's items (their since, and
	// their changes).
	track tracked
}

// truncate cuts the status lists until the status fits in limit bytes,
// both as JSON and decoded (see DefaultStatusSizeLimit); the summary keeps
// the real counts. Each list keeps its items that need attention first,
// then the others, each group in list order (id order): its items are
// slimmed, then cut to their identities, and whole items go from the end
// of that order only when their identities do not fit. What is kept is
// shown in list order again, so that users and diffs see a stable order.
// The same input always gives the same output, so a large, unchanged
// service still yields a byte-identical status.
func truncate(status *swv1.ServiceWatchStatus, lists []statusList, limit int) {
	truncateKeeping(status, lists, limit, func() int { return 0 })
}

// truncateKeeping is truncate that keeps, when the lists do not fit, the
// room reserve says for what is written after them (the record of the
// items left out).
func truncateKeeping(status *swv1.ServiceWatchStatus, lists []statusList, limit int, reserve func() int) {
	if limit > 0 && fixedSize(status) > limit {
		limit -= reserve()
		lists = slices.Clone(lists)
		slices.SortStableFunc(lists, func(a, b statusList) int { return a.keepRank - b.keepRank })

		bare := *status
		budget := limit
		for _, l := range lists {
			l.keep(&bare, 0)
			budget -= len(`,"":[]`) + len(l.field)
		}
		budget -= fixedSize(&bare)
		for _, l := range lists { // big items are slimmed before whole ones go
			order := attentionFirst(l.attention(status))
			l.reorder(status, order)
			l.slim(status, budget)
			n, used := bound.Prefix(l.sizes(status), budget)
			budget -= used
			l.keep(status, n)
			l.reorder(status, listOrder(order[:n]))
		}
	}
}

// attentionFirst is the order that puts the items that need attention
// first, then the others, each group in list order: the positions in the
// list of the items in that order.
func attentionFirst(needs []bool) []int {
	order := make([]int, 0, len(needs))
	for _, first := range []bool{true, false} {
		for i, n := range needs {
			if n == first {
				order = append(order, i)
			}
		}
	}
	return order
}

// listOrder is the order that puts items back in list order, given the
// list positions they came from (from, distinct).
func listOrder(from []int) []int {
	order := make([]int, len(from))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return from[a] - from[b] })
	return order
}

// permuted is items in order (positions in items).
func permuted[T any](items []T, order []int) []T {
	if items == nil {
		return nil
	}
	out := make([]T, len(order))
	for i, from := range order {
		out[i] = items[from]
	}
	return out
}

// needsAttention is, per item, whether it needs attention.
func needsAttention[T any, P interface {
	*T
	NeedsAttention() bool
}](items []T) []bool {
	needs := make([]bool, len(items))
	for i := range items {
		needs[i] = P(&items[i]).NeedsAttention()
	}
	return needs
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

// Item states over time: each list's items carry since, found by comparing
// what a sync read with the stored status (changes.Detect); the record of
// the items status left out keeps theirs (status.leftOutSince). What
// changed is told by report.go.

// tracked says how one part's list in status is followed: its kind, its
// items as detection sees them, and the writing of their since.
type tracked struct {
	kind  changes.Kind
	items func(s *swv1.ServiceWatchStatus) []changes.Item
	// setSince gives each item of the list its since (none when absent).
	setSince func(s *swv1.ServiceWatchStatus, since map[string]time.Time)
}

// sinceOf is since as status keeps it.
func sinceOf(since map[string]time.Time, id *string) *metav1.Time {
	if id == nil {
		return nil
	}
	t, ok := since[*id]
	if !ok || t.IsZero() {
		return nil
	}
	return &metav1.Time{Time: t}
}

// tracking is what following the items of one write found: the since of
// every item each part read (also of those status left out), and the
// changes.
type tracking struct {
	since   []map[string]time.Time // per part; nil: the part did not read
	read    [][]changes.Item       // per part: every item it read
	changes []changes.Change
}

// trackItems gives every item the parts read its since and finds the
// changes, comparing with baseline (the lists as status held them before)
// and the stored record of left-out items. A part that did not read (it
// failed, or was deferred) keeps its items as they are. seen are the
// items each part read beyond those apply put in status (all the list's
// items, within the state metrics' bound).
func trackItems(watch *swv1.ServiceWatch, parts []part, baseline [][]changes.Item, results []partResult, left changes.LeftOut, now time.Time) tracking {
	t := tracking{since: make([]map[string]time.Time, len(parts)), read: make([][]changes.Item, len(parts))}
	if now.IsZero() {
		return t
	}
	who := changes.Watch{Namespace: watch.Namespace, Name: watch.Name, UID: watch.UID}
	for i, p := range parts {
		if results[i].apply == nil || p.list == nil { // it did not read, or is not a list
			continue
		}
		read := unionByID(p.list.track.items(&watch.Status), results[i].seen)
		found := changes.Detect(changes.Input{Watch: who, Kind: p.list.track.kind, Now: now, Baseline: baseline[i], LeftOut: left, Read: read})
		p.list.track.setSince(&watch.Status, found.Since)
		t.since[i], t.read[i] = found.Since, read
		t.changes = append(t.changes, found.Changes...)
	}
	return t
}

// unionByID is the items of a, then those of b whose ID a lacks.
func unionByID(a, b []changes.Item) []changes.Item {
	if len(b) == 0 {
		return a
	}
	in := make(map[string]bool, len(a))
	for _, item := range a {
		in[item.ID] = true
	}
	out := slices.Clip(a)
	for _, item := range b {
		if !in[item.ID] {
			out = append(out, item)
		}
	}
	return out
}

// leftOutRoom is the room status keeps for the record of left-out items
// when its lists do not fit: a 32nd of the limit, and no more than one
// entry for each item the lists hold.
func leftOutRoom(limit, items int) int {
	return min(limit/32, items*changes.LeftOutEntryBytes, changes.MaxLeftOut*changes.LeftOutEntryBytes)
}

// leftOutRecord is what status.leftOutSince keeps after a write: the
// entries of old of the parts that did not read, as they were, and for
// those that read, an entry for each item read that status left out, those
// that need attention first, then in id order, within room.
func leftOutRecord(watch *swv1.ServiceWatch, parts []part, results []partResult, t tracking, old changes.LeftOut, room int) []string {
	var kept []changes.Kind
	for i, p := range parts {
		if results[i].apply == nil && p.list != nil {
			kept = append(kept, p.list.track.kind)
		}
	}
	record := old.Of(kept...)
	if room == 0 { // nothing was left out
		return record.Entries()
	}
	n := min(room/changes.LeftOutEntryBytes, changes.MaxLeftOut) - len(record)
	for i, p := range parts {
		if t.since[i] == nil || n <= 0 {
			continue
		}
		listed := map[string]bool{}
		for _, item := range p.list.track.items(&watch.Status) {
			listed[item.ID] = true
		}
		var out []changes.Item
		for _, item := range t.read[i] {
			if item.ID != "" && !listed[item.ID] {
				out = append(out, item)
			}
		}
		slices.SortStableFunc(out, func(a, b changes.Item) int {
			aa, ba := changes.NeedsAttention(p.list.track.kind, a.State), changes.NeedsAttention(p.list.track.kind, b.State)
			if aa != ba {
				if aa {
					return -1
				}
				return 1
			}
			return strings.Compare(a.ID, b.ID)
		})
		for _, item := range out[:min(len(out), n)] {
			record.Add(p.list.track.kind, item.ID, item.State, t.since[i][item.ID])
		}
		n -= min(len(out), n)
	}
	return record.Entries()
}
