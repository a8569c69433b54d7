package controller

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/metrics"
)

// The source kind is derived where the pipe is read (cloudapi, which tests
// every kind); the metrics show the pipe's sourceKind as status holds it.
func TestStateMetricsOf(t *testing.T) {
	synced := metav1.NewTime(time.Unix(1_800_000_000, 0))
	conditions := []metav1.Condition{{Type: swv1.ConditionReady, Status: metav1.ConditionTrue, Reason: swv1.ReasonSynced}}
	tests := []struct {
		name  string
		watch swv1.ServiceWatch
		want  metrics.Watch
	}{{
		name: "never synced, interval defaulted",
		watch: swv1.ServiceWatch{
			ObjectMeta: metav1.ObjectMeta{Namespace: "data", Name: "new"},
		},
		want: metrics.Watch{Namespace: "data", Name: "new", Interval: swv1.DefaultInterval,
			Pipes: []metrics.Pipe{}, Endpoints: []metrics.Endpoint{}, Alerts: []metrics.Alert{}},
	}, {
		name: "items with missing fields, and an alert whose fetch failed",
		watch: swv1.ServiceWatch{
			ObjectMeta: metav1.ObjectMeta{Namespace: "data", Name: "prod"},
			Spec:       swv1.ServiceWatchSpec{Interval: metav1.Duration{Duration: time.Minute}},
			Status: swv1.ServiceWatchStatus{
				LastSyncTime: &synced,
				Conditions:   conditions,
				Pipes: []swv1.Pipe{
					{ID: ptr.To("p1"), Name: ptr.To("events"), State: ptr.To("Running"), Source: &swv1.PipeSource{MongoDB: &swv1.MongoDBSource{}}, SourceKind: ptr.To("mongodb")},
					{Name: ptr.To("no id, no state, no source")},
				},
				ReversePrivateEndpoints: []swv1.ReversePrivateEndpoint{{ID: ptr.To("e1"), Type: ptr.To("VPC_ENDPOINT_SERVICE"), Status: ptr.To("Ready")}},
				Alerts: []swv1.AlertStatus{
					{ID: "a1", Name: ptr.To("lag"), State: ptr.To("active")},
					{ID: "a2", Error: "the alert API answered 404"},
				},
			},
		},
		want: metrics.Watch{
			Namespace: "data", Name: "prod", Interval: time.Minute, LastSyncTime: synced.Time, Conditions: conditions,
			Pipes: []metrics.Pipe{
				{ID: "p1", Name: "events", State: "Running", SourceKind: "mongodb"},
				{Name: "no id, no state, no source"},
			},
			Endpoints: []metrics.Endpoint{{ID: "e1", Type: "VPC_ENDPOINT_SERVICE", Status: "Ready"}},
			Alerts: []metrics.Alert{
				{ID: "a1", Name: "lag", State: "active"},
				{ID: "a2", FetchFailed: true},
			},
		},
	}, {
		name: "a silenced alert whose deliveries fail",
		watch: swv1.ServiceWatch{
			ObjectMeta: metav1.ObjectMeta{Namespace: "data", Name: "prod"},
			Status: swv1.ServiceWatchStatus{Alerts: []swv1.AlertStatus{
				{ID: "a1", State: ptr.To("ALERT"), Silenced: &swv1.AlertSilence{Until: ptr.To("2026-03-02T18:00:00.000Z")},
					ExecutionErrors: []swv1.AlertExecutionError{
						{Timestamp: ptr.To("2026-03-02T10:30:00.000Z")}, {Timestamp: ptr.To("not a time")}, {Timestamp: ptr.To("2026-03-02T10:15:00Z")},
					}},
				{ID: "a2", Silenced: &swv1.AlertSilence{Until: ptr.To("whenever")}, ExecutionErrors: []swv1.AlertExecutionError{}},
			}},
		},
		want: metrics.Watch{Namespace: "data", Name: "prod", Interval: swv1.DefaultInterval,
			Pipes: []metrics.Pipe{}, Endpoints: []metrics.Endpoint{},
			Alerts: []metrics.Alert{
				{ID: "a1", State: "ALERT", Silenced: true, SilencedUntil: time.Date(2026, 3, 2, 18, 0, 0, 0, time.UTC),
					ExecutionErrors: 3, LastExecutionError: time.Date(2026, 3, 2, 10, 30, 0, 0, time.UTC)},
				{ID: "a2", Silenced: true},
			},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stateMetricsOf(&tt.watch); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("stateMetricsOf =\n  %+v\nwant\n  %+v", got, tt.want)
			}
		})
	}
}
