package controller

import (
	"strings"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
	"github.com/servicewatch/servicewatch/internal/statemetrics"
)

// stateMetricsOf is what the state metrics show of a watch: its status as
// written. The item lists are those of status, so they are cut when status
// is truncated.
func stateMetricsOf(watch *swv1.ServiceWatch) statemetrics.Watch {
	s := watch.Status
	w := statemetrics.Watch{
		Namespace:  watch.Namespace,
		Name:       watch.Name,
		Conditions: s.Conditions,
		Interval:   interval(watch),
		Pipes:      make([]statemetrics.Pipe, len(s.Pipes)),
		Endpoints:  make([]statemetrics.Endpoint, len(s.ReversePrivateEndpoints)),
		Alerts:     make([]statemetrics.Alert, len(s.Alerts)),
	}
	if s.LastSyncTime != nil {
		w.LastSyncTime = s.LastSyncTime.Time
	}
	for i, p := range s.Pipes {
		w.Pipes[i] = statemetrics.Pipe{
			ID: ptr.Deref(p.ID, ""), Name: ptr.Deref(p.Name, ""), State: ptr.Deref(p.State, ""),
			SourceKind: sourceKind(p.Source),
		}
	}
	for i, e := range s.ReversePrivateEndpoints {
		w.Endpoints[i] = statemetrics.Endpoint{ID: ptr.Deref(e.ID, ""), Type: ptr.Deref(e.Type, ""), Status: ptr.Deref(e.Status, "")}
	}
	for i, a := range s.Alerts {
		w.Alerts[i] = statemetrics.Alert{ID: a.ID, Name: ptr.Deref(a.Name, ""), State: ptr.Deref(a.State, ""), FetchFailed: a.Error != ""}
	}
	return w
}

// sourceKind names the source members a pipe has, with the API's names; the
// spec does not say that exactly one is present, so all are named.
func sourceKind(src *swv1.PipeSource) string {
	if src == nil {
		return ""
	}
	var kinds []string
	for _, k := range []struct {
		name    string
		present bool
	}{
		{"kafka", src.Kafka != nil},
		{"objectStorage", src.ObjectStorage != nil},
		{"kinesis", src.Kinesis != nil},
		{"postgres", src.Postgres != nil},
	} {
		if k.present {
			kinds = append(kinds, k.name)
		}
	}
	return strings.Join(kinds, ",")
}
