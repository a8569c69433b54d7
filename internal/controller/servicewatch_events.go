package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/conditions"
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
// part that started or stopped failing (or fails for a new reason), and the
// watch becoming Ready or being suspended.
func eventsFor(before, after *swv1.ServiceWatch, parts []part) []event {
	var events []event
	for _, p := range parts {
		old, cur := conditions.Get(before, p.condition), conditions.Get(after, p.condition)
		if !changed(old, cur) {
			continue
		}
		switch {
		case cur.Status == metav1.ConditionFalse:
			events = append(events, newEvent(corev1.EventTypeWarning, cur.Reason, p.condition+" is False: "+cur.Message))
		case old != nil: // recovered; a first success is covered by Ready
			events = append(events, newEvent(corev1.EventTypeNormal, p.condition, p.condition+" recovered: "+cur.Message))
		}
	}
	events = append(events, intervalEvents(conditions.Get(before, swv1.ConditionIntervalMet), conditions.Get(after, swv1.ConditionIntervalMet))...)
	old, cur := conditions.Get(before, swv1.ConditionReady), conditions.Get(after, swv1.ConditionReady)
	if changed(old, cur) {
		switch {
		case cur.Status == metav1.ConditionTrue:
			events = append(events, newEvent(corev1.EventTypeNormal, swv1.ConditionReady, cur.Message))
		case cur.Reason == swv1.ReasonSuspended:
			events = append(events, newEvent(corev1.EventTypeNormal, swv1.ReasonSuspended, cur.Message))
		}
	}
	return events
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
	return event{eventType: eventType, reason: reason, note: cutString(note, maxEventNoteBytes)}
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
