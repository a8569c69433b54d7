package v1alpha1

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
	// use it.
	// +optional
	AlertAPI *AccountAPISpec `json:"alertApi,omitempty"`

	// conditions say who may use the account: a watch may when at least one
	// condition allows its namespace, organization and service. No
	// conditions: nobody may (an account is never open to every namespace
	// by omission).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	Conditions []AccountCondition `json:"conditions,omitempty"`
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
}

// AccountBudget is a key's rate budget as the manager sees it.
type AccountBudget struct {
	// allowance is the calls per second the manager allows itself with the
	// key, as a decimal string ("1" for 10 calls per 10 s); "0": unlimited.
	Allowance string `json:"allowance"`
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
