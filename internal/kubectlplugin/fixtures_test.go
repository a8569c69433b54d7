package kubectlplugin

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

// secretValue is the API key in the fixtures' Secret: no command may print it.
const secretValue = "s3cr3t-value-never-shown"

// newWatch is a watch of namespace/name as a user applies it: the
// management API at api.example.com with its key in Secret
// warehouse-api-key.
func newWatch(namespace, name string) *serviceWatch {
	w := &serviceWatch{}
	w.Namespace, w.Name = namespace, name
	w.Spec = swv1.ServiceWatchSpec{
		OrganizationID: "7f0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d",
		ServiceID:      "4e2c6a1b-9d8f-4c3b-a2e1-0f9e8d7c6b5a",
		Interval:       metav1.Duration{Duration: 5 * time.Minute},
		ManagementAPI: swv1.ManagementAPISpec{
			URL:       "https://api.example.com",
			SecretRef: swv1.SecretReference{Name: "warehouse-api-key"},
		},
	}
	return w
}

// createWithStatus creates w with the status that status sets on it, as the
// manager would have written it.
func createWithStatus(ctx context.Context, c client.Client, w *serviceWatch, status func(*serviceWatch)) error {
	if err := c.Create(ctx, w); err != nil {
		return fmt.Errorf("creating %s/%s: %w", w.Namespace, w.Name, err)
	}
	w.Status.ObservedGeneration = w.Generation
	status(w)
	if err := c.Status().Update(ctx, w); err != nil {
		return fmt.Errorf("writing the status of %s/%s: %w", w.Namespace, w.Name, err)
	}
	return nil
}

func condAt(typ string, status metav1.ConditionStatus, reason, message string, ago time.Duration, generation int64) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message,
		LastTransitionTime: metav1.NewTime(now.Add(-ago)), ObservedGeneration: generation}
}

func fixturePipe(id, name, state, kind string) swv1.Pipe {
	return swv1.Pipe{ID: ptr.To(id), Name: ptr.To(name), State: ptr.To(state), SourceKind: ptr.To(kind)}
}

// setupFixtures creates the watches the get and why tests read: two in
// namespace data (one Ready, one whose key the cloud refuses), one in
// team-b held back by a 429, their events and the Secret of their key.
func setupFixtures(ctx context.Context, c client.Client) error {
	for _, ns := range []string{"data", "team-b", "sync-tests", "empty"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "data", Name: "warehouse-api-key"},
		StringData: map[string]string{"keyId": "key-1", "keySecret": secretValue}}
	if err := c.Create(ctx, secret); err != nil {
		return fmt.Errorf("creating the Secret: %w", err)
	}
	billing := newWatch("data", "billing")
	return errors.Join(
		createWithStatus(ctx, c, analyticsProd(), readyStatus),
		createWithStatus(ctx, c, billing, unauthorizedStatus),
		createWithStatus(ctx, c, newWatch("team-b", "clicks"), rateLimitedStatus),
		createEvents(ctx, c, billing),
	)
}

// analyticsProd follows alerts too, from the manager's --alert-api-url.
func analyticsProd() *serviceWatch {
	w := newWatch("data", "analytics-prod")
	w.Spec.AlertIDs = []string{"65f1a2b3c4d5e6f708192a3b", "65f1a2b3c4d5e6f708192a3c"}
	w.Spec.AlertAPI = &swv1.AlertAPISpec{SecretRef: swv1.SecretReference{Name: "alerts-token"}}
	return w
}

func readyStatus(w *serviceWatch) {
	g := w.Generation
	kafka := fixturePipe("a1000000-0000-4000-8000-000000000001", "events_kafka", "Running", "kafka")
	kafka.Destination = &swv1.PipeDestination{Database: ptr.To("analytics"), Table: ptr.To("events")}
	kafka.Scaling = &swv1.PipeScaling{Replicas: ptr.To[int64](2)}
	kafka.UpdatedAt = ptr.To("2026-11-20T08:00:00Z")
	kafka.Since = &metav1.Time{Time: now.Add(-(3*time.Hour + 12*time.Minute))} // SINCE 3h12m; the others have none (written before since)
	w.Status.LastSyncTime = &metav1.Time{Time: now.Add(-2 * time.Minute)}
	w.Status.Summary = &swv1.Summary{Pipes: 2, PipesByState: map[string]int32{"Running": 1, "Failed": 1}, ReversePrivateEndpoints: 1, Alerts: 2}
	w.Status.Pipes = []swv1.Pipe{kafka, fixturePipe("a1000000-0000-4000-8000-000000000002", "logs_s3", "Failed", "objectStorage")}
	w.Status.ReversePrivateEndpoints = []swv1.ReversePrivateEndpoint{{
		ID: ptr.To("e1000000-0000-4000-8000-000000000001"), Description: ptr.To("msk to kafka"), Status: ptr.To("Ready"),
		Since: &metav1.Time{Time: now.Add(-50 * time.Hour)},
		Type:  ptr.To("MSK_MULTI_VPC"), EndpointID: ptr.To("vpce-0abc"), DNSNames: []string{"b-1.msk.example.com", "b-2.msk.example.com"},
	}}
	threshold := swv1.Decimal("12.25")
	w.Status.Alerts = []swv1.AlertStatus{
		{ID: "65f1a2b3c4d5e6f708192a3b", Name: ptr.To("Ingest lag"), State: ptr.To("ALERT"), Source: ptr.To("tile"), Since: &metav1.Time{Time: now.Add(-90 * time.Second)},
			Threshold: &threshold, ThresholdType: ptr.To("above")},
		{ID: "65f1a2b3c4d5e6f708192a3c", Name: ptr.To("Error rate"), State: ptr.To("OK"), Source: ptr.To("saved_search"),
			Silenced: &swv1.AlertSilence{Until: ptr.To("2026-11-27T00:00:00Z")}},
	}
	w.Status.Conditions = []metav1.Condition{
		condAt(swv1.ConditionReady, metav1.ConditionTrue, swv1.ReasonSynced, "Synced 2 pipes, 1 reverse private endpoints and 2 alerts", time.Hour, g),
		condAt(swv1.ConditionPipesSynced, metav1.ConditionTrue, swv1.ReasonSynced, "", time.Hour, g),
		condAt(swv1.ConditionReversePrivateEndpointsSynced, metav1.ConditionTrue, swv1.ReasonSynced, "", time.Hour, g),
		condAt(swv1.ConditionAlertsSynced, metav1.ConditionTrue, swv1.ReasonSynced, "", time.Hour, g),
	}
}

func unauthorizedStatus(w *serviceWatch) {
	g := w.Generation
	const refused = "the management API answered 401 Unauthorized: check keyId and keySecret of Secret warehouse-api-key"
	w.Status.LastSyncTime = &metav1.Time{Time: now.Add(-time.Minute)}
	w.Status.Summary = &swv1.Summary{Pipes: 1, PipesByState: map[string]int32{"Failed": 1}}
	w.Status.Pipes = []swv1.Pipe{fixturePipe("b1000000-0000-4000-8000-000000000001", "shop_postgres", "Failed", "postgres")}
	w.Status.Conditions = []metav1.Condition{
		condAt(swv1.ConditionReady, metav1.ConditionFalse, swv1.ReasonUnauthorized, refused, 10*time.Minute, g),
		condAt(swv1.ConditionStalled, metav1.ConditionTrue, swv1.ReasonUnauthorized, refused, 10*time.Minute, g),
		condAt(swv1.ConditionPipesSynced, metav1.ConditionFalse, swv1.ReasonUnauthorized, refused, 10*time.Minute, g),
		condAt(swv1.ConditionReversePrivateEndpointsSynced, metav1.ConditionFalse, swv1.ReasonUnauthorized, refused, 10*time.Minute, g),
	}
}

func rateLimitedStatus(w *serviceWatch) {
	g := w.Generation
	const held = "the management API answered 429 Too Many Requests; retrying after 180s"
	w.Status.LastSyncTime = &metav1.Time{Time: now.Add(-30 * time.Second)}
	w.Status.RetryNotBefore = &metav1.Time{Time: now.Add(3 * time.Minute)}
	w.Status.Summary = &swv1.Summary{Pipes: 2, PipesByState: map[string]int32{"Running": 1, "Failed": 1}}
	w.Status.Pipes = []swv1.Pipe{
		fixturePipe("c1000000-0000-4000-8000-000000000001", "clicks_kinesis", "Failed", "kinesis"),
		fixturePipe("c1000000-0000-4000-8000-000000000002", "orders_pubsub", "Running", "pubsub"),
	}
	w.Status.Conditions = []metav1.Condition{
		condAt(swv1.ConditionReady, metav1.ConditionFalse, swv1.ReasonRateLimited, held, 30*time.Second, g),
		condAt(swv1.ConditionPipesSynced, metav1.ConditionFalse, swv1.ReasonRateLimited, held, 30*time.Second, g),
		condAt(swv1.ConditionReversePrivateEndpointsSynced, metav1.ConditionTrue, swv1.ReasonSynced, "", 2*time.Hour, g),
		condAt(swv1.ConditionIntervalMet, metav1.ConditionFalse, swv1.ReasonBudgetExceeded,
			"the 6 watches of this API key ask for more calls than its budget allows: effective interval 12m0s", time.Hour, g),
	}
}

// createEvents records on w the events the manager would have: Ready long
// ago, then the refused key, three times.
func createEvents(ctx context.Context, c client.Client, w *serviceWatch) error {
	regarding := corev1.ObjectReference{APIVersion: swv1.GroupVersion.String(), Kind: "ServiceWatch",
		Namespace: w.Namespace, Name: w.Name, UID: w.UID}
	event := func(name, typ, reason, note string, at time.Time) *eventsv1.Event {
		return &eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: name},
			EventTime:  metav1.NewMicroTime(at), ReportingController: "servicewatch-controller", ReportingInstance: "servicewatch-controller-1",
			Action: "Sync", Reason: reason, Regarding: regarding, Type: typ, Note: note,
		}
	}
	refused := event("billing.2", corev1.EventTypeWarning, swv1.ReasonUnauthorized, "the management API answered 401 Unauthorized", now.Add(-10*time.Minute))
	refused.Series = &eventsv1.EventSeries{Count: 3, LastObservedTime: metav1.NewMicroTime(now.Add(-time.Minute))}
	for _, e := range []*eventsv1.Event{
		event("billing.1", corev1.EventTypeNormal, swv1.ConditionReady, "Synced 1 pipes, 0 reverse private endpoints and 0 alerts", now.Add(-50*time.Minute)),
		refused,
	} {
		if err := c.Create(ctx, e); err != nil {
			return fmt.Errorf("creating event %s: %w", e.Name, err)
		}
	}
	return nil
}
