package v1beta1

import "time"

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
