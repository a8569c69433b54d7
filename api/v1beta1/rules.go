package v1beta1

// The rules every reader of the types shares (the controller, the plugin,
// the demo and the harnesses): which items need attention, whether a watch
// is Ready, its bounded interval, the keys of its Secrets, the kinds of pipe
// source and an alert's label. Each is written once here, beside the types
// it reads.

import (
	"reflect"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What needs attention, said once per kind: when a list does not fit in
// status, the items that need attention are kept first (then the others,
// each group in id order) and the list is shown in id order. The cloud does
// not enumerate its states (the spec: "Allowed values are not
// enumerated"); these are the words it has been seen to use for a failure,
// compared without regard to case. Any other word (an unknown state too)
// does not need attention.

// NeedsAttention reports whether the pipe is in a failing state: Failed,
// InternalError or Degraded. Such a pipe moves no data until a user acts.
func (p *Pipe) NeedsAttention() bool {
	if p.State == nil {
		return false
	}
	switch strings.ToLower(*p.State) {
	case "failed", "internalerror", "degraded":
		return true
	}
	return false
}

// NeedsAttention reports whether the endpoint is in a failing status:
// Failed, Rejected or Expired. Such an endpoint does not connect until a
// user acts.
func (e *ReversePrivateEndpoint) NeedsAttention() bool {
	if e.Status == nil {
		return false
	}
	switch strings.ToLower(*e.Status) {
	case "failed", "rejected", "expired":
		return true
	}
	return false
}

// NeedsAttention reports whether the alert fires (state ALERT), failed to
// evaluate (it has executionErrors), or could not be read (error).
func (a *AlertStatus) NeedsAttention() bool {
	return (a.State != nil && strings.EqualFold(*a.State, "ALERT")) || len(a.ExecutionErrors) > 0 || a.Error != ""
}

// GetConditions returns the conditions of the ServiceWatch's status.
func (w *ServiceWatch) GetConditions() []metav1.Condition {
	return w.Status.Conditions
}

// SetConditions replaces the conditions of the ServiceWatch's status.
func (w *ServiceWatch) SetConditions(conditions []metav1.Condition) {
	w.Status.Conditions = conditions
}

// Condition returns the status condition of type t, or nil.
func (w *ServiceWatch) Condition(t string) *metav1.Condition {
	return meta.FindStatusCondition(w.Status.Conditions, t)
}

// ConditionIs tells whether the condition of type t has the status and
// reason, and was computed for the watch's current generation.
func (w *ServiceWatch) ConditionIs(t string, status metav1.ConditionStatus, reason string) bool {
	c := w.Condition(t)
	return c != nil && c.Status == status && c.Reason == reason && c.ObservedGeneration == w.Generation
}

// IsReady tells whether the watch is Ready for its current generation: the
// one answer to "is it Ready" that the controller, the plugin, the demo and
// the test harnesses share.
func (w *ServiceWatch) IsReady() bool {
	return w.ConditionIs(ConditionReady, metav1.ConditionTrue, ReasonSynced)
}

// SetCondition adds or updates a condition, keeping its lastTransitionTime
// when its status does not change.
func (w *ServiceWatch) SetCondition(c metav1.Condition) {
	meta.SetStatusCondition(&w.Status.Conditions, c)
}

// DeleteCondition removes the condition of type t, if present.
func (w *ServiceWatch) DeleteCondition(t string) {
	meta.RemoveStatusCondition(&w.Status.Conditions, t)
}

// What every reader of a spec shares, written once: the keys of the Secrets
// a spec names, and spec.interval as the operator bounds it. The controller,
// the account controller and the kubectl plugin read them here.

// The keys of the Secrets of credentials: a management API key's Secret
// (spec.managementApi.secretRef, or a ClusterCloudAccount's) holds KeyIDKey
// and KeySecretKey, an alert API token's Secret holds TokenKey.
const (
	// KeyIDKey is the key of a management API key's ID.
	KeyIDKey = "keyId"
	// KeySecretKey is the key of a management API key's secret.
	KeySecretKey = "keySecret"
	// TokenKey is the key of an alert API bearer token.
	TokenKey = "token"
)

// Bounds of spec.interval. The CRD defaults it to DefaultInterval and
// refuses values under MinInterval or over MaxInterval (its markers say the
// same; the API's tests hold them to these); SyncInterval applies them to an
// object that predates those rules.
const (
	// MinInterval is the shortest interval a watch syncs at.
	MinInterval = 30 * time.Second
	// DefaultInterval is the interval of a spec that gives none.
	DefaultInterval = 5 * time.Minute
	// MaxInterval is the longest interval: the pacer computes slots in
	// int64 nanoseconds, which an interval near their range would overflow.
	MaxInterval = 24 * time.Hour
)

// SyncInterval is how often the watch is synced: spec.interval,
// DefaultInterval when that is under MinInterval (so that an object that
// predates the CRD's rule does not turn into a tight loop), and at most
// MaxInterval.
func (s *ServiceWatchSpec) SyncInterval() time.Duration {
	if s.Interval.Duration < MinInterval {
		return DefaultInterval
	}
	return min(s.Interval.Duration, MaxInterval)
}

// The kinds of pipe source are the members of PipeSource, derived from the
// type: a member added to PipeSource is a known kind, named in sourceKind
// and in the state metrics' source_kind label, with no list to edit
// elsewhere.

// PipeSourceKinds are the kinds of source the operator knows: the JSON names
// of PipeSource's members, in the type's order.
func PipeSourceKinds() []string {
	t := reflect.TypeFor[PipeSource]()
	kinds := make([]string, t.NumField())
	for i := range kinds {
		kinds[i] = jsonName(t.Field(i))
	}
	return kinds
}

// Kinds names the members the source has, in the order of PipeSource (see
// PipeSourceKinds); none for a nil source.
func (s *PipeSource) Kinds() []string {
	if s == nil {
		return nil
	}
	v := reflect.ValueOf(s).Elem()
	var kinds []string
	for i := range v.NumField() {
		if !v.Field(i).IsNil() {
			kinds = append(kinds, jsonName(v.Type().Field(i)))
		}
	}
	return kinds
}

// jsonName is the name a struct field has in JSON.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

// Label is the one name of the alert for a person, where a single label
// names it (the alert_name label of servicewatch_alert_info, the NAME
// column of kubectl servicewatch get alerts, the demo): its name, or its
// displayName when the name is absent or empty; "" when it has neither.
func (a *AlertStatus) Label() string {
	if a.Name != nil && *a.Name != "" {
		return *a.Name
	}
	if a.DisplayName != nil {
		return *a.DisplayName
	}
	return ""
}
