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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/alerts"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/changes"
	"github.com/servicewatch/servicewatch/internal/metrics"
)

// maxEventNoteBytes is the longest note events.k8s.io accepts.
const maxEventNoteBytes = 1 << 10

// event is one Kubernetes event to emit on a ServiceWatch.
type event struct {
	eventType string // corev1.EventTypeNormal or corev1.EventTypeWarning
	reason    string
	note      string
}

// eventsFor selects the events that tell the user about changes of state
// between two versions of a watch, never about a sync that changed nothing: a
// part that started failing (or fails for a new reason), parts that
// recovered, and the watch becoming Ready or being suspended.
//
// They are bounded per failure episode, the time from a watch's first
// failure to its next Ready: told holds the failures (a part's condition and
// reason) told in the episode, and a failure told once is not told again in
// it, nor is a part's recovery while the watch is still not Ready. A cloud
// that fails every other call makes the failing part alternate between
// pipes and endpoints while Ready stays False: each sync would otherwise
// tell one part's failure and the other's recovery. eventsFor updates told,
// and empties it when the watch is Ready.
func eventsFor(before, after *swv1.ServiceWatch, parts []part, told episode) []event {
	var events []event
	ready := after.IsReady()
	for _, p := range parts {
		old, cur := before.Condition(p.condition), after.Condition(p.condition)
		if !changed(old, cur) {
			continue
		}
		switch {
		case cur.Status == metav1.ConditionFalse:
			if told.tell(p.condition, cur.Reason) {
				events = append(events, newEvent(corev1.EventTypeWarning, cur.Reason, p.condition+" is False: "+cur.Message))
			}
		case old != nil && ready: // recovered; a first success is covered by Ready
			events = append(events, newEvent(corev1.EventTypeNormal, p.condition, p.condition+" recovered: "+cur.Message))
		}
	}
	events = append(events, intervalEvents(before.Condition(swv1.ConditionIntervalMet), after.Condition(swv1.ConditionIntervalMet))...)
	old, cur := before.Condition(swv1.ConditionReady), after.Condition(swv1.ConditionReady)
	if changed(old, cur) {
		switch {
		case cur.Status == metav1.ConditionTrue:
			events = append(events, newEvent(corev1.EventTypeNormal, swv1.ConditionReady, cur.Message))
		case cur.Reason == swv1.ReasonSuspended:
			events = append(events, newEvent(corev1.EventTypeNormal, swv1.ReasonSuspended, cur.Message))
		}
	}
	if ready {
		clear(told)
	}
	return events
}

// episode is the failures told in a watch's current failure episode, by
// condition type and reason.
type episode map[string]bool

// tell records a failure, and says whether it is news in the episode.
func (e episode) tell(condition, reason string) bool {
	k := condition + "/" + reason
	if e[k] {
		return false
	}
	e[k] = true
	return true
}

// episodes keep each watch's failure episode between syncs. They live in
// memory: after a restart, the failures a watch's status shows count as told.
type episodes struct {
	mu sync.Mutex
	of map[types.NamespacedName]episode
}

// events are eventsFor the watch, in its episode.
func (e *episodes) events(before, after *swv1.ServiceWatch, parts []part) []event {
	key := types.NamespacedName{Namespace: after.Namespace, Name: after.Name}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.of == nil {
		e.of = map[types.NamespacedName]episode{}
	}
	told, ok := e.of[key]
	if !ok {
		told = episode{}
		for _, p := range parts { // told before a restart, or at the first sync
			if c := before.Condition(p.condition); c != nil && c.Status == metav1.ConditionFalse {
				told.tell(p.condition, c.Reason)
			}
		}
		e.of[key] = told
	}
	events := eventsFor(before, after, parts, told)
	if len(told) == 0 {
		delete(e.of, key) // Ready: the next failure starts an episode
	}
	return events
}

// forget drops the episode of a watch that went away.
func (e *episodes) forget(key types.NamespacedName) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.of, key)
}

// intervalEvents tell when the budget starts or stops stretching the
// interval, not on every sync while it does.
func intervalEvents(old, cur *metav1.Condition) []event {
	switch {
	case old == nil && cur != nil:
		return []event{newEvent(corev1.EventTypeWarning, cur.Reason, cur.Message)}
	case old != nil && cur == nil:
		return []event{newEvent(corev1.EventTypeNormal, swv1.ConditionIntervalMet, "the rate budget allows spec.interval again")}
	}
	return nil
}

// changed tells whether a condition appeared or changed its status or reason.
func changed(old, cur *metav1.Condition) bool {
	return cur != nil && (old == nil || old.Status != cur.Status || old.Reason != cur.Reason)
}

// newEvent bounds the note to what the events API accepts: a longer note is
// refused and the event lost.
func newEvent(eventType, reason, note string) event {
	return event{eventType: eventType, reason: reason, note: bound.Cut(note, maxEventNoteBytes)}
}

// emit records the events on the watch, and logs each.
func (r *ServiceWatchReconciler) emit(ctx context.Context, watch *swv1.ServiceWatch, events []event) {
	for _, e := range events {
		log.FromContext(ctx).Info("state changed", "type", e.eventType, "reason", e.reason, "message", e.note)
		if r.Recorder != nil {
			r.Recorder.Eventf(watch, nil, e.eventType, e.reason, "Sync", "%s", e.note)
		}
	}
}

// record updates the metrics after a sync. Each part's result is the reason
// its condition now shows, so metrics and status cannot disagree.
func recordSync(m *metrics.Sync, watch *swv1.ServiceWatch, parts []part) {
	key := types.NamespacedName{Namespace: watch.Namespace, Name: watch.Name}
	for _, p := range parts {
		if p.count != nil {
			m.RecordItems(key, p.name, p.count(&watch.Status))
		}
		if !p.inUse(watch) {
			continue
		}
		if c := watch.Condition(p.condition); c != nil {
			m.RecordSync(p.name, c.Reason)
		}
	}
}

// stateMetricsOf is what the state metrics show of a watch: its status as
// written, with the item lists of the parts that just synced in full (see
// the fills, each a part's partResult.metricItems): status may be truncated, the metrics are bounded
// in bytes instead (see metrics.Selection). A part that failed shows the
// items status still holds.
func stateMetricsOf(watch *swv1.ServiceWatch, fills ...func(*metrics.Watch)) metrics.Watch {
	w := statusMetricsOf(watch)
	for _, fill := range fills {
		if fill != nil {
			fill(&w)
		}
	}
	return w
}

// pipeItem and endpointItem are a status item as the state metrics see it.
func pipeItem(p *swv1.Pipe) metrics.Pipe {
	return metrics.Pipe{ID: ptr.Deref(p.ID, ""), Name: ptr.Deref(p.Name, ""), State: ptr.Deref(p.State, ""), SourceKind: ptr.Deref(p.SourceKind, ""), Since: ptr.Deref(p.Since, metav1.Time{}).Time}
}

func endpointItem(e *swv1.ReversePrivateEndpoint) metrics.Endpoint {
	return metrics.Endpoint{ID: ptr.Deref(e.ID, ""), Type: ptr.Deref(e.Type, ""), Status: ptr.Deref(e.Status, ""), Since: ptr.Deref(e.Since, metav1.Time{}).Time}
}

// statusMetricsOf is what status shows.
func statusMetricsOf(watch *swv1.ServiceWatch) metrics.Watch {
	s := watch.Status
	w := metrics.Watch{
		Namespace:  watch.Namespace,
		Name:       watch.Name,
		Conditions: s.Conditions,
		Interval:   watch.Spec.SyncInterval(),
		Pipes:      make([]metrics.Pipe, len(s.Pipes)),
		Endpoints:  make([]metrics.Endpoint, len(s.ReversePrivateEndpoints)),
	}
	if s.LastSyncTime != nil {
		w.LastSyncTime = s.LastSyncTime.Time
	}
	if s.Summary != nil { // a truncated status says how many it left out
		w.PipesTotal, w.EndpointsTotal = int(s.Summary.Pipes), int(s.Summary.ReversePrivateEndpoints)
	}
	for i := range s.Pipes {
		w.Pipes[i] = pipeItem(&s.Pipes[i])
	}
	for i := range s.ReversePrivateEndpoints {
		w.Endpoints[i] = endpointItem(&s.ReversePrivateEndpoints[i])
	}
	w.Alerts = alerts.Items(s.Alerts)
	return w
}

// The Events of item changes. The changes are found when status is built
// (trackItems, in status.go) and told before the status that holds them is
// written. The stored status is the baseline: a write that fails, or a
// manager that stops before it, finds the same changes again with the same
// IDs, and an Event is named after its change's ID, so that the API server
// refuses a second one (AlreadyExists: told already). Told before the write,
// a change is never lost between the write and its Event; told twice at
// worst to the sink, with the same ID.

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
func showSince(w *metrics.Watch, parts []part, t tracking) {
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
