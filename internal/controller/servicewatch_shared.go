package controller

import (
	"errors"
	"fmt"
	"time"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/sharedread"
)

// sharedFreshness is how long a finished read is reused by the other watches
// that read the same thing. Watches of one service sync at the same phase
// (phaseBook), so the reads of a group start within the jitter (at most 1 s)
// plus the time the workers take to reach each of them: 3 s covers that.
// It stays under backoffBase, so the retry after a transient failure always
// calls again, and at a tenth of the shortest interval (minInterval), so a
// shared result is never much older than a watch's own read would have been.
const sharedFreshness = 3 * time.Second

// readKey names one read exactly. Two reads share a call only when every
// input of the call is equal, the credential included by its full digest: a
// tenant must never see data read with another tenant's credential, and
// truncation must not depend on who read first.
type readKey struct {
	// kind is what is read (pipesReadKind...).
	kind string
	// url is the API's base URL as the watch names it, unnormalized.
	url            string
	credential     cloudapi.CredentialDigest
	organizationID string
	serviceID      string
	alertID        string
	// keepBytes is the list's size bound, for the lists.
	keepBytes int
}

// The kinds of reads.
const (
	pipesReadKind     = "pipes"
	endpointsReadKind = "reverse_private_endpoints"
	alertReadKind     = "alert"
)

// newSharedReads returns the reconciler's shared reads: every read they
// hold was made with a credential the watches that share it hold too. A
// refused admission is the watch's own, never the cloud's answer: it is not
// reused.
func newSharedReads(freshness time.Duration, now func() time.Time) *sharedread.Reads[readKey] {
	return sharedread.New[readKey](freshness, now, func(err error) bool {
		_, refused := errors.AsType[*budgetRefusalError](err)
		return !refused
	})
}

// expectRetry is how soon a watch whose read another watch was just admitted
// for looks again: by then that read has begun, and the watch joins it.
const expectRetry = 100 * time.Millisecond

// budgetRefusalError is a read that admission left to a shared read which was
// gone when the read ran, and whose own call the budget then refused: it
// waits for a later sync rather than call without admission.
type budgetRefusalError struct {
	api  string
	wait time.Duration
}

func (b *budgetRefusalError) Error() string {
	return fmt.Sprintf("waiting %s for room in the %s API's rate budget", b.wait.Round(time.Second), b.api)
}
