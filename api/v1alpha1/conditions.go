package v1alpha1

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
)

// Condition reasons.
const (
	ReasonSynced             = "Synced"
	ReasonSecretNotFound     = "SecretNotFound"
	ReasonSecretKeyMissing   = "SecretKeyMissing"
	ReasonSecretUnreadable   = "SecretUnreadable"
	ReasonUnauthorized       = "Unauthorized"
	ReasonForbidden          = "Forbidden"
	ReasonNotFound           = "NotFound"
	ReasonRateLimited        = "RateLimited"
	ReasonServerError        = "ServerError"
	ReasonInvalidResponse    = "InvalidResponse"
	ReasonUnreachable        = "Unreachable"
	ReasonUnexpectedStatus   = "UnexpectedStatus"
	ReasonConfigurationError = "ConfigurationError"
	ReasonSuspended          = "Suspended"
	ReasonProgressing        = "Progressing"
	ReasonSyncFailed         = "SyncFailed"
	ReasonTooLarge           = "TooLarge"
)
