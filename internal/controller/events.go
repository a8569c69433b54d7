package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
)

// emitEvents tells the user about changes of state, never about a sync that
// changed nothing: a part that started or stopped failing (or fails for a new
// reason), and the watch becoming Ready or being suspended.
func (r *ServiceWatchReconciler) emitEvents(ctx context.Context, before, after *swv1.ServiceWatch) {
	for _, t := range []string{swv1.ConditionPipesSynced, swv1.ConditionReversePrivateEndpointsSynced, swv1.ConditionAlertsSynced} {
		old, cur := meta.FindStatusCondition(before.Status.Conditions, t), meta.FindStatusCondition(after.Status.Conditions, t)
		if cur == nil || (old != nil && old.Status == cur.Status && old.Reason == cur.Reason) {
			continue
		}
		switch {
		case cur.Status == metav1.ConditionFalse:
			r.event(ctx, after, corev1.EventTypeWarning, cur.Reason, t+" is False: "+cur.Message)
		case old != nil: // recovered; a first success is covered by Ready
			r.event(ctx, after, corev1.EventTypeNormal, t, t+" recovered: "+cur.Message)
		}
	}

	old, cur := meta.FindStatusCondition(before.Status.Conditions, swv1.ConditionReady), meta.FindStatusCondition(after.Status.Conditions, swv1.ConditionReady)
	if cur == nil || (old != nil && old.Status == cur.Status && old.Reason == cur.Reason) {
		return
	}
	switch {
	case cur.Status == metav1.ConditionTrue:
		r.event(ctx, after, corev1.EventTypeNormal, swv1.ConditionReady, cur.Message)
	case cur.Reason == swv1.ReasonSuspended:
		r.event(ctx, after, corev1.EventTypeNormal, swv1.ReasonSuspended, cur.Message)
	}
}

func (r *ServiceWatchReconciler) event(ctx context.Context, watch *swv1.ServiceWatch, eventType, reason, note string) {
	log.FromContext(ctx).Info("state changed", "type", eventType, "reason", reason, "message", note)
	if r.Recorder != nil {
		r.Recorder.Eventf(watch, nil, eventType, reason, "Sync", "%s", note)
	}
}
