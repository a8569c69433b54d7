package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AccountRef names a ClusterCloudAccount whose key a ServiceWatch uses
// instead of a Secret of its own namespace.
type AccountRef struct {
	// name of the ClusterCloudAccount.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// ClusterCloudAccountSpec is one organization key of the cloud, held by the
// platform team, and who may use it.
type ClusterCloudAccountSpec struct {
	// managementApi says where the management API is and which Secret, in
	// the operator's own namespace, holds its key.
	// +required
	ManagementAPI AccountAPISpec `json:"managementApi"`

	// alertApi says where the alert API is and which Secret, in the
	// operator's own namespace, holds its token (the key `token`). Watches
	// that use the account and name alerts without an alertApi of their own
	// use it, where its scope allows them.
	// +optional
	AlertAPI *AccountAlertAPISpec `json:"alertApi,omitempty"`

	// conditions say who may use the account: a watch may when at least one
	// condition allows its namespace, organization and service. No
	// conditions: nobody may (an account is never open to every namespace
	// by omission).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Conditions []AccountCondition `json:"conditions,omitempty"`

	// reservedPercent is the percentage of the management key's rate budget
	// left to the key's callers outside the cluster (a Terraform run, a
	// scraper): the manager keeps the calls of every watch that uses the
	// account under the rest (at least one call per window of the cloud),
	// and a 429 it gets while under counts as cause="others". Unset: the
	// manager's --reserved-budget-share applies. At most 50: one sync asks
	// the key for up to three calls at once (pipes, endpoints, the alerts'
	// list), which what is left of the cloud's 10 calls per 10 s must still
	// admit.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=50
	ReservedPercent *int32 `json:"reservedPercent,omitempty"`

	// namespaceWeights weigh the namespaces that use the account when their
	// watches together need more than the key's budget: each gets a share
	// in proportion to its weight, and what an idle namespace leaves goes
	// to the others. A namespace not listed weighs 1.
	// +optional
	// +listType=map
	// +listMapKey=namespace
	// +kubebuilder:validation:MaxItems=256
	NamespaceWeights []NamespaceWeight `json:"namespaceWeights,omitempty"`
}

// NamespaceWeight is the weight of one namespace's watches on an account's
// key.
type NamespaceWeight struct {
	// namespace is the namespace's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// weight is the namespace's weight, from 1 to 100; others weigh 1.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Weight int32 `json:"weight"`
}

// AccountAPISpec locates one API of an account and its credential.
type AccountAPISpec struct {
	// url is the base URL of the API. When empty, the manager's
	// --management-api-url or --alert-api-url flag is used.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHost() != ''",message="url must be an absolute http:// or https:// URL"
	URL string `json:"url,omitempty"`

	// secretRef names a Secret in the operator's own namespace (never a
	// tenant's): for the management API with the keys `keyId` and
	// `keySecret`, for the alert API with the key `token`.
	// +required
	SecretRef SecretReference `json:"secretRef"`
}

// AccountAlertAPISpec locates an account's alert API and its token, and says
// which of the watches the account allows may be given the token.
type AccountAlertAPISpec struct {
	AccountAPISpec `json:",inline"`

	// scope says which watches get the alert token. The alert API answers
	// with any alert the token reads, whatever the service: a condition
	// that names organizationIds or serviceIds cannot be enforced on it.
	// Restricted (the default): the token is given only to a watch that a
	// condition naming neither organizationIds nor serviceIds allows; a
	// watch allowed only for some organizations or services is refused it
	// (AccountNotAllowed; it may read its alerts with alertsFrom:
	// ManagementAPI, which lists its own service's alerts with the
	// management key). Unrestricted: every watch the conditions allow gets
	// the token, so every namespace allowed to use this account can read
	// every alert the token reads, of any organization or service.
	// +optional
	// +kubebuilder:validation:Enum=Restricted;Unrestricted
	Scope string `json:"scope,omitempty"`
}

// The scopes of an account's alert token (AccountAlertAPISpec.Scope).
const (
	// AlertTokenRestricted gives the alert token only to watches that a
	// condition allows for every organization and service.
	AlertTokenRestricted = "Restricted"
	// AlertTokenUnrestricted gives the alert token to every watch the
	// conditions allow: each of their namespaces can read every alert the
	// token reads.
	AlertTokenUnrestricted = "Unrestricted"
)

// AccountCondition allows the namespaces it selects to use the account, for
// the organizations and services it names. A namespace is selected when it
// matches any of namespaces, namespaceSelector or namespaceRegexes.
type AccountCondition struct {
	// namespaces lists namespaces by name.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	Namespaces []string `json:"namespaces,omitempty"`

	// namespaceSelector selects namespaces by label. Only the label
	// kubernetes.io/metadata.name is set by the API server; every other
	// label of a namespace may be set by whoever may edit the namespace,
	// often its tenant: select on such labels only where tenants cannot
	// label their own namespaces.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// namespaceRegexes select namespaces whose whole name matches one of
	// these RE2 patterns (anchored: "team-.*" does not match "x-team-a").
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=256
	NamespaceRegexes []string `json:"namespaceRegexes,omitempty"`

	// organizationIds the selected namespaces may watch; empty: any.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=36
	OrganizationIDs []string `json:"organizationIds,omitempty"`

	// serviceIds the selected namespaces may watch; empty: any.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=36
	ServiceIDs []string `json:"serviceIds,omitempty"`
}

// ClusterCloudAccountStatus is who uses the account and its key's budget as
// the manager sees it.
type ClusterCloudAccountStatus struct {
	// observedGeneration is the metadata.generation the status was last
	// computed for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready is True when the account's conditions are valid.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// watches is the number of ServiceWatches that refer to the account,
	// allowed or not.
	// +optional
	Watches int32 `json:"watches"`

	// namespaces lists the namespaces whose watches refer to the account,
	// by name, at most 100 (namespaceCount counts them all).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	Namespaces []AccountNamespaceUse `json:"namespaces,omitempty"`

	// namespaceCount is the number of namespaces whose watches refer to the
	// account.
	// +optional
	NamespaceCount int32 `json:"namespaceCount"`

	// budget is the management key's rate budget as the manager sees it,
	// once a watch has used the key.
	// +optional
	Budget *AccountBudget `json:"budget,omitempty"`
}

// AccountNamespaceUse is one namespace's use of an account.
type AccountNamespaceUse struct {
	// name of the namespace.
	Name string `json:"name"`
	// watches is the number of its ServiceWatches that refer to the account.
	Watches int32 `json:"watches"`
	// allowed is how many of them the account's conditions allow.
	Allowed int32 `json:"allowed"`
	// weight is the namespace's weight on the key (spec.namespaceWeights,
	// else 1).
	// +optional
	Weight int32 `json:"weight,omitempty"`
	// sharePercent is the namespace's share, in percent, of what the
	// manager may use of the key while every namespace with allowed watches
	// needs more than its share; an idle namespace's share goes to the
	// others.
	// +optional
	SharePercent int32 `json:"sharePercent,omitempty"`
}

// AccountBudget is a key's rate budget as the manager sees it.
type AccountBudget struct {
	// allowance is the calls per second the manager allows itself with the
	// key, as a decimal string ("1" for 10 calls per 10 s); "0": unlimited.
	Allowance string `json:"allowance"`
	// reservedPercent is the percentage of the key's budget the manager
	// leaves to callers outside the cluster (spec.reservedPercent, else
	// the manager's --reserved-budget-share).
	// +optional
	ReservedPercent int32 `json:"reservedPercent,omitempty"`
	// heldUntil is set while the cloud has asked to wait (a 429): no call
	// with the key goes out before it.
	// +optional
	HeldUntil *metav1.Time `json:"heldUntil,omitempty"`
}

// ClusterCloudAccount is one organization key of the cloud, kept by the
// platform team in the operator's namespace, and the namespaces that may use
// it: ServiceWatches refer to it by name instead of holding the key.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=cca
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Namespaces",type=integer,JSONPath=`.status.namespaceCount`
// +kubebuilder:printcolumn:name="Watches",type=integer,JSONPath=`.status.watches`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.managementApi.url`,priority=1
type ClusterCloudAccount struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the key and who may use it.
	// +required
	Spec ClusterCloudAccountSpec `json:"spec"`

	// status is who uses the account, and its key's budget.
	// +optional
	Status ClusterCloudAccountStatus `json:"status,omitempty"`
}

// ClusterCloudAccountList is a list of ClusterCloudAccount objects.
//
// +kubebuilder:object:root=true
type ClusterCloudAccountList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ClusterCloudAccount objects.
	Items []ClusterCloudAccount `json:"items"`
}
