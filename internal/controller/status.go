package controller

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
)

// applyResults writes the outcome of one sync into status. A part that
// failed keeps its last good data; only its condition changes.
func applyResults(status *swv1.ServiceWatchStatus, watch *swv1.ServiceWatch, res cloudResults, sizeLimit int) {
	if status.Summary == nil {
		status.Summary = &swv1.Summary{}
	}
	gen := watch.Generation

	if res.pipes.failure == nil {
		status.Pipes = res.pipes.items
		status.Summary.Pipes = int32(res.pipes.total)
		status.Summary.PipesByState = res.pipes.byState
	}
	setPartCondition(status, swv1.ConditionPipesSynced, gen, res.pipes.failure,
		fmt.Sprintf("Listed %d pipes", status.Summary.Pipes))

	if res.endpoints.failure == nil {
		status.ReversePrivateEndpoints = res.endpoints.items
		status.Summary.ReversePrivateEndpoints = int32(res.endpoints.total)
	}
	setPartCondition(status, swv1.ConditionReversePrivateEndpointsSynced, gen, res.endpoints.failure,
		fmt.Sprintf("Listed %d reverse private endpoints", status.Summary.ReversePrivateEndpoints))

	alertsFailure := applyAlerts(status, watch.Spec.AlertIDs, res)
	setPartCondition(status, swv1.ConditionAlertsSynced, gen, alertsFailure,
		fmt.Sprintf("Fetched %d alerts", len(watch.Spec.AlertIDs)))

	truncate(status, sizeLimit, gen)
	setSummaryConditions(status, gen)
}

// applyAlerts merges the fetched alerts into status, in spec order, and
// returns the failure of the alerts part as AlertsSynced should show it.
func applyAlerts(status *swv1.ServiceWatchStatus, ids []string, res cloudResults) *failure {
	previous := make(map[string]swv1.AlertStatus, len(status.Alerts))
	for _, a := range status.Alerts {
		previous[a.ID] = a
	}
	alerts := make([]swv1.AlertStatus, 0, len(ids))
	var failed []string
	var first *failure
	for i, id := range ids {
		f := res.alertsFailure
		if f == nil {
			f = res.alerts[i].failure
		}
		if f == nil {
			alerts = append(alerts, res.alerts[i].alert)
			continue
		}
		entry := previous[id] // the last successful fetch, if there was one
		entry.ID, entry.Error = id, f.Error()
		alerts = append(alerts, entry)
		failed = append(failed, fmt.Sprintf("%s (%s)", id, f.Error()))
		if first == nil {
			first = f
		}
	}
	if len(alerts) == 0 {
		alerts = nil
	}
	status.Alerts = alerts
	status.Summary.Alerts = int32(len(alerts) - len(failed))

	switch {
	case first == nil:
		return nil
	case res.alertsFailure != nil:
		return res.alertsFailure
	default:
		return &failure{
			reason:     first.reason,
			retryAfter: first.retryAfter,
			message:    fmt.Sprintf("%d of %d alerts failed: %s", len(failed), len(ids), strings.Join(failed, "; ")),
		}
	}
}

func setPartCondition(status *swv1.ServiceWatchStatus, condType string, gen int64, f *failure, okMessage string) {
	c := metav1.Condition{Type: condType, Status: metav1.ConditionTrue, Reason: swv1.ReasonSynced, Message: okMessage, ObservedGeneration: gen}
	if f != nil {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, f.reason, f.message
	}
	meta.SetStatusCondition(&status.Conditions, c)
}

// setSummaryConditions derives Ready and Stalled from the part conditions,
// and ends Reconciling: the work it announced is done.
func setSummaryConditions(status *swv1.ServiceWatchStatus, gen int64) {
	var failing []metav1.Condition
	var stalled *metav1.Condition
	// Failures are reported in this order in Ready and Stalled.
	for _, t := range []string{swv1.ConditionPipesSynced, swv1.ConditionReversePrivateEndpointsSynced, swv1.ConditionAlertsSynced} {
		c := meta.FindStatusCondition(status.Conditions, t)
		if c == nil || c.Status == metav1.ConditionTrue {
			continue
		}
		failing = append(failing, *c)
	}
	for i := range failing {
		if isStalledReason(failing[i].Reason) {
			stalled = &failing[i]
			break
		}
	}
	meta.RemoveStatusCondition(&status.Conditions, swv1.ConditionReconciling)

	if stalled != nil {
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{
			Type: swv1.ConditionStalled, Status: metav1.ConditionTrue, Reason: stalled.Reason,
			Message: stalled.Message, ObservedGeneration: gen,
		})
	} else {
		meta.RemoveStatusCondition(&status.Conditions, swv1.ConditionStalled)
	}

	ready := metav1.Condition{
		Type: swv1.ConditionReady, Status: metav1.ConditionTrue, Reason: swv1.ReasonSynced, ObservedGeneration: gen,
		Message: fmt.Sprintf("Synced %d pipes, %d reverse private endpoints and %d alerts",
			status.Summary.Pipes, status.Summary.ReversePrivateEndpoints, status.Summary.Alerts),
	}
	if len(failing) > 0 {
		msgs := make([]string, len(failing))
		for i, c := range failing {
			msgs[i] = fmt.Sprintf("%s: %s", c.Type, c.Message)
		}
		ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, failing[0].Reason, strings.Join(msgs, "; ")
	}
	meta.SetStatusCondition(&status.Conditions, ready)
}

// markSuspended records that the watch is suspended: no data is touched.
func markSuspended(status *swv1.ServiceWatchStatus, gen int64) {
	meta.RemoveStatusCondition(&status.Conditions, swv1.ConditionReconciling)
	meta.RemoveStatusCondition(&status.Conditions, swv1.ConditionStalled)
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: swv1.ConditionReady, Status: metav1.ConditionFalse, Reason: swv1.ReasonSuspended,
		Message: "spec.suspend is true: no calls to the cloud; the status keeps its last data", ObservedGeneration: gen,
	})
	status.ObservedGeneration = gen
}

// markReconciling announces that a new generation or a requested sync is
// being worked on.
func markReconciling(status *swv1.ServiceWatchStatus, gen int64, message string) {
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: swv1.ConditionReconciling, Status: metav1.ConditionTrue, Reason: swv1.ReasonProgressing,
		Message: message, ObservedGeneration: gen,
	})
}
