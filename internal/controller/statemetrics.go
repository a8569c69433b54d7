package controller

import (
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/statemetrics"
	"k8s.io/utils/ptr"
)

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
		Interval:   interval(watch),
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
	w.Alerts = alertItems(s.Alerts)
	return w
}

func pipeItem(p *swv1.Pipe) statemetrics.Pipe {
	return statemetrics.Pipe{ID: ptr.Deref(p.ID, ""), Name: ptr.Deref(p.Name, ""), State: ptr.Deref(p.State, ""), SourceKind: ptr.Deref(p.SourceKind, "")}
}

func endpointItem(e *swv1.ReversePrivateEndpoint) statemetrics.Endpoint {
	return statemetrics.Endpoint{ID: ptr.Deref(e.ID, ""), Type: ptr.Deref(e.Type, ""), Status: ptr.Deref(e.Status, "")}
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

// collector gathers the metric items of a list while the client streams it,
// those the state metrics' bound in bytes keeps: a list of a million items
// with long names costs the bound, not the list.
type collector[T any, M statemetrics.Item] struct {
	items   *statemetrics.Selection[M]
	project func(*T) M
}

func newCollector[T any, M statemetrics.Item](maxBytes int, project func(*T) M) collector[T, M] {
	return collector[T, M]{items: statemetrics.NewSelection[M](maxBytes), project: project}
}

func (c collector[T, M]) add(item *T) { c.items.Add(c.project(item)) }
