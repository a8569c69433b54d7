package controller

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/alerts"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/controller/credentials"
	"github.com/servicewatch/servicewatch/internal/controller/reads"
	"github.com/servicewatch/servicewatch/internal/pacing"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// syncScope is one sync of one watch, from the reconcile that starts it to
// the one that writes it: what the reads are for and read with, carried
// into the background read, and what they found, carried back into the
// write. One value, built once, so that every step asks the same questions
// of the same facts.
type syncScope struct {
	// p is the watch as the pacer saw it when the sync began: its key and
	// the trigger a read must still match when it is written.
	p paced
	// watch is the watch as the sync began; the reads use its spec.
	watch *swv1.ServiceWatch
	// secretVersions are the referenced Secrets' resourceVersions by name.
	secretVersions credentials.Versions
	// parts are the parts the sync reads and writes (syncParts).
	parts []part
	// level is the level of the work the sync is for.
	level pacing.Level
	// allowed is the interval the watch's namespace's shares of its budgets
	// allow it.
	allowed pacing.Allowance

	management       managementAccess
	alerts           alertAccess
	alertConcurrency int
	// routes know which hosts list alerts; alertsByList: this sync reads
	// its alerts from the host's list, not one ID at a time.
	routes       *alerts.Routes
	alertsByList bool
	// alertNeeds are what the watches sharing each alert list use of it
	// (the read keeps only that).
	alertNeeds *alerts.Needs[readKey]
	// pageCounts are the pages the last read of each alert list took.
	pageCounts *alerts.PageCounts[readKey]
	// keepBytes bounds what a list call keeps: the status size limit.
	keepBytes int
	// metricBytes bounds the items a list call gathers for the state
	// metrics (metrics.State.MaxItemBytes).
	metricBytes int
	// shared joins the reads of watches that read the same thing; nil
	// reads alone.
	shared *reads.Shared[readKey]
	// budgets are asked for the unreserved reads.
	budgets    Budgets
	chargeWork func(units int64) // charges the work of decoding an answer to the watch's namespace
	// spent counts calls admitted at call time (admitAtCall) against the
	// namespace's share of their budget; nil counts nothing.
	spent func(budget string, calls int)
	// fresh: the user asked for this sync (requested-at, a changed Secret),
	// so a read another watch finished is not reused; one under way is
	// joined.
	fresh bool
	// admission is what the budgets admitted (see admit).
	admission

	// What the reads found, set when they end.

	// results are the parts' results in the order of the parts; nil when
	// the read ended without an answer (see interrupted).
	results []partResult
	// outcome sums the results up for the schedule and retryNotBefore.
	outcome pacing.Outcome
	// reachedCloud: the sync called the cloud; only such syncs are
	// lastSyncTime.
	reachedCloud bool
	// startedAt is when the read began (its first call then waits for its
	// host's slot only if the host is busy); endedAt when it ended.
	startedAt, endedAt time.Time
	// tracking is what following the items' states found (applySync);
	// toldChanges are the IDs of the changes told already, so that a write
	// built again after a conflict tells each once.
	tracking    tracking
	toldChanges map[string]bool
	// statusRoom is what the status budget let the status keep
	// (writeStatus); the state metrics keep no more of the items, so that
	// a namespace's budget bounds its metrics too.
	statusRoom int
}

// ended records what the reads found, the results summed up once, and drops
// the credentials; results that are not one per part (a read that ended
// without an answer) read as interrupted.
func (in *syncScope) ended(results []partResult, startedAt, endedAt time.Time) {
	in.reachedCloud = in.reachesCloud()
	if len(results) != len(in.parts) {
		results, in.reachedCloud = interrupted(in.parts), false
	}
	in.results, in.outcome = results, assess(results)
	in.startedAt, in.endedAt = startedAt, endedAt
	// The credentials were for the calls; the write that follows needs none.
	in.management.creds, in.alerts.token = cloudapi.BasicCredentials{}, cloudapi.BearerToken{}
}

// reachesCloud tells whether a sync with this access gets as far as calling
// the cloud; lastSyncTime records only such attempts.
func (in *syncScope) reachesCloud() bool {
	return in.management.failure == nil || (alerts.InUse(&in.watch.Spec) && in.alerts.failure == nil)
}

// record is the sync as the schedule learns of it (pacing.Pacer.Synced).
func (in *syncScope) record() pacing.SyncRecord {
	return pacing.SyncRecord{Began: in.startedAt, Every: in.allowed.Every, Level: in.level, ReachedCloud: in.reachedCloud, Outcome: in.outcome}
}

// admission is the client-side budget's answer for one sync.
type admission struct {
	// wait, when positive, is how long to wait before the sync may start:
	// nothing is sent meanwhile, and nothing is written.
	wait time.Duration
	// overShare: wait is for the namespace's share of decode work
	// (tenancy.WorkShares), not for a rate budget.
	overShare bool
	overSpent string // why work the user asked for waits: its namespace spent past its share of a key
	// alertsDeferred: the management calls go ahead, the alert calls wait
	// for the next sync (a periodic refresh only), which the budget has
	// room for at alertsRoomAt.
	alertsDeferred bool
	alertsRoomAt   time.Time
	// unreserved are the reads that asked for no budget: a read of another
	// watch will answer them (see syncScope.admitAtCall).
	unreserved map[readKey]bool
	// reservedPages are the pages of its alert list the sync reserved
	// with its other calls (0: its first, if the list read is reserved;
	// see alerts.ListPages); the pages past them ask the budget as the
	// read reaches them (admitPage).
	reservedPages int
	// alertBatch are the alerts this sync fetches when the token's budget
	// admits fewer at once than the watch has; nil: all of them.
	alertBatch map[string]bool
}

// listRead is the key of the read of one of the watch's lists.
func (in *syncScope) listRead(kind string) readKey {
	return readKey{kind: kind, url: in.management.url, credential: in.management.digest,
		organizationID: in.watch.Spec.OrganizationID, serviceID: in.watch.Spec.ServiceID, keepBytes: in.keepBytes}
}

// alertRead is the key of the read of one alert.
func (in *syncScope) alertRead(id string) readKey {
	key := in.alertListRead()
	key.kind, key.alertID = alertReadKind, id
	return key
}

// alertListRead is the key of the read of the alerts' host's list: one per
// host and credential, and for the management API per service.
func (in *syncScope) alertListRead() readKey {
	key := readKey{kind: alertListReadKind, url: in.alerts.url, credential: in.alerts.digest}
	if alerts.FromManagement(&in.watch.Spec) {
		key.organizationID, key.serviceID = in.watch.Spec.OrganizationID, in.watch.Spec.ServiceID
	}
	return key
}

// sharedListGroup is the phase group of the alert list the sync reads when
// watches of other services may share it (see pacing.Pacer.ReadsList); 0
// when none does: a management API list is its service's, whose group the
// watch is in already.
func (in *syncScope) sharedListGroup() uint64 {
	if !in.alertsByList || in.alerts.failure != nil || !alerts.SharedList(&in.watch.Spec) {
		return 0
	}
	return pacing.GroupOf(alertListReadKind, in.alerts.url, string(in.alerts.digest[:]))
}

// alertSource is where the sync reads its alerts, with which credential.
func (in *syncScope) alertSource() cloudapi.AlertSource {
	return alerts.Source(&in.watch.Spec, in.alerts.url, in.alerts.token, in.management.creds)
}

// listAge is how old a list another watch read may be for this sync to
// reuse it (alerts.ListAge).
func listAge(in *syncScope) time.Duration {
	return alerts.ListAge(in.watch.Spec.SyncInterval(), in.fresh)
}

// managementReads are the reads a sync makes of the management API.
func (in *syncScope) managementReads() []readKey {
	return []readKey{in.listRead(pipesReadKind), in.listRead(endpointsReadKind)}
}

// alertReads are the distinct reads a sync makes of its alerts' host.
func (in *syncScope) alertReads() []readKey {
	if in.alertsByList {
		return []readKey{in.alertListRead()}
	}
	keys := make([]readKey, 0, len(in.watch.Spec.AlertIDs))
	seen := map[string]bool{}
	for _, id := range in.watch.Spec.AlertIDs {
		if !seen[id] {
			seen[id] = true
			keys = append(keys, in.alertRead(id))
		}
	}
	return keys
}

// admitAtCall asks the budget for the call of a read that admission left to
// a shared read which was gone by the time the read ran, or that it did not
// reserve at all (ask), so that no call goes out that the budget did not
// admit.
func (in *syncScope) admitAtCall(api string, key readKey, ask bool) error {
	if !in.unreserved[key] && !ask {
		return nil
	}
	if wait := in.budgets.Admit(api, key.url, key.credential, 1); wait > 0 {
		return &budgetRefusalError{api: api, wait: wait}
	}
	if in.spent != nil {
		in.spent(ratebudget.BudgetID(api, key.url, key.credential), 1)
	}
	return nil
}

// interrupted are the results of a sync whose reads ended without an answer:
// the manager stopped, the sync timed out waiting for a slot, or a read
// panicked. Each part reads as failed, to be retried on the backoff.
func interrupted(parts []part) []partResult {
	results := make([]partResult, len(parts))
	for i := range results {
		results[i] = partResult{failure: newFailure(swv1.ReasonUnreachable, "the sync ended before the cloud answered (timeout or interruption); retrying")}
	}
	return results
}

// assess sums up a sync's results for the schedule (pacing.Pacer.Synced).
func assess(results []partResult) pacing.Outcome {
	var o pacing.Outcome
	for _, res := range results {
		if f := res.failure; f != nil {
			o.Failed = true
			o.Transient = o.Transient || isTransientReason(f.reason)
			o.RetryAfter = max(o.RetryAfter, f.retryAfter)
		}
	}
	return o
}

// What the controller reads of a watch's spec and annotations, in one place.

// paced is the watch as the pacer sees it, built from the watch in one
// place (pacedOf) when a reconcile begins, so that every question put to the
// pacer (is it due, at which level, its demand, its next slot) is asked with
// the same key, trigger, interval and read group.
type paced = pacing.Watch[types.NamespacedName]

// pacedOf is the watch as the pacer sees it; secretVersions are the
// referenced Secrets' resourceVersions, defaultURL the management API's URL
// when the spec names none.
func pacedOf(watch *swv1.ServiceWatch, secretVersions credentials.Versions, defaultURL string) paced {
	p := paced{
		Key:       client.ObjectKeyFromObject(watch),
		Trigger:   triggerOf(watch, secretVersions),
		Every:     watch.Spec.SyncInterval(),
		Group:     readHash(watch, defaultURL),
		NewSpec:   newSpec(watch),
		Requested: requested(watch),
		Ready:     watch.IsReady(),
	}
	if t := watch.Status.LastSyncTime; t != nil {
		p.LastSync = t.Time
	}
	if t := watch.Status.RetryNotBefore; t != nil {
		p.RetryNotBefore = t.Time
	}
	return p
}

// triggerOf fingerprints what a user may change to ask for a sync now: the
// generation, the requested-at annotation and the referenced Secrets'
// versions.
func triggerOf(watch *swv1.ServiceWatch, secretVersions credentials.Versions) string {
	return fmt.Sprintf("%d|%s|%v", watch.Generation, requestedAt(watch), secretVersions.Ordered(watch))
}

// requestedWork says why a sync is owed to the user right now, or "" when
// none is: a new generation, or a new value of the requested-at annotation.
func requestedWork(watch *swv1.ServiceWatch) string {
	switch {
	case newSpec(watch):
		return fmt.Sprintf("syncing generation %d", watch.Generation)
	case requested(watch):
		return "syncing as requested by the annotation " + swv1.RequestedAtAnnotation
	}
	return ""
}

// newSpec tells a generation that no sync has handled yet.
func newSpec(watch *swv1.ServiceWatch) bool {
	return watch.Status.ObservedGeneration != watch.Generation
}

// requested tells a requested-at value that no sync has handled yet.
func requested(watch *swv1.ServiceWatch) bool {
	v := requestedAt(watch)
	return v != "" && v != watch.Status.LastHandledRequestedAt
}

// maxRequestedAtEcho is the longest requested-at value echoed as it is.
const maxRequestedAtEcho = 256

// requestedAt is the requested-at annotation as status echoes it: the value
// itself when short and printable, else its SHA-256, so that any value a
// tenant sets is acted on once, never makes the status unwritable, and
// never puts a control character (a terminal's escape) in status.
func requestedAt(watch *swv1.ServiceWatch) string {
	v := watch.Annotations[swv1.RequestedAtAnnotation]
	if len(v) <= maxRequestedAtEcho && strings.IndexFunc(v, unicode.IsControl) < 0 {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// readHash identifies what a watch reads: the service at the management API
// (defaultURL when the spec names none), its phase group in the pacer unless
// it reads an alert list shared beyond its service (sharedListGroup).
func readHash(watch *swv1.ServiceWatch, defaultURL string) uint64 {
	return pacing.GroupOf(cmp.Or(watch.Spec.ManagementAPI.URL, defaultURL), watch.Spec.OrganizationID, watch.Spec.ServiceID)
}

// What a sync reads with: the credentials of its APIs, as
// credentials.Reader reads them once the sync is admitted, and the access
// they give each part, or why they give none.

// apiAccess is what the parts of one API need besides the credential itself,
// or why they cannot run.
type apiAccess struct {
	url string
	// digest names the credential; when unread, it is all that is known
	// of it yet.
	digest cloudapi.CredentialDigest
	// unread: the Secret was not read for this sync (its digest at this
	// version was known); the credential is read once the sync is admitted.
	unread  bool
	failure *failure
}

// budget is the label of api's budget at a's URL and credential, as the
// metrics and status.heldBudgets name it.
func (a apiAccess) budget(api string) string { return ratebudget.Fingerprint(api, a.url, a.digest) }

// managementAccess is what the management API parts need, or why they cannot run.
type managementAccess struct {
	apiAccess
	creds cloudapi.BasicCredentials
}

func newManagementAccess(url string, creds cloudapi.BasicCredentials) managementAccess {
	return managementAccess{apiAccess: apiAccess{url: url, digest: cloudapi.DigestOf(creds)}, creds: creds}
}

// alertAccess is what the alerts part needs, or why it cannot run.
type alertAccess struct {
	apiAccess
	token cloudapi.BearerToken
}

func newAlertAccess(url string, token cloudapi.BearerToken) alertAccess {
	return alertAccess{apiAccess: apiAccess{url: url, digest: cloudapi.DigestOf(token)}, token: token}
}

// accessOf is the access of watch's syncs to both APIs at versions
// (credentials.Reader.Of).
func (r *ServiceWatchReconciler) accessOf(ctx context.Context, watch *swv1.ServiceWatch, versions credentials.Versions) (managementAccess, alertAccess) {
	m, a := r.credentials.Of(ctx, watch, versions)
	return managementOf(m), alertOf(a)
}

func managementOf(m credentials.Management) managementAccess {
	return managementAccess{apiAccess: accessFrom(m.Access), creds: m.Key}
}

func alertOf(a credentials.Alert) alertAccess {
	return alertAccess{apiAccess: accessFrom(a.Access), token: a.Token}
}

// accessFrom is an access as the parts use it: its failure one of theirs.
func accessFrom(a credentials.Access) apiAccess {
	out := apiAccess{url: a.URL, digest: a.Digest, unread: a.Unread}
	if a.Failure != nil {
		out.failure = newFailure(a.Failure.Reason, "%s", a.Failure.Message)
	}
	return out
}
