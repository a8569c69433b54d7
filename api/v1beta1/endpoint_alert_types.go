package v1beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ReversePrivateEndpoint is one reverse private endpoint of the service, a
// private-network endpoint that pipes use to reach their sources. Field names
// are the management API's own.
type ReversePrivateEndpoint struct {
	// id is the endpoint's UUID.
	// +optional
	ID *string `json:"id,omitempty"`
	// serviceId is the UUID of the service that owns the endpoint.
	// +optional
	ServiceID *string `json:"serviceId,omitempty"`
	// description of the endpoint.
	// +optional
	Description *string `json:"description,omitempty"`
	// type of endpoint, as the cloud spells it (for example
	// VPC_ENDPOINT_SERVICE, VPC_RESOURCE, MSK_MULTI_VPC or
	// GCP_PSC_SERVICE_ATTACHMENT). Values the operator does not know are kept
	// as sent.
	// +optional
	Type *string `json:"type,omitempty"`
	// vpcEndpointServiceName is the name of the endpoint service.
	// +optional
	VPCEndpointServiceName *string `json:"vpcEndpointServiceName,omitempty"`
	// vpcResourceConfigurationId is the resource configuration the endpoint
	// uses.
	// +optional
	VPCResourceConfigurationID *string `json:"vpcResourceConfigurationId,omitempty"`
	// vpcResourceShareArn identifies the resource share.
	// +optional
	VPCResourceShareArn *string `json:"vpcResourceShareArn,omitempty"`
	// mskClusterArn identifies the streaming cluster reached.
	// +optional
	MSKClusterArn *string `json:"mskClusterArn,omitempty"`
	// mskAuthentication is how the streaming cluster is authenticated to
	// (for example SASL_IAM).
	// +optional
	MSKAuthentication *string `json:"mskAuthentication,omitempty"`
	// endpointId is the cloud provider's identifier of the endpoint.
	// +optional
	EndpointID *string `json:"endpointId,omitempty"`
	// dnsNames are the endpoint's DNS names.
	// +optional
	// +listType=atomic
	DNSNames []string `json:"dnsNames,omitzero"`
	// privateDnsNames are the endpoint's private DNS names.
	// +optional
	// +listType=atomic
	PrivateDNSNames []string `json:"privateDnsNames,omitzero"`
	// status of the endpoint as the cloud spells it (for example Ready,
	// Provisioning, PendingAcceptance, Rejected, Failed, Expired). Values
	// the operator does not know are kept as sent. An endpoint Failed,
	// Rejected or Expired needs attention: it is listed first when the list
	// does not fit in status.
	// +optional
	Status *string `json:"status,omitempty"`
	// since is when the endpoint's status was first seen with its current
	// value, by the operator's clock at the end of the sync that saw it
	// (whole seconds). It is kept across syncs, restarts of the operator,
	// truncation of the list (an item cut to its identity keeps it; an item
	// left out keeps it in status.leftOutSince) and upgrades; a status that
	// changes sets it anew, and so does a endpoint that leaves the cloud's list
	// and comes back. Absent on an item without an id, and until the first
	// sync that reads the item after an upgrade from a version without it.
	// +optional
	Since *metav1.Time `json:"since,omitempty"`
	// gcpServiceAttachment is the service attachment a
	// GCP_PSC_SERVICE_ATTACHMENT endpoint connects to.
	// +optional
	GCPServiceAttachment *string `json:"gcpServiceAttachment,omitempty"`
	// customPrivateDnsMappings are private DNS names the endpoint answers
	// for, such as one per broker. At most 32 are kept, in the order the
	// cloud sent them; otherFields says when more were sent.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	CustomPrivateDNSMappings []PrivateDNSMapping `json:"customPrivateDnsMappings,omitzero"`
	// otherFields is set by the operator: what the cloud sent for this
	// endpoint that has no typed field above, and values of known fields
	// that could not be read as their type, as `path: value` entries. Its
	// form, bounds and credential rules are those of pipes[].otherFields.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=17
	// +kubebuilder:validation:items:MaxLength=256
	OtherFields []string `json:"otherFields,omitempty"`

	// omitted is set by the operator when the item is too large for the
	// status: what it leaves out of this item, so that the other items still
	// fit. Each key is the JSON path of a list in the item (lists within
	// lists read path[].member), its value how many entries of it status
	// leaves out: every list is cut to the same number of first entries.
	// When only the item's identity fits, each other member is left out
	// whole and counts 1 under its name. Absent when nothing was left out.
	// +optional
	Omitted map[string]int32 `json:"omitted,omitempty"`
}

// PrivateDNSMapping is one private DNS name of a reverse private endpoint.
type PrivateDNSMapping struct {
	// privateDnsName is the private DNS name, such as
	// broker-1.example.internal.
	// +optional
	PrivateDNSName *string `json:"privateDnsName,omitempty"`
}

// AlertStatus is one alert named in spec.alertIds or matched by
// spec.alertSelector: its fields as the cloud last returned them, plus
// error while its latest fetch fails.
//
// The alert API has two shapes. Servers since early 2026 name the team, the
// dashboard and the saved search teamId, dashboardId and savedSearchId, and
// send thresholdMax, channels, executionErrors, note, numConsecutiveWindows
// and the schedule fields; older servers send team, dashboard and
// savedSearch. Status shows one field for each under the older, shorter name
// (team, dashboard, savedSearch), whichever name the server used. When a
// server sends both names, the ...Id one wins: it is always the identifier,
// while the old name may carry the referenced document itself.
//
// A field of a type the operator cannot use (a number that is not a number,
// an object where a string belongs) is left out of the entry; the other
// fields stay. Numbers are read from JSON numbers or numeric strings. The
// operator's own alert API token reads "<redacted>" wherever a string of
// the alert echoes it, as sent or encoded (base64, JSON or URL escapes).
type AlertStatus struct {
	// id is the alert identifier as given in spec.alertIds, or as the
	// cloud listed it for an alert spec.alertSelector matched.
	// +required
	ID string `json:"id"`
	// selectedBy says why the alert is followed: ID (named in
	// spec.alertIds) or Selector (matched spec.alertSelector).
	// +optional
	SelectedBy string `json:"selectedBy,omitempty"`
	// error says why the latest fetch of this alert failed; absent when it
	// succeeded. The other fields then keep the last successful fetch.
	// +optional
	Error string `json:"error,omitempty"`
	// name of the alert as the cloud sends it; absent when the cloud sends
	// none or null (the newest servers may name an alert by displayName
	// alone). Where one label names the alert for a person (the
	// servicewatch_alert_info metric's alert_name, the NAME column of
	// kubectl servicewatch get alerts), it is name, or displayName when
	// name is absent or empty.
	// +optional
	Name *string `json:"name,omitempty"`
	// displayName is the name the newest alert API servers show people,
	// beside or instead of name, as the cloud sends it; absent when the
	// cloud sends none or null. spec.alertSelector.name matches it when it
	// is not empty, else name.
	// +optional
	DisplayName *string `json:"displayName,omitempty"`
	// tags the cloud gives the alert (on the newest servers): at most 20,
	// in the order sent, each cut to 64 characters, with the operator's
	// credentials redacted.
	// +optional
	// +listType=atomic
	Tags []string `json:"tags,omitzero"`
	// message is the text sent with the alert.
	// +optional
	Message *string `json:"message,omitempty"`
	// threshold of the alert; a decimal kept exactly as the cloud sent it.
	// For the threshold types between and not_between it is the lower bound.
	// +optional
	Threshold *Decimal `json:"threshold,omitempty"`
	// thresholdMax is the upper bound of the threshold types between and
	// not_between; a decimal kept exactly as the cloud sent it.
	// +optional
	ThresholdMax *Decimal `json:"thresholdMax,omitempty"`
	// interval at which the alert is evaluated, such as 5m.
	// +optional
	Interval *string `json:"interval,omitempty"`
	// thresholdType says how the value is compared with the threshold, as
	// the cloud spells it: above, below, above_exclusive, below_or_equal,
	// equal, not_equal, between or not_between have been seen.
	// +optional
	ThresholdType *string `json:"thresholdType,omitempty"`
	// source of the alert (for example tile or saved_search).
	// +optional
	Source *string `json:"source,omitempty"`
	// state of the alert as the cloud spells it: ALERT (firing), OK,
	// INSUFFICIENT_DATA, DISABLED and PENDING have been seen. An alert that
	// fires, has executionErrors or an error needs attention: it is listed
	// first when the list does not fit in status.
	// +optional
	State *string `json:"state,omitempty"`
	// since is when the alert's state was first seen with its current
	// value, by the operator's clock at the end of the sync that saw it
	// (whole seconds). It is kept across syncs, restarts of the operator,
	// truncation of the list (an item cut to its identity keeps it; an item
	// left out keeps it in status.leftOutSince) and upgrades; a state that
	// changes sets it anew, and so does a alert that leaves the cloud's list
	// and comes back. Absent on an item without an id, and until the first
	// sync that reads the item after an upgrade from a version without it.
	// +optional
	Since *metav1.Time `json:"since,omitempty"`
	// channel is where the alert is sent (the first of channels on servers
	// that send both).
	// +optional
	Channel *AlertChannel `json:"channel,omitempty"`
	// channels are every destination of the alert, as newer servers send
	// them; at most 10 are kept, in the order sent.
	// +optional
	// +listType=atomic
	Channels []AlertChannel `json:"channels,omitzero"`
	// team that owns the alert: teamId on newer servers, team on older
	// ones.
	// +optional
	Team *string `json:"team,omitempty"`
	// tileId is the dashboard tile the alert watches.
	// +optional
	TileID *string `json:"tileId,omitempty"`
	// dashboard is the dashboard the alert belongs to: dashboardId on newer
	// servers, dashboard on older ones.
	// +optional
	Dashboard *string `json:"dashboard,omitempty"`
	// savedSearch is the saved search a saved-search alert watches:
	// savedSearchId on newer servers, savedSearch on older ones.
	// +optional
	SavedSearch *string `json:"savedSearch,omitempty"`
	// groupBy is the key a saved-search alert's results are grouped by.
	// +optional
	GroupBy *string `json:"groupBy,omitempty"`
	// numConsecutiveWindows is how many evaluation windows in a row must
	// cross the threshold before the alert fires.
	// +optional
	NumConsecutiveWindows *int64 `json:"numConsecutiveWindows,omitempty"`
	// scheduleOffsetMinutes shifts the alert's evaluation windows, in
	// minutes.
	// +optional
	ScheduleOffsetMinutes *int64 `json:"scheduleOffsetMinutes,omitempty"`
	// scheduleStartAt is when the alert's evaluation schedule starts (ISO
	// 8601, as sent).
	// +optional
	ScheduleStartAt *string `json:"scheduleStartAt,omitempty"`
	// silenced is present while the alert is silenced: its notifications are
	// not sent. The servicewatch_alert_silenced metric shows it.
	// +optional
	Silenced *AlertSilence `json:"silenced,omitempty"`
	// executionErrors are the alert's recent failures to evaluate or to
	// deliver its notifications, as the alert API reports them: the latest
	// 5, newest first, each message cut to 200 characters, with URLs
	// reduced to their host and the operator's credentials redacted. The
	// servicewatch_alert_execution_errors metric counts them.
	// +optional
	// +listType=atomic
	ExecutionErrors []AlertExecutionError `json:"executionErrors,omitzero"`
	// note is the alert's free-text note, cut to 1024 characters.
	// +optional
	Note *string `json:"note,omitempty"`
	// createdAt is when the alert was created (ISO 8601, as sent).
	// +optional
	CreatedAt *string `json:"createdAt,omitempty"`
	// updatedAt is when the alert last changed (ISO 8601, as sent).
	// +optional
	UpdatedAt *string `json:"updatedAt,omitempty"`
	// omitted: as pipes[].omitted, what status leaves out of this alert to
	// stay under its size limit.
	// +optional
	Omitted map[string]int32 `json:"omitted,omitempty"`
}

// AlertChannel is where an alert is sent.
type AlertChannel struct {
	// type of channel (for example webhook).
	// +optional
	Type *string `json:"type,omitempty"`
	// webhookId identifies the webhook of a webhook channel.
	// +optional
	WebhookID *string `json:"webhookId,omitempty"`
}

// AlertSilence says who silenced an alert and for how long.
type AlertSilence struct {
	// by identifies the user who silenced the alert.
	// +optional
	By *string `json:"by,omitempty"`
	// at is when the alert was silenced (ISO 8601, as sent).
	// +optional
	At *string `json:"at,omitempty"`
	// until is when the silence ends (ISO 8601, as sent).
	// +optional
	Until *string `json:"until,omitempty"`
}

// AlertExecutionError is one failure of an alert to evaluate or to deliver.
type AlertExecutionError struct {
	// timestamp of the failure (ISO 8601, as sent).
	// +optional
	Timestamp *string `json:"timestamp,omitempty"`
	// type of failure as the cloud spells it: QUERY_ERROR (the evaluation
	// failed), WEBHOOK_ERROR (a notification could not be delivered),
	// INVALID_ALERT and UNKNOWN have been seen.
	// +optional
	Type *string `json:"type,omitempty"`
	// message is the cloud's words, cut to 200 characters, with URLs reduced
	// to their host and the operator's credentials redacted.
	// +optional
	Message *string `json:"message,omitempty"`
}

// Values of status.alerts[].selectedBy.
const (
	// SelectedByID: the alert is named in spec.alertIds.
	SelectedByID = "ID"
	// SelectedBySelector: the alert matched spec.alertSelector.
	SelectedBySelector = "Selector"
)
