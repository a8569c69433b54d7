package controller

import (
	"context"
	"errors"
	"sync"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/alertlist"
	"github.com/servicewatch/servicewatch/internal/alertselect"
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
		inUse:     func(w *swv1.ServiceWatch) bool { return alertselect.InUse(&w.Spec) },
		read:      readAlerts,
		count:     func(s *swv1.ServiceWatchStatus) int32 { return s.Summary.Alerts },
		list: statusList{
			field:    "alerts",
			keepRank: 1, // the alerts the user named, then those a selector matched
			sizes:    func(s *swv1.ServiceWatchStatus) []int { return bound.Charges(s.Alerts) },
			slim:     func(s *swv1.ServiceWatchStatus, budget int) { s.Alerts = slim.List(s.Alerts, budget, slim.Alerts) },
			cuts: func(s *swv1.ServiceWatchStatus) []string {
				return slim.Cuts("alert", s.Alerts, func(a *swv1.AlertStatus) (*string, map[string]int32) { return &a.ID, a.Omitted })
			},
			keep:   func(s *swv1.ServiceWatchStatus, n int) { s.Alerts = s.Alerts[:n] },
			length: func(s *swv1.ServiceWatchStatus) int { return len(s.Alerts) },
			total:  func(w *swv1.ServiceWatch) int { return int(w.Status.Summary.Alerts) },
		},
	}
}

// readAlerts reads the watch's alerts: from the host's list where it lists
// (one read per interval shared by the watches on the host and credential),
// else one alert ID at a time, a few at once.
func readAlerts(ctx context.Context, cloud Cloud, in *syncScope) partResult {
	w := in.watch
	switch {
	case !alertselect.InUse(&w.Spec):
		return alertsResult(nil, 0, "", "")
	case in.alertsDeferred:
		return partResult{deferred: newFailure(swv1.ReasonRateLimited, "waiting for room in the %s's rate budget until %s; the alerts keep their last data until then",
			alertselect.BudgetName(&w.Spec), in.alertsRoomAt.UTC().Format("15:04:05 MST"))}
	case in.alerts.failure != nil:
		return wholeFailed(w, in.alerts.failure)
	case !in.alertsByList && w.Spec.AlertSelector != nil:
		return wholeFailed(w, asFailure(alertselect.NoListRoute(in.alerts.url)))
	case !in.alertsByList:
		return readOneByOne(ctx, cloud, in, false)
	}
	listing, err := sharedread.DoWithin(ctx, in.shared, in.alertListRead(), listAge(in), func(ctx context.Context) (*alertselect.Index, error) {
		l, err := listAlerts(ctx, cloud, in)
		return alertselect.NewIndex(l.Alerts, l.Stopped), err // indexed once for every watch that shares it
	})
	switch {
	case errors.Is(err, cloudapi.ErrNoListRoute):
		in.routes.NoList(alertlist.RouteOf(in.alertSource(), in.alerts.digest))
		if w.Spec.AlertSelector != nil {
			return wholeFailed(w, asFailure(alertselect.NoListRoute(in.alerts.url)))
		}
		return readOneByOne(ctx, cloud, in, true)
	case err != nil:
		return readFailed(err)
	}
	in.routes.Listed(alertlist.RouteOf(in.alertSource(), in.alerts.digest))
	picked := alertselect.Pick(w.Spec.AlertIDs, w.Spec.AlertSelector, listing)
	return alertsResult(picked.Entries, picked.Matched, listing.Stopped(), swv1.AlertsReadByList)
}

// listAlerts pages through the host's alert list. Its first page was
// admitted with the sync (or is asked for now, see admitAtCall); each
// further page asks the budget as it goes, so a long list never sends a
// call the budget did not admit.
func listAlerts(ctx context.Context, cloud Cloud, in *syncScope) (alertlist.Listing, error) {
	src, key, first := in.alertSource(), in.alertListRead(), true
	return alertlist.ReadAll(ctx, cloudapi.MaxAlertPageLimit, func(ctx context.Context, offset int) (cloudapi.AlertPage, error) {
		if err := in.admitAtCall(src.API, key, !first); err != nil {
			return cloudapi.AlertPage{}, err
		}
		first = false
		return cloud.ListAlerts(ctx, src, cloudapi.AlertPageRequest{Limit: cloudapi.MaxAlertPageLimit, Offset: offset})
	})
}

// readOneByOne fetches every alert ID of the spec, a few at a time: a
// bounded fan-out keeps one watch with 100 alerts from monopolising the
// manager. askEach: admission reserved a list read, not these calls, so
// each asks the budget for itself.
func readOneByOne(ctx context.Context, cloud Cloud, in *syncScope, askEach bool) partResult {
	ids := in.watch.Spec.AlertIDs
	entries := make([]alertselect.Entry, len(ids))
	deferred := make([]*failure, len(ids))
	limit := make(chan struct{}, max(1, in.alertConcurrency))
	var wg sync.WaitGroup
	for i, id := range ids {
		if in.alertBatch != nil && !in.alertBatch[id] {
			entries[i] = alertselect.Later(&in.watch.Spec, in.watch.Status.Alerts, id, len(in.alertBatch))
			continue
		}
		wg.Go(func() {
			limit <- struct{}{}
			defer func() { <-limit }()
			entries[i], deferred[i] = readAlert(ctx, cloud, in, id, askEach)
		})
	}
	wg.Wait()
	for _, d := range deferred {
		if d != nil {
			// Rare (see admitAtCall): the part waits for the next sync
			// whole, as when admission defers it.
			return partResult{deferred: d}
		}
	}
	return alertsResult(entries, 0, "", swv1.AlertsReadOneByOne)
}

// readAlert fetches one alert; waiting says that its call waits for the
// budget. A panic is the entry's failure.
func readAlert(ctx context.Context, cloud Cloud, in *syncScope, id string, askEach bool) (e alertselect.Entry, waiting *failure) {
	var panicked *failure
	defer func() {
		e.ID, e.SelectedBy, e.Failed = id, swv1.SelectedByID, entryFailure(panicked, e.Failed)
	}()
	defer recoverAs(&panicked)
	key, src := in.alertRead(id), in.alertSource()
	got, err := sharedread.Do(ctx, in.shared, key, in.fresh, func(ctx context.Context) (cloudapi.AlertResult, error) {
		if err := in.admitAtCall(src.API, key, askEach); err != nil {
			return cloudapi.AlertResult{}, err
		}
		got, err := cloud.GetAlertFrom(ctx, src, id)
		got.Alert.ID = id // the entry is keyed by the ID the user asked for
		return got, err
	})
	if err != nil {
		if waiting := deferral(err); waiting != nil {
			return alertselect.Entry{}, waiting
		}
		return alertselect.Entry{Failed: entryFailure(cloudFailure(err), nil)}, nil
	}
	return alertselect.Entry{Alert: &got.Alert, LeftOut: got.LeftOut}, nil
}

// alertsResult is the alerts part's result: its entries (see
// alertselect.Apply) and its condition. Unlike the lists, the alerts part
// applies even when some entries failed: each keeps its last successful
// fetch and says why.
func alertsResult(entries []alertselect.Entry, matched int, stopped, readBy string) partResult {
	told := alertselect.Tell(entries, stopped)
	res := partResult{message: told.Message, failure: asFailure(told.Failure)}
	var full []swv1.AlertStatus // what apply wrote, before any truncation
	res.metricItems = func(w *statemetrics.Watch) {
		w.Alerts, w.AlertsTotal = alertselect.Items(full), len(full)+max(0, matched-alertselect.MaxSelected)
	}
	res.apply = func(s *swv1.ServiceWatchStatus) { full = alertselect.Apply(s, entries, matched, readBy) }
	return res
}

// wholeFailed is the result of an alerts part that could not read at all:
// every entry keeps its last data and says why; the condition carries f.
func wholeFailed(w *swv1.ServiceWatch, f *failure) partResult {
	res := alertsResult(alertselect.AllFailed(&w.Spec, w.Status.Alerts, entryFailure(f, nil)), 0, "", w.Status.AlertsReadBy)
	res.failure = f
	return res
}

// asFailure is an entry's failure as the part's.
func asFailure(f *alertselect.ReadError) *failure {
	if f == nil {
		return nil
	}
	return &failure{reason: f.Reason, message: f.Message, retryAfter: f.RetryAfter}
}

// entryFailure is f as an entry's failure; or, when f is nil, otherwise.
func entryFailure(f *failure, otherwise *alertselect.ReadError) *alertselect.ReadError {
	if f == nil {
		return otherwise
	}
	return &alertselect.ReadError{Reason: f.reason, Message: f.message, RetryAfter: f.retryAfter}
}
