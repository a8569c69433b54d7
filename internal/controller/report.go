package controller

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/alerts"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/metrics/statemetrics"
	"github.com/servicewatch/servicewatch/internal/metrics/syncmetrics"
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
func recordSync(m *syncmetrics.Metrics, watch *swv1.ServiceWatch, parts []part) {
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
// in bytes instead (see statemetrics.Selection). A part that failed shows the
// items status still holds.
func stateMetricsOf(watch *swv1.ServiceWatch, fills ...func(*statemetrics.Watch)) statemetrics.Watch {
	w := statusMetricsOf(watch)
	for _, fill := range fills {
		if fill != nil {
			fill(&w)
		}
	}
	return w
}

// statusMetricsOf is what status shows.
func statusMetricsOf(watch *swv1.ServiceWatch) statemetrics.Watch {
	s := watch.Status
	w := statemetrics.Watch{
		Namespace:  watch.Namespace,
		Name:       watch.Name,
		Conditions: s.Conditions,
		Interval:   watch.Spec.SyncInterval(),
		Pipes:      make([]statemetrics.Pipe, len(s.Pipes)),
		Endpoints:  make([]statemetrics.Endpoint, len(s.ReversePrivateEndpoints)),
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
