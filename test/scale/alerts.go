package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// The scenarios of issue 29: alerts read by list, shared between watches,
// and alerts from the management API under its real budget.

// alertID is the i-th alert of a scenario's data.
func alertID(i int) string { return fmt.Sprintf("77%022d", i) }

// scaleAlert is an alert as the hosts serve it.
func scaleAlert(i int) map[string]any {
	return map[string]any{"id": alertID(i), "name": fmt.Sprintf("scale alert %d", i), "state": "OK", "interval": "5m",
		"threshold": 1, "thresholdType": "above", "source": "tile", "channel": map[string]any{"type": "webhook", "webhookId": "w"}}
}

// scaleAlertIDs are the IDs of alerts from to from+n-1.
func scaleAlertIDs(from, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = alertID(from + i)
	}
	return ids
}

// startAlertCloud starts the fake cloud serving d and creates the tenants.
func startAlertCloud(ctx context.Context, e *runEnv, ts []tenant, d fakecloud.Data, cloudArgs ...string) error {
	if err := e.startCloud(ctx, d, cloudArgs...); err != nil {
		return err
	}
	for _, t := range ts {
		if err := e.cp.createTenant(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// alertTokenScenario: 100 watches with 10 alert IDs each (1,000 alerts in
// all) on one alert token, interval 30 s, the token's real budget enforced
// (100 calls/min): one GET per alert needs 1,000 calls per interval; one
// list of the host's 1,000 alerts needs 1.
func alertTokenScenario(ctx context.Context, e *runEnv) (string, error) {
	const (
		n        = 100
		perWatch = 10
		interval = 30 * time.Second
		run      = 3 * time.Minute
	)
	ts := makeTenants("alert-token", 1)
	d := cloudData(ts)
	d.Alerts = map[string]map[string]any{} // the host's alerts are the watches' 1,000: one page
	for i := range n * perWatch {
		d.Alerts[alertID(i)] = scaleAlert(i)
	}
	if err := startAlertCloud(ctx, e, ts, d, "--alert-budget", alertBudget); err != nil {
		return "", err
	}
	watches := spreadWatches(ts, n, watchSpec{interval: interval, alertIDs: []string{"x"}})
	for i, w := range watches {
		w.Spec.AlertIDs = scaleAlertIDs(i*perWatch, perWatch)
	}
	// The management API is not what is measured: no budget on it.
	if _, err := e.runFleet(ctx, watches, "--management-rate-limit=0"); err != nil {
		return "", err
	}
	created := time.Now()
	// Past the middle of the run, the first alert of every watch changes
	// state; the delay until each watch's status shows it, in intervals.
	if err := sleepUntil(ctx, created.Add(run/2+10*time.Second)); err != nil {
		return "", err
	}
	seen, err := changeSeen(ctx, e, ts[0].namespace, d, watches, perWatch, created.Add(run))
	if err != nil {
		return "", err
	}
	// The calls below are counted over the run's second half, whole.
	if err := sleepUntil(ctx, created.Add(run)); err != nil {
		return "", err
	}
	calls, err := e.cloud.calls(ctx)
	if err != nil {
		return "", err
	}
	from, to := created.Add(run/2), created.Add(run)
	isAlert := func(c call) bool { return c.Operation == fakecloud.OpGetAlert || c.Operation == fakecloud.OpListAlerts }
	alertCalls := selectCalls(calls, since(from), before(to), isAlert)
	perInterval := float64(len(alertCalls)) * interval.Seconds() / to.Sub(from).Seconds()
	lists := len(selectCalls(alertCalls, withOperation(fakecloud.OpListAlerts)))
	rejected := len(selectCalls(calls, withStatus(429)))
	st, err := watchStates(ctx, e, ts[0].namespace)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%.1f alert calls per 30 s (%d lists, %d GETs in the 2nd half of 3 min: %s); %d × 429; %d/%d Ready, %d IntervalMet=False; achieved interval %s; a changed alert seen %s",
		perInterval, lists, len(alertCalls)-lists, listTimes(alertCalls, from), rejected, st.ready, n, st.stretched, achievedInterval(calls, from, to, watches),
		seen.describe(interval)), nil
}

// changeDelays are how long after a change each watch's status showed it;
// missed counts the watches that did not show it by the end.
type changeDelays struct {
	delays []time.Duration
	missed int
}

// changeSeen changes the state of the first alert of every watch (watch i
// follows the perWatch alerts from i*perWatch) and polls the watches'
// statuses every second until each shows it, or until.
func changeSeen(ctx context.Context, e *runEnv, namespace string, d fakecloud.Data, watches []*swv1.ServiceWatch, perWatch int, until time.Time) (changeDelays, error) {
	const changed = "paused"
	first := map[string]string{} // watch → the alert that changes
	for i, w := range watches {
		first[w.Name] = alertID(i * perWatch)
		d.Alerts[alertID(i*perWatch)]["state"] = changed
	}
	if err := e.cloud.setData(ctx, d); err != nil {
		return changeDelays{}, err
	}
	change, seen := time.Now(), map[string]time.Duration{}
	for time.Now().Before(until) && len(seen) < len(watches) {
		var list swv1.ServiceWatchList
		if err := e.cp.client.List(ctx, &list, client.InNamespace(namespace)); err != nil {
			return changeDelays{}, err
		}
		for _, w := range list.Items {
			for _, a := range w.Status.Alerts {
				if _, done := seen[w.Name]; !done && a.ID == first[w.Name] && a.State != nil && *a.State == changed {
					seen[w.Name] = time.Since(change)
				}
			}
		}
		if err := sleepUntil(ctx, time.Now().Add(time.Second)); err != nil {
			return changeDelays{}, err
		}
	}
	out := changeDelays{missed: len(watches) - len(seen)}
	for _, delay := range seen {
		out.delays = append(out.delays, delay)
	}
	slices.Sort(out.delays)
	return out, nil
}

// describe tells the delays in intervals: the median, the largest, and how
// many watches saw the change later than one interval and 5 s (the status
// is polled every second).
func (c changeDelays) describe(every time.Duration) string {
	if len(c.delays) == 0 {
		return fmt.Sprintf("by no watch (%d missed it)", c.missed)
	}
	late := 0
	for _, delay := range c.delays {
		if delay > every+5*time.Second {
			late++
		}
	}
	in := func(delay time.Duration) float64 { return delay.Seconds() / every.Seconds() }
	return fmt.Sprintf("after %.2f intervals (median), %.2f at most; %d watches later than one interval and 5 s, %d never",
		in(c.delays[len(c.delays)/2]), in(c.delays[len(c.delays)-1]), late, c.missed)
}

// alertsManagedScenario: 60 watches on one management key, each of its own
// service with 10 alerts served by the management API, interval 5 m, the
// key's real budget enforced (10 calls/10 s): one GET per alert needs 720
// calls per 5 min against the 300 the key allows; a list per service 180.
// listRoute sets how the management host answers the list route
// (fakecloud.AlertListNone: every alert one GET).
func alertsManagedScenario(listRoute fakecloud.AlertListRoute) func(ctx context.Context, e *runEnv) (string, error) {
	return func(ctx context.Context, e *runEnv) (string, error) {
		const (
			n        = 60
			perWatch = 10
			interval = 5 * time.Minute
			run      = 7*time.Minute + 30*time.Second
		)
		ts := makeTenants("alerts-managed", 1)
		d := cloudData(ts)
		d.ServiceAlertListRoute = listRoute
		watches := spreadWatches(ts, n, watchSpec{interval: interval})
		org := d.Organizations[defaultOrg]
		for i, w := range watches {
			svc := org[w.Spec.ServiceID]
			svc.Alerts = nil
			for j := range perWatch {
				svc.Alerts = append(svc.Alerts, scaleAlert(i*perWatch+j))
			}
			org[w.Spec.ServiceID] = svc
			w.Spec.AlertsFrom, w.Spec.AlertIDs, w.Spec.AlertAPI = swv1.AlertsFromManagementAPI, scaleAlertIDs(i*perWatch, perWatch), nil
		}
		if err := startAlertCloud(ctx, e, ts, d, "--management-budget", managementBudget); err != nil {
			return "", err
		}
		if _, err := e.runFleet(ctx, watches); err != nil {
			return "", err
		}
		created := time.Now()
		if err := sleepUntil(ctx, created.Add(run)); err != nil {
			return "", err
		}
		calls, err := e.cloud.calls(ctx)
		if err != nil {
			return "", err
		}
		firstInterval := len(selectCalls(calls, before(created.Add(interval))))
		rejected := len(selectCalls(calls, withStatus(429)))
		st, err := watchStates(ctx, e, ts[0].namespace)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d calls in the first 5 min; %d × 429; %d/%d Ready, %d IntervalMet=False at 7.5 min; achieved interval %s",
			firstInterval, rejected, st.ready, n, st.stretched, achievedInterval(calls, created, created.Add(run), watches)), nil
	}
}

// states counts what the watches' statuses say.
type states struct{ ready, stretched int }

func watchStates(ctx context.Context, e *runEnv, namespace string) (states, error) {
	var list swv1.ServiceWatchList
	if err := e.cp.client.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return states{}, err
	}
	var st states
	for i := range list.Items {
		if list.Items[i].IsReady() {
			st.ready++
		}
		if meta.IsStatusConditionFalse(list.Items[i].Status.Conditions, swv1.ConditionIntervalMet) {
			st.stretched++
		}
	}
	return st, nil
}

// achievedInterval is the median and the largest gap between two
// successive syncs of a watch (its service's list-pipes calls) in [from,
// to), and how many watches synced fewer than twice there.
func achievedInterval(calls []call, from, to time.Time, watches []*swv1.ServiceWatch) string {
	byService := map[string][]time.Time{}
	for _, c := range selectCalls(calls, since(from), before(to), withOperation(fakecloud.OpListPipes), withStatus(200)) {
		byService[c.ServiceID] = append(byService[c.ServiceID], c.Time)
	}
	var gaps []time.Duration
	once := 0
	for _, w := range watches {
		ts := byService[w.Spec.ServiceID]
		if len(ts) < 2 {
			once++
			continue
		}
		slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
		for i := 1; i < len(ts); i++ {
			gaps = append(gaps, ts[i].Sub(ts[i-1]))
		}
	}
	if len(gaps) == 0 {
		return fmt.Sprintf("> %s (no watch synced twice)", to.Sub(from).Round(time.Second))
	}
	slices.Sort(gaps)
	return fmt.Sprintf("median %s, max %s; %d/%d watches synced fewer than twice in %s",
		seconds(gaps[len(gaps)/2]), seconds(gaps[len(gaps)-1]), once, len(watches), to.Sub(from).Round(time.Second))
}

// listTimes are the seconds after from of the alert list calls, to see the
// reuse of a list across the interval.
func listTimes(calls []call, from time.Time) string {
	var out []string
	for _, c := range selectCalls(calls, withOperation(fakecloud.OpListAlerts)) {
		out = append(out, fmt.Sprintf("%.1f", c.Time.Sub(from).Seconds()))
	}
	if len(out) > 12 {
		out = append(out[:12], "…")
	}
	return "at " + strings.Join(out, ", ") + " s"
}
