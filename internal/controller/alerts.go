package controller

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/sharedread"
	"github.com/servicewatch/servicewatch/internal/slim"
	"github.com/servicewatch/servicewatch/internal/statemetrics"
)

func alertsPart() part {
	return part{
		name:      "alerts",
		condition: swv1.ConditionAlertsSynced,
		noun:      "alerts",
		inUse:     func(w *swv1.ServiceWatch) bool { return len(w.Spec.AlertIDs) > 0 },
		read:      readAlerts,
		count:     func(s *swv1.ServiceWatchStatus) int32 { return s.Summary.Alerts },
		list: statusList{
			field:    "alerts",
			keepRank: 1, // one entry per alert ID the user named; small
			sizes:    func(s *swv1.ServiceWatchStatus) []int { return bound.Charges(s.Alerts) },
			slim:     func(s *swv1.ServiceWatchStatus, budget int) { s.Alerts = slim.List(s.Alerts, budget, slim.Alerts) },
			cuts: func(s *swv1.ServiceWatchStatus) []string {
				return slim.Cuts("alert", s.Alerts, func(a *swv1.AlertStatus) (*string, map[string]int32) { return &a.ID, a.Omitted })
			},
			keep:   func(s *swv1.ServiceWatchStatus, n int) { s.Alerts = s.Alerts[:n] },
			length: func(s *swv1.ServiceWatchStatus) int { return len(s.Alerts) },
		},
	}
}

// alertFetch is the outcome of fetching one alert.
type alertFetch struct {
	alert swv1.AlertStatus
	// leftOut names the members of the alert whose values could not be
	// read (cloudapi.AlertResult.LeftOut).
	leftOut []string
	failure *failure
	// deferred: the fetch waits for room in the budget (see admitAtCall).
	deferred *failure
	// later: not in this sync's batch; the alert's last fetch stays.
	later bool
}

// readAlerts fetches every alert of the spec, a few at a time: a bounded
// fan-out keeps one watch with 100 alerts from monopolising the manager.
func readAlerts(ctx context.Context, cloud Cloud, in *syncScope) partResult {
	ids := in.watch.Spec.AlertIDs
	if len(ids) == 0 {
		return alertsResult(ids, nil, nil)
	}
	if in.alertsDeferred {
		return partResult{deferred: newFailure(swv1.ReasonRateLimited, "waiting for room in the alert API token's rate budget")}
	}
	if in.alerts.failure != nil {
		return alertsResult(ids, nil, in.alerts.failure)
	}
	fetches := make([]alertFetch, len(ids))
	limit := make(chan struct{}, max(1, in.alertConcurrency))
	var wg sync.WaitGroup
	for i, id := range ids {
		if in.alertBatch != nil && !in.alertBatch[id] {
			fetches[i] = laterFetch(in.watch, id, len(in.alertBatch))
			continue
		}
		wg.Go(func() {
			limit <- struct{}{}
			defer func() { <-limit }()
			defer recoverAs(&fetches[i].failure)
			fetches[i] = readAlert(ctx, cloud, in, id)
		})
	}
	wg.Wait()
	for _, f := range fetches {
		if f.deferred != nil {
			// Rare (see admitAtCall): the part waits for the next sync
			// whole, as when admission defers it.
			return partResult{deferred: f.deferred}
		}
	}
	return alertsResult(ids, fetches, nil)
}

// laterFetch is an alert left for a later sync's batch: one fetched before
// keeps its last fetch; one never fetched waits for its turn, and its
// watch is not Ready until it came.
func laterFetch(watch *swv1.ServiceWatch, id string, batch int) alertFetch {
	for _, a := range watch.Status.Alerts {
		if a.ID == id && a.Error == "" {
			return alertFetch{later: true}
		}
	}
	return alertFetch{alert: swv1.AlertStatus{ID: id}, failure: newFailure(swv1.ReasonRateLimited,
		"not fetched yet: the alert API token's rate budget admits at most %d calls at once, and each sync fetches the next %d alerts", batch, batch)}
}

func readAlert(ctx context.Context, cloud Cloud, in *syncScope, id string) alertFetch {
	key := in.alertRead(id)
	got, err := sharedread.Do(ctx, in.shared, key, in.fresh, func(ctx context.Context) (cloudapi.AlertResult, error) {
		if err := in.admitAtCall(cloudapi.APIAlert, key); err != nil {
			return cloudapi.AlertResult{}, err
		}
		got, err := cloud.GetAlert(ctx, in.alerts.url, in.alerts.token, id)
		if err != nil {
			return cloudapi.AlertResult{}, err
		}
		got.Alert.ID = id // the entry is keyed by the ID the user asked for
		return got, nil
	})
	if err != nil {
		if waiting := deferral(err); waiting != nil {
			return alertFetch{deferred: waiting}
		}
		return alertFetch{alert: swv1.AlertStatus{ID: id}, failure: cloudFailure(err)}
	}
	return alertFetch{alert: got.Alert, leftOut: got.LeftOut}
}

// alertsResult turns the fetches of the spec's alert IDs (in spec order; nil
// when none could start, and then whole says why) into the alerts part's
// result. Unlike the lists, the alerts part applies even when some fetches
// failed: each failed entry keeps its last successful fetch and says why.
func alertsResult(ids []string, fetches []alertFetch, whole *failure) partResult {
	failures := make([]*failure, len(ids))
	for i := range ids {
		failures[i] = whole
		if whole == nil {
			failures[i] = fetches[i].failure
		}
	}
	res := partResult{
		message: fetchedMessage(ids, fetches) + leftOutNote(ids, fetches),
		failure: summarizeAlertFailures(ids, failures, whole),
	}
	var full []swv1.AlertStatus // what apply wrote, before any truncation
	res.metricItems = func(w *statemetrics.Watch) { w.Alerts = alertItems(full) }
	res.apply = func(s *swv1.ServiceWatchStatus) {
		previous := make(map[string]swv1.AlertStatus, len(s.Alerts))
		for _, a := range s.Alerts {
			previous[a.ID] = a
		}
		var alerts []swv1.AlertStatus
		failed := 0
		for i, id := range ids {
			if failures[i] == nil && fetches[i].later {
				alerts = append(alerts, previous[id]) // its last fetch, which succeeded
				continue
			}
			if failures[i] == nil {
				alerts = append(alerts, *fetches[i].alert.DeepCopy()) // the fetch may be shared
				continue
			}
			entry := previous[id] // the last successful fetch, if there was one
			entry.ID, entry.Error = id, failures[i].Error()
			alerts = append(alerts, entry)
			failed++
		}
		s.Alerts, full = alerts, alerts
		s.Summary.Alerts = int32(len(alerts) - failed)
	}
	return res
}

// fetchedMessage says how many alerts this sync fetched, and, when the
// token's budget made it fetch only a batch, that the others keep their last
// fetch.
func fetchedMessage(ids []string, fetches []alertFetch) string {
	later := 0
	for _, f := range fetches {
		if f.later {
			later++
		}
	}
	if later == 0 {
		return fmt.Sprintf("Fetched %d alerts", len(ids))
	}
	return fmt.Sprintf("Fetched %d of %d alerts: the alert API token's rate budget admits fewer calls at once than there are alerts, so each sync fetches the next ones in turn and the others keep their last fetch", len(ids)-later, len(ids))
}

// leftOutNote tells which alerts had values the operator could not read and
// left out (the rest of each alert is in status), bounded; "" when none.
func leftOutNote(ids []string, fetches []alertFetch) string {
	var notes []string
	for i, f := range fetches {
		if len(f.leftOut) > 0 && f.failure == nil {
			notes = append(notes, fmt.Sprintf("%s (%s)", ids[i], strings.Join(f.leftOut, ", ")))
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return fmt.Sprintf("; %d left out values of a type the operator cannot read: %s", len(notes), bound.Join(notes, maxListMessageBytes))
}

// summarizeAlertFailures is the failure AlertsSynced shows: the reason of the
// first failing alert in spec order, and every failing ID with its reason.
func summarizeAlertFailures(ids []string, failures []*failure, whole *failure) *failure {
	if whole != nil {
		return whole
	}
	var first *failure
	var failed []string
	for i, f := range failures {
		if f == nil {
			continue
		}
		if first == nil {
			first = f
		}
		failed = append(failed, fmt.Sprintf("%s (%s)", ids[i], f.Error()))
	}
	if first == nil {
		return nil
	}
	return &failure{
		reason:     first.reason,
		retryAfter: first.retryAfter,
		message:    fmt.Sprintf("%d of %d alerts failed: %s", len(failed), len(ids), bound.Join(failed, maxListMessageBytes)),
	}
}

func alertItems(alerts []swv1.AlertStatus) []statemetrics.Alert {
	items := make([]statemetrics.Alert, len(alerts))
	for i := range alerts {
		items[i] = alertItem(&alerts[i])
	}
	return items
}

// alertItem is what the state metrics show of an alert: with the silence
// and the execution errors, so that an alert that is silenced or whose
// evaluations or deliveries fail is visible to alerting.
func alertItem(a *swv1.AlertStatus) statemetrics.Alert {
	item := statemetrics.Alert{ID: a.ID, Name: ptr.Deref(a.Name, ""), State: ptr.Deref(a.State, ""), FetchFailed: a.Error != "",
		Silenced: a.Silenced != nil, ExecutionErrors: len(a.ExecutionErrors)}
	if a.Silenced != nil && a.Silenced.Until != nil {
		if until, err := time.Parse(time.RFC3339Nano, *a.Silenced.Until); err == nil {
			item.SilencedUntil = until
		}
	}
	for _, e := range a.ExecutionErrors {
		if at := cloudapi.ExecutionErrorTime(e); at.After(item.LastExecutionError) {
			item.LastExecutionError = at
		}
	}
	return item
}
