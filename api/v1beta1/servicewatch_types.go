package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RequestedAtAnnotation asks for a sync now when its value changes; any value
// will do (a timestamp is customary). The value acted on is echoed in
// status.lastHandledRequestedAt.
const RequestedAtAnnotation = "servicewatch.io/requested-at"

// ServiceWatchSpec names one service of a cloud organization, the alerts to
// follow, and the credentials and schedule to use.
//
// +kubebuilder:validation:XValidation:rule="(has(self.alertsFrom) && self.alertsFrom == 'ManagementAPI') || ((!has(self.alertIds) || size(self.alertIds) == 0) && !has(self.alertSelector)) || has(self.alertApi) || has(self.managementApi.accountRef)",message="spec.alertApi is required when spec.alertIds is not empty or spec.alertSelector is set and the alerts come from the alert API (spec.alertsFrom AlertAPI, the default); with spec.alertsFrom: ManagementAPI the management API's key reads them instead; a watch with spec.managementApi.accountRef may use its account's alertApi",fieldPath=".alertApi"
// +kubebuilder:validation:XValidation:rule="!(has(self.alertsFrom) && self.alertsFrom == 'ManagementAPI' && has(self.alertApi))",message="spec.alertApi is not used when spec.alertsFrom is ManagementAPI: the alerts are read with spec.managementApi's key; remove spec.alertApi",fieldPath=".alertApi"
// +kubebuilder:validation:XValidation:rule="!has(self.alertSelector) || !has(self.alertSelector.all) || !self.alertSelector.all || (has(self.alertsFrom) && self.alertsFrom == 'ManagementAPI')",message="spec.alertSelector.all needs spec.alertsFrom: ManagementAPI (every alert of the service); an alert API host serves many services' alerts: select them by name or tags",fieldPath=".alertSelector.all"
type ServiceWatchSpec struct {
	// organizationId is the UUID of the cloud organization that owns the
	// service. It cannot be changed: create a new ServiceWatch instead.
	// +required
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	// +kubebuilder:validation:MaxLength=36
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="organizationId is immutable"
	OrganizationID string `json:"organizationId"`

	// serviceId is the UUID of the service whose pipes and reverse private
	// endpoints are watched. It cannot be changed: create a new ServiceWatch
	// instead.
	// +required
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	// +kubebuilder:validation:MaxLength=36
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="serviceId is immutable"
	ServiceID string `json:"serviceId"`

	// alertIds lists the alerts to follow by their identifiers, each an
	// opaque string of 1 to 128 characters. Entries must be unique; at most
	// 100. status.alerts lists them first, in this order. Use it to follow a
	// few known alerts; use alertSelector to follow alerts by name or tags
	// without naming each one. An ID the cloud does not know reads NotFound
	// in its entry's error.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=128
	AlertIDs []string `json:"alertIds,omitempty"`

	// interval is how often the cloud is read, as a Go duration ("30s", "5m",
	// "1h"). At least 30s, at most 24h. A small random jitter is added so that
	// many watches do not call the cloud in the same second.
	// +optional
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('30s')",message="interval must be at least 30s"
	// +kubebuilder:validation:XValidation:rule="duration(self) <= duration('24h')",message="interval must be at most 24h"
	Interval metav1.Duration `json:"interval,omitzero"`

	// suspend stops all calls to the cloud while true; the status keeps the
	// last data it had and Ready turns False with reason Suspended.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// managementApi says where the management API (pipes and reverse private
	// endpoints) is and which Secret holds its key.
	// +required
	ManagementAPI ManagementAPISpec `json:"managementApi"`

	// alertsFrom says which API serves the alerts: AlertAPI (the default), a
	// separate alert host read with the bearer token of alertApi, as a
	// self-hosted alert API; or ManagementAPI, the management API of this
	// watch's own service read with managementApi's key (and its rate
	// budget), as the managed service serves them: then alertApi is not
	// used and no alert Secret is needed.
	// +optional
	// +kubebuilder:default=AlertAPI
	// +kubebuilder:validation:Enum=AlertAPI;ManagementAPI
	AlertsFrom string `json:"alertsFrom,omitempty"`

	// alertSelector follows the alerts that match it, besides those named
	// in alertIds: every alert of the service (all, with alertsFrom:
	// ManagementAPI), or those whose name matches a pattern and that carry
	// every listed tag. It needs a host that lists alerts; the matches are
	// listed in status.alerts after the alertIds, ordered by id, as many as
	// the status size limit keeps (StatusTruncated says when some were left
	// out).
	// +optional
	AlertSelector *AlertSelector `json:"alertSelector,omitempty"`

	// alertApi says where the alert API is and which Secret holds its token.
	// Required when alertIds or alertSelector is set and alertsFrom is
	// AlertAPI; not used with alertsFrom: ManagementAPI.
	// +optional
	AlertAPI *AlertAPISpec `json:"alertApi,omitempty"`
}

// Values of spec.alertsFrom.
const (
	// AlertsFromAlertAPI reads the alerts from the alert API (spec.alertApi).
	AlertsFromAlertAPI = "AlertAPI"
	// AlertsFromManagementAPI reads the alerts of the watch's service from
	// the management API, with its key.
	AlertsFromManagementAPI = "ManagementAPI"
)

// AlertSelector picks alerts without naming each one. An alert matches
// when it satisfies every filter given: all, or its name matching name and
// it carrying every tag of tags.
//
// +kubebuilder:validation:XValidation:rule="(has(self.all) && self.all) || has(self.name) || (has(self.tags) && size(self.tags) > 0)",message="alertSelector needs all: true, a name or tags"
// +kubebuilder:validation:XValidation:rule="!has(self.all) || !self.all || (!has(self.name) && !has(self.tags))",message="alertSelector.all selects every alert of the service: leave out name and tags"
type AlertSelector struct {
	// all selects every alert of the service. Only with alertsFrom:
	// ManagementAPI, whose alerts are the service's own.
	// +optional
	All bool `json:"all,omitempty"`

	// name is a pattern the alert's name must match, whole: * matches any
	// run of characters, ? any one character, anything else itself
	// (case-sensitive), such as "prod-*" or "*latency*". The name matched
	// is the alert's displayName when the cloud sends a non-empty one, else
	// its name (status shows both, under the cloud's names). Matching takes
	// time linear in the name; a name longer than 4 KiB matches no pattern
	// (name such an alert in alertIds, or select it by tags).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name,omitempty"`

	// tags the alert must all carry (it may carry others), each as the
	// cloud spells it (case-sensitive); at most 16, each of at most 64
	// characters, the most of a tag status keeps.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=64
	Tags []string `json:"tags,omitempty"`
}

// ManagementAPISpec locates the management API and its credentials: a
// Secret of the watch's namespace (secretRef) or a ClusterCloudAccount
// (accountRef), exactly one of them.
//
// +kubebuilder:validation:XValidation:rule="has(self.secretRef) != has(self.accountRef)",message="set exactly one of spec.managementApi.secretRef and spec.managementApi.accountRef"
// +kubebuilder:validation:XValidation:rule="!has(self.accountRef) || !has(self.url) || size(self.url) == 0",message="spec.managementApi.url comes from the account when accountRef is set",fieldPath=".url"
type ManagementAPISpec struct {
	// url is the base URL of the management API, such as
	// https://api.example.com. When empty, the manager's
	// --management-api-url flag is used.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHost() != ''",message="url must be an absolute http:// or https:// URL"
	URL string `json:"url,omitempty"`

	// secretRef names a Secret in the ServiceWatch's own namespace with the
	// keys `keyId` and `keySecret` (an API key of the organization).
	// +optional
	SecretRef SecretReference `json:"secretRef,omitzero"`

	// accountRef names a ClusterCloudAccount whose key the watch uses, if
	// the account's conditions allow the watch's namespace, organization
	// and service; the account's URL applies.
	// +optional
	AccountRef *AccountRef `json:"accountRef,omitempty"`
}

// AlertAPISpec locates the alert API and its credentials.
type AlertAPISpec struct {
	// url is the base URL of the alert API, such as
	// https://alerts.example.com. When empty, the manager's --alert-api-url
	// flag is used.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHost() != ''",message="url must be an absolute http:// or https:// URL"
	URL string `json:"url,omitempty"`

	// secretRef names a Secret in the ServiceWatch's own namespace with the
	// key `token` (a bearer token of the alert API).
	// +required
	SecretRef SecretReference `json:"secretRef"`
}

// SecretReference names a Secret in the same namespace as the object that
// holds the reference. Secrets in other namespaces are never read.
type SecretReference struct {
	// name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// ServiceWatchStatus is what the operator last read from the cloud.
type ServiceWatchStatus struct {
	// observedGeneration is the metadata.generation the status was last
	// computed for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// lastSyncTime is when the last sync that reached the cloud ended,
	// whether it succeeded or not.
	// +optional
	LastSyncTime *metav1.Time `json:"lastSyncTime,omitempty"`

	// lastHandledRequestedAt echoes the value of the
	// servicewatch.io/requested-at annotation that the operator last acted on.
	// A value longer than 256 bytes is echoed as "sha256:" and the hex SHA-256
	// of the value, so that any value is accepted and the status stays small.
	// +optional
	// +kubebuilder:validation:MaxLength=320
	LastHandledRequestedAt string `json:"lastHandledRequestedAt,omitempty"`

	// retryNotBefore is set while the cloud has asked to wait (a 429 or a
	// 503 with Retry-After): no sync of this watch calls the cloud before
	// it, also after a restart of the operator or a change of leader.
	// +optional
	RetryNotBefore *metav1.Time `json:"retryNotBefore,omitempty"`

	// heldBudgets name the rate budgets a 429 held until retryNotBefore,
	// each by the label the operator's metrics give it (budget): 12 hex
	// digits of a digest of the API, its URL and the credential, never the
	// credential. After a restart the operator holds a budget again only
	// while this status is of the watch's current generation and the watch
	// still calls with that budget: a wait the cloud asked of one host and
	// key is never put on another.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:Pattern=`^[0-9a-f]{12}$`
	HeldBudgets []string `json:"heldBudgets,omitempty"`

	// summary counts what the cloud reported, for printer columns and
	// dashboards. Counts are of everything the cloud returned, also when the
	// lists below were truncated.
	// +optional
	Summary *Summary `json:"summary,omitempty"`

	// conditions describe the state of each part of the sync (PipesSynced,
	// ReversePrivateEndpointsSynced, AlertsSynced), overall readiness (Ready),
	// and the kstatus conditions Reconciling and Stalled.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// pipes are the data-ingestion pipes of the service, ordered by id.
	// When they do not fit the status size limit, the pipes that need
	// attention (a failing state, see state) are kept first, then the
	// others in id order; big pipes are cut inside, then pipes are cut to
	// their identity (id, name, state, since, sourceKind: with an omitted record
	// when those fit, else alone) before any pipe is left out. What is kept
	// is still ordered by id; summary counts every pipe, and the
	// StatusTruncated condition says how many were left out.
	// +optional
	// +listType=atomic
	Pipes []Pipe `json:"pipes,omitempty"`

	// reversePrivateEndpoints are the reverse private endpoints of the
	// service, ordered by id. When they do not fit, those that need
	// attention (a failing status) are kept first, as for pipes.
	// +optional
	// +listType=atomic
	ReversePrivateEndpoints []ReversePrivateEndpoint `json:"reversePrivateEndpoints,omitempty"`

	// alerts has one entry per spec.alertIds entry, in the same order, then
	// one per alert spec.alertSelector matched, ordered by id; selectedBy
	// says which. When they do not fit, the alerts that need attention
	// (firing, failing to evaluate, unreadable) are kept first, as for
	// pipes, and what is kept keeps this order.
	// +optional
	// +listType=atomic
	Alerts []AlertStatus `json:"alerts,omitempty"`

	// alertsReadBy says how the alerts' host was last read: List (a list
	// of every alert, in pages, shared by the watches on the same host and
	// credential) or OneByOne (one call per alert ID, on a host that
	// answers the list route with 404 or 405 not in the API's own JSON;
	// the operator tries the list again now and then).
	// +optional
	AlertsReadBy string `json:"alertsReadBy,omitempty"`

	// leftOutSince keeps the since of items that pipes,
	// reversePrivateEndpoints and alerts left out to stay under the size
	// limit, so that an item that comes back into its list with the state
	// it had keeps its since, and a left-out item is never told as gone or
	// changed. One entry per item, `<kind>:<digest>:<unix seconds>`: kind p
	// (pipe), e (endpoint) or a (alert), digest 16 hex digits of a SHA-256
	// of the item's id and state (status keeps no id it left out). It takes
	// at most a 32nd of the size limit and 1024 entries, the items that need
	// attention first, then in id order; a left-out item beyond them, or
	// beyond the items the state metrics keep (--item-metrics-max-bytes),
	// gets a new since when it comes back. Absent when nothing was left out.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1024
	// +kubebuilder:validation:items:MaxLength=48
	LeftOutSince []string `json:"leftOutSince,omitempty"`
}

// Values of status.alertsReadBy.
const (
	// AlertsReadByList: the alerts were picked from the host's list.
	AlertsReadByList = "List"
	// AlertsReadOneByOne: each alert ID was fetched on its own.
	AlertsReadOneByOne = "OneByOne"
)

// Summary counts what the cloud reported.
type Summary struct {
	// pipes is the number of pipes the service has.
	Pipes int32 `json:"pipes"`

	// pipesByState counts pipes by their state, as the cloud spells it.
	// +optional
	PipesByState map[string]int32 `json:"pipesByState,omitempty"`

	// reversePrivateEndpoints is the number of reverse private endpoints the
	// service has.
	ReversePrivateEndpoints int32 `json:"reversePrivateEndpoints"`

	// alerts is the number of alerts whose last fetch succeeded.
	Alerts int32 `json:"alerts"`
}

// ServiceWatch follows the data-ingestion pipes, reverse private endpoints and
// alerts of one data-warehouse service and reports them in its status.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sw,categories=servicewatch
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Pipes",type=integer,JSONPath=`.status.summary.pipes`
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.summary.pipesByState.Failed`,description="Pipes in state Failed"
// +kubebuilder:printcolumn:name="Endpoints",type=integer,JSONPath=`.status.summary.reversePrivateEndpoints`
// +kubebuilder:printcolumn:name="Alerts",type=integer,JSONPath=`.status.summary.alerts`
// +kubebuilder:printcolumn:name="Last Sync",type=date,JSONPath=`.status.lastSyncTime`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Service",type=string,JSONPath=`.spec.serviceId`,priority=1
// +kubebuilder:printcolumn:name="Interval",type=string,JSONPath=`.spec.interval`,priority=1
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
type ServiceWatch struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says what to watch and how.
	// +required
	Spec ServiceWatchSpec `json:"spec"`

	// status is what the operator last read from the cloud. Until the
	// operator first writes it, observedGeneration reads -1, so that kstatus
	// (and Flux and Argo CD with it) sees a new object as in progress rather
	// than current.
	// +optional
	// +kubebuilder:default:={"observedGeneration":-1}
	Status ServiceWatchStatus `json:"status,omitempty"`
}

// ServiceWatchList is a list of ServiceWatch objects.
//
// +kubebuilder:object:root=true
type ServiceWatchList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ServiceWatch objects.
	Items []ServiceWatch `json:"items"`
}
