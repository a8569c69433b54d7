package v1alpha1

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
	// VPC_ENDPOINT_SERVICE).
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
	// status of the endpoint as the cloud spells it (for example Ready).
	// +optional
	Status *string `json:"status,omitempty"`
}

// AlertStatus is one alert named in spec.alertIds: its fields as the alert
// API last returned them, plus error while its latest fetch fails.
type AlertStatus struct {
	// id is the alert identifier as given in spec.alertIds.
	// +required
	ID string `json:"id"`
	// error says why the latest fetch of this alert failed; absent when it
	// succeeded. The other fields then keep the last successful fetch.
	// +optional
	Error string `json:"error,omitempty"`
	// name of the alert.
	// +optional
	Name *string `json:"name,omitempty"`
	// message is the text sent with the alert.
	// +optional
	Message *string `json:"message,omitempty"`
	// threshold of the alert; a decimal kept exactly as the cloud sent it.
	// +optional
	Threshold *Decimal `json:"threshold,omitempty"`
	// interval at which the alert is evaluated, such as 5m.
	// +optional
	Interval *string `json:"interval,omitempty"`
	// thresholdType says how the threshold is compared (for example above).
	// +optional
	ThresholdType *string `json:"thresholdType,omitempty"`
	// source of the alert (for example tile).
	// +optional
	Source *string `json:"source,omitempty"`
	// state of the alert as the cloud spells it (for example active).
	// +optional
	State *string `json:"state,omitempty"`
	// channel is where the alert is sent.
	// +optional
	Channel *AlertChannel `json:"channel,omitempty"`
	// team that owns the alert.
	// +optional
	Team *string `json:"team,omitempty"`
	// tileId is the dashboard tile the alert watches.
	// +optional
	TileID *string `json:"tileId,omitempty"`
	// dashboard is the dashboard the alert belongs to.
	// +optional
	Dashboard *string `json:"dashboard,omitempty"`
	// createdAt is when the alert was created (ISO 8601, as sent).
	// +optional
	CreatedAt *string `json:"createdAt,omitempty"`
	// updatedAt is when the alert last changed (ISO 8601, as sent).
	// +optional
	UpdatedAt *string `json:"updatedAt,omitempty"`
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
