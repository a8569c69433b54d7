package v1beta1

// Condition types. Ready, Reconciling and Stalled follow kstatus so that Flux
// and Argo CD health checks understand a ServiceWatch without custom code.
const (
	// ConditionPipesSynced is True when the last pipes call succeeded.
	ConditionPipesSynced = "PipesSynced"
	// ConditionReversePrivateEndpointsSynced is True when the last reverse
	// private endpoints call succeeded.
	ConditionReversePrivateEndpointsSynced = "ReversePrivateEndpointsSynced"
	// ConditionAlertsSynced is True when every alert's last fetch succeeded.
	ConditionAlertsSynced = "AlertsSynced"
	// ConditionReady is True when every part is synced for the current
	// generation.
	ConditionReady = "Ready"
	// ConditionReconciling is present, True, only while a new generation or a
	// requested sync is being worked on.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is present, True, only when retrying cannot help until
	// the user acts.
	ConditionStalled = "Stalled"
	// ConditionStatusTruncated is present, True, when status lists were cut
	// to keep the object under the API server's size limit.
	ConditionStatusTruncated = "StatusTruncated"
	// ConditionIntervalMet is present, False, while the watches of this
	// namespace ask for more calls than the namespace's share of an API
	// key's or token's rate budget allows, so that this watch syncs less
	// often than spec.interval; the message gives the effective interval,
	// the share and the need. The watch stays Ready.
	ConditionIntervalMet = "IntervalMet"
)

// Condition reasons. The ones that only the user can fix (SecretNotFound,
// SecretKeyMissing, Unauthorized, Forbidden, EndpointNotFound, BadRequest,
// ConfigurationError, URLNotAllowed, AddressNotAllowed, AccountNotFound,
// AccountNotAllowed, ListNotServed) also set Stalled.
const (
	// ReasonSynced: the part's last sync succeeded.
	ReasonSynced = "Synced"
	// ReasonSecretNotFound: a referenced Secret does not exist in the
	// ServiceWatch's namespace.
	ReasonSecretNotFound = "SecretNotFound"
	// ReasonSecretKeyMissing: a referenced Secret lacks a required key, or
	// its value is empty.
	ReasonSecretKeyMissing = "SecretKeyMissing"
	// ReasonSecretUnreadable: the API server did not return a referenced
	// Secret for another reason (retried).
	ReasonSecretUnreadable = "SecretUnreadable"
	// ReasonUnauthorized: the cloud answered 401; the credential is wrong.
	ReasonUnauthorized = "Unauthorized"
	// ReasonForbidden: the cloud answered 403; the credential may not read
	// this organization, service or alert.
	ReasonForbidden = "Forbidden"
	// ReasonNotFound: the cloud answered 404 in the API's own words (its
	// JSON error body); unknown organization, service or alert.
	ReasonNotFound = "NotFound"
	// ReasonEndpointNotFound: the cloud answered 404 with a body that is not
	// the API's (an HTML page such as "Cannot GET /v1/...", or plain text):
	// the URL reaches a web server, but no such route of the API. The base
	// URL or its path prefix is wrong (spec.managementApi.url,
	// spec.alertApi.url or the manager's flags); Stalled.
	ReasonEndpointNotFound = "EndpointNotFound"
	// ReasonBadRequest: the cloud answered 400, rejecting the request as
	// malformed, such as an alert ID that is not one ("Params validation
	// failed: id: Invalid ObjectId"). Retrying the same request cannot help;
	// Stalled, with the cloud's words in the message.
	ReasonBadRequest = "BadRequest"
	// ReasonRateLimited: the cloud answered 429, or the operator held a call
	// back until the wait the cloud asked for was over.
	ReasonRateLimited = "RateLimited"
	// ReasonServerError: the cloud answered 5xx.
	ReasonServerError = "ServerError"
	// ReasonInvalidResponse: the cloud's answer could not be used (bad JSON,
	// wrong shape or content type, too large).
	ReasonInvalidResponse = "InvalidResponse"
	// ReasonDecodeBudgetExceeded: the cloud's list answer would cost far more
	// work to decode than any real answer does (millions of empty items,
	// objects nested hundreds deep): the operator stopped decoding it, and
	// the part keeps the data it had. Retried at the interval, not on a
	// backoff: the same answer fails again.
	ReasonDecodeBudgetExceeded = "DecodeBudgetExceeded"
	// ReasonUnreachable: no answer (DNS, connection, TLS, timeout).
	ReasonUnreachable = "Unreachable"
	// ReasonServiceIdle: the cloud answered that the service is idle (a 424
	// saying so). The data already in status is kept; this is not Stalled,
	// since the service may run again by itself: the part is retried at the
	// interval.
	ReasonServiceIdle = "ServiceIdle"
	// ReasonServiceNotRunning: the cloud answered 424 saying the service is
	// in another state than running or idle, such as stopped or awaking; the
	// message names the state. As for ServiceIdle, the data already in
	// status is kept, and this is not Stalled (the service's owner may start
	// it at any time): the part is retried at the interval.
	ReasonServiceNotRunning = "ServiceNotRunning"
	// ReasonUnexpectedStatus: any other HTTP status, such as a redirect.
	ReasonUnexpectedStatus = "UnexpectedStatus"
	// ReasonConfigurationError: the call cannot be made as configured (no
	// URL, an invalid URL or identifier).
	ReasonConfigurationError = "ConfigurationError"
	// ReasonURLNotAllowed: the API URL (spec.managementApi.url,
	// spec.alertApi.url, or the manager's fallback when they are empty) is
	// not on the list the cluster admin allows the manager to call
	// (--allowed-api-urls). Neither the referenced Secret is read nor the
	// cloud called.
	ReasonURLNotAllowed = "URLNotAllowed"
	// ReasonAddressNotAllowed: the API host resolved only to addresses the
	// manager refuses to connect to (--deny-local-addresses): loopback,
	// unspecified, link-local, a cloud metadata service. Nothing was sent.
	ReasonAddressNotAllowed = "AddressNotAllowed"
	// ReasonAccountNotFound: spec.managementApi.accountRef names a
	// ClusterCloudAccount that does not exist (or the manager serves none:
	// its --account-namespace is empty). Neither a Secret is read nor the
	// cloud called; the watch syncs as soon as the account is created.
	ReasonAccountNotFound = "AccountNotFound"
	// ReasonAccountNotAllowed: the ClusterCloudAccount the watch refers to
	// does not allow its namespace, organization or service; the message
	// says which of the account's conditions failed and why. Neither a
	// Secret is read nor the cloud called; the watch syncs as soon as the
	// account (or the namespace's labels) allow it.
	ReasonAccountNotAllowed = "AccountNotAllowed"
	// ReasonAccountValid: (a ClusterCloudAccount's Ready) every selector and
	// pattern of its conditions is valid.
	ReasonAccountValid = "AccountValid"
	// ReasonInvalidConditions: (a ClusterCloudAccount's Ready) a selector or
	// pattern of its conditions is invalid; that condition selects no
	// namespace, the others still do.
	ReasonInvalidConditions = "InvalidConditions"
	// ReasonListNotServed: spec.alertSelector is set, and the alerts' host
	// answers the alert list route with 404 or 405 (an older alert API):
	// only a list tells which alerts match. Name the alerts in
	// spec.alertIds, which such a host serves one by one, or upgrade the
	// host; the operator tries the list again now and then. Stalled.
	ReasonListNotServed = "ListNotServed"
	// ReasonSuspended: spec.suspend is true.
	ReasonSuspended = "Suspended"
	// ReasonProgressing: a new generation or a requested sync is being worked
	// on (Reconciling).
	ReasonProgressing = "Progressing"
	// ReasonTooLarge: status lists were truncated (StatusTruncated).
	ReasonTooLarge = "TooLarge"
	// ReasonBudgetExceeded: the watches of a namespace ask for more than
	// its share of a key's or token's rate budget (IntervalMet).
	ReasonBudgetExceeded = "BudgetExceeded"
)
