package controller

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/changes"
	"github.com/servicewatch/servicewatch/internal/metrics/statemetrics"
)

// Item state changes: each list's items carry since, found by comparing
// what a sync read with the stored status (changes.Detect), and the changes
// are told as events.k8s.io Events on the watch, and offered to the change
// sink, before the status that holds them is written. The stored status is
// the baseline: a write that fails, or a manager that stops before it,
// finds the same changes again with the same IDs, and an Event is named
// after its change's ID, so that the API server refuses a second one
// (AlreadyExists: told already). Told before the write, a change is never
// lost between the write and its Event; told twice at worst to the sink,
// with the same ID.

// ReportingController names the controller in its Events: the name the
// manager's event recorder is made with, and the reporter of the Events of
// item changes, which it creates itself.
const ReportingController = "servicewatch-controller"

// Bounds on the Events of item changes. A sync tells at most
// maxChangeEventsPerSync changes one by one, and a watch at most
// changeEventBurst at once and one more every changeEventRefill over time:
// the others of the sync are counted, by transition, in one Event. So a
// thousand pipes failing at once make 11 Events, and a pipe that flaps at
// every sync of a 30 s interval makes at most 30 plus 60 an hour one by one,
// then one counting Event a sync.
const (
	maxChangeEventsPerSync = 10
	changeEventBurst       = 30
	changeEventRefill      = time.Minute
	// maxChangeFieldBytes bounds an item's id, name or state in a note.
	maxChangeFieldBytes = 128
	// changeEventAction is the action of the Events of item changes.
	changeEventAction = "Sync"
)

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

// timeOf is a status since as detection sees it.
func timeOf(t *metav1.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
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

// changeEvent is one Event of item changes, named so that the API server
// keeps one of each.
type changeEvent struct {
	name, eventType, reason, note string
}

// changeEvents are the Events of one sync's changes: one per change while
// singles allow (the worse first, then in the order found), and one that
// counts the others by transition.
func changeEvents(watch *swv1.ServiceWatch, found []changes.Change, singles int) []changeEvent {
	if len(found) == 0 {
		return nil
	}
	found = slices.Clone(found)
	slices.SortStableFunc(found, func(a, b changes.Change) int {
		switch {
		case a.Worse == b.Worse:
			return 0
		case a.Worse:
			return -1
		}
		return 1
	})
	singles = max(0, min(singles, len(found)))
	events := make([]changeEvent, 0, singles+1)
	for _, c := range found[:singles] {
		events = append(events, changeEvent{name: changeEventName(watch.Name, c.ID), eventType: changeType(c.Worse),
			reason: changeReason(c.Kind), note: bound.Cut(changeNote(c), maxEventNoteBytes)})
	}
	if rest := found[singles:]; len(rest) > 0 {
		events = append(events, countingEvent(watch, rest, singles))
	}
	return events
}

// countingEvent counts changes by transition, in one Event named after
// their IDs.
func countingEvent(watch *swv1.ServiceWatch, rest []changes.Change, told int) changeEvent {
	type transition struct {
		kind     changes.Kind
		from, to string
	}
	counts := map[transition]int{}
	ids := make([]string, len(rest))
	worse := false
	for i, c := range rest {
		counts[transition{c.Kind, c.From, c.To}]++
		ids[i] = c.ID
		worse = worse || c.Worse
	}
	byCount := make([]transition, 0, len(counts))
	for tr := range counts {
		byCount = append(byCount, tr)
	}
	slices.SortFunc(byCount, func(a, b transition) int {
		return cmp.Or(counts[b]-counts[a], strings.Compare(string(a.kind), string(b.kind)), strings.Compare(a.from, b.from), strings.Compare(a.to, b.to))
	})
	lines := make([]string, len(byCount))
	for i, tr := range byCount {
		lines[i] = fmt.Sprintf("%d %s %s → %s", counts[tr], tr.kind, stateWord(tr.from), stateWord(tr.to))
	}
	slices.Sort(ids)
	sum := sha256.Sum256([]byte(strings.Join(ids, ",")))
	head := fmt.Sprintf("%d item state changes", len(rest))
	if told > 0 {
		head = fmt.Sprintf("%d more item state changes (%d told one by one)", len(rest), told)
	}
	return changeEvent{name: changeEventName(watch.Name, hex.EncodeToString(sum[:16])), eventType: changeType(worse),
		reason: "ItemStatesChanged", note: bound.Cut(head+": "+bound.Join(lines, maxEventNoteBytes-len(head)-2), maxEventNoteBytes)}
}

// changeNote says what changed: the kind, name and id of the item, and its
// old and new states.
func changeNote(c changes.Change) string {
	name := ""
	if c.ItemName != "" {
		name = " " + bound.Cut(c.ItemName, maxChangeFieldBytes)
	}
	return fmt.Sprintf("%s%s (id %s): %s → %s", c.Kind, name, bound.Cut(c.ItemID, maxChangeFieldBytes), stateWord(c.From), stateWord(c.To))
}

// stateWord is a state in a note.
func stateWord(s string) string {
	if s == "" {
		return "(none)"
	}
	return bound.Cut(s, maxChangeFieldBytes)
}

func changeType(worse bool) string {
	if worse {
		return corev1.EventTypeWarning
	}
	return corev1.EventTypeNormal
}

// changeReason is the reason of the Events of a kind's changes.
func changeReason(kind changes.Kind) string {
	switch kind {
	case changes.KindPipe:
		return "PipeStateChanged"
	case changes.KindReversePrivateEndpoint:
		return "ReversePrivateEndpointStatusChanged"
	case changes.KindAlert:
		return "AlertStateChanged"
	}
	return "ItemStateChanged"
}

// changeEventName is the name of an Event of the watch: its name, cut so
// that the whole stays a valid name, and the change's ID.
func changeEventName(watch, id string) string {
	return strings.TrimRight(bound.Bytes(watch, 253-1-len(id)), ".-") + "." + id
}

// changeBudgets bound each watch's Events of changes over time: a token
// bucket per watch, changeEventBurst deep, refilled one token every
// changeEventRefill. In memory: a restart starts them full.
type changeBudgets struct {
	mu sync.Mutex
	of map[types.NamespacedName]changeBudget
}

type changeBudget struct {
	tokens float64
	at     time.Time
}

// take spends up to want tokens of the watch's bucket at now and says how
// many it spent.
func (b *changeBudgets) take(key types.NamespacedName, want int, now time.Time) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.of == nil {
		b.of = map[types.NamespacedName]changeBudget{}
	}
	cur, ok := b.of[key]
	if !ok {
		cur = changeBudget{tokens: changeEventBurst, at: now}
	}
	cur.tokens = min(changeEventBurst, cur.tokens+float64(now.Sub(cur.at))/float64(changeEventRefill))
	cur.at = now
	spent := min(want, int(cur.tokens))
	cur.tokens -= float64(spent)
	b.of[key] = cur
	return spent
}

// forget drops the bucket of a watch that went away.
func (b *changeBudgets) forget(key types.NamespacedName) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.of, key)
}

// tellChanges tells the changes a write found and has not told yet: as
// Events on the watch (bounded, named after the changes) and to the
// change sink. It runs before the status is written.
func (r *ServiceWatchReconciler) tellChanges(ctx context.Context, watch *swv1.ServiceWatch, found []changes.Change, told map[string]bool) {
	var fresh []changes.Change
	for _, c := range found {
		if !told[c.ID] {
			told[c.ID] = true
			fresh = append(fresh, c)
		}
	}
	if len(fresh) == 0 {
		return
	}
	now := r.clock.Now()
	key := types.NamespacedName{Namespace: watch.Namespace, Name: watch.Name}
	singles := r.changeBudgets.take(key, min(len(fresh), maxChangeEventsPerSync), now)
	// At most maxChangeEventsPerSync+1 Events, created together: one by one,
	// a sync of many changes held its worker for as many round trips.
	var created sync.WaitGroup
	for _, e := range changeEvents(watch, fresh, singles) {
		created.Go(func() { r.createChangeEvent(ctx, watch, e, now) })
	}
	created.Wait()
	if r.ChangeSink != nil {
		r.ChangeSink.Offer(fresh)
	}
}

// createChangeEvent creates one Event of changes; one of its name already
// there was told before (a retried write, a restart).
func (r *ServiceWatchReconciler) createChangeEvent(ctx context.Context, watch *swv1.ServiceWatch, e changeEvent, now time.Time) {
	ev := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: e.name, Namespace: watch.Namespace},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: ReportingController,
		ReportingInstance:   r.reportingInstance,
		Action:              changeEventAction,
		Reason:              e.reason,
		Type:                e.eventType,
		Note:                e.note,
		Regarding: corev1.ObjectReference{APIVersion: swv1.GroupVersion.String(), Kind: "ServiceWatch",
			Namespace: watch.Namespace, Name: watch.Name, UID: watch.UID},
	}
	err := r.Client.Create(ctx, ev)
	switch {
	case err == nil:
		log.FromContext(ctx).Info("item state changed", "type", e.eventType, "reason", e.reason, "message", e.note)
	case apierrors.IsAlreadyExists(err):
		log.FromContext(ctx).V(1).Info("item state change told before", "event", e.name)
	default:
		log.FromContext(ctx).Error(err, "creating the Event of an item state change; status still shows it", "event", e.name)
	}
}

// showSince gives the state metrics' items the since that following them
// found, also of the items status left out; items of a part that did not
// read keep the since status shows.
func showSince(w *statemetrics.Watch, parts []part, t tracking) {
	for i, p := range parts {
		since := t.since[i]
		if since == nil {
			continue
		}
		switch p.list.track.kind {
		case changes.KindPipe:
			for j := range w.Pipes {
				w.Pipes[j].Since = since[w.Pipes[j].ID]
			}
		case changes.KindReversePrivateEndpoint:
			for j := range w.Endpoints {
				w.Endpoints[j].Since = since[w.Endpoints[j].ID]
			}
		case changes.KindAlert:
			for j := range w.Alerts {
				w.Alerts[j].Since = since[w.Alerts[j].ID]
			}
		}
	}
}
