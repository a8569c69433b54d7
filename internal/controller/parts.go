package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/alertlist"
	"github.com/servicewatch/servicewatch/internal/alertselect"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/pacing"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
	"github.com/servicewatch/servicewatch/internal/readrunner"
	"github.com/servicewatch/servicewatch/internal/sharedread"
	"github.com/servicewatch/servicewatch/internal/slim"
	"github.com/servicewatch/servicewatch/internal/statemetrics"
)

// Cloud is what the reconciler reads of the cloud; *cloudapi.Client is the
// real one.
type Cloud interface {
	ListPipes(ctx context.Context, baseURL string, creds cloudapi.BasicCredentials, organizationID, serviceID string, opts cloudapi.ListOptions[swv1.Pipe]) (cloudapi.List[swv1.Pipe], error)
	ListReversePrivateEndpoints(ctx context.Context, baseURL string, creds cloudapi.BasicCredentials, organizationID, serviceID string, opts cloudapi.ListOptions[swv1.ReversePrivateEndpoint]) (cloudapi.List[swv1.ReversePrivateEndpoint], error)
	GetAlertFrom(ctx context.Context, src cloudapi.AlertSource, alertID string) (cloudapi.AlertResult, error)
	ListAlerts(ctx context.Context, src cloudapi.AlertSource, page cloudapi.AlertPageRequest) (cloudapi.AlertPage, error)
}

// Budgets is what the reconciler asks of the rate budgets before it calls
// the cloud; *ratebudget.Store is the real one, shared with the Cloud's
// client.
type Budgets interface {
	// Admit reserves n calls of a budget before they are made, or says how
	// long to wait; see ratebudget.Store.Admit.
	Admit(api, baseURL string, cred ratebudget.CredentialID, n int) time.Duration
	// Hold keeps every call of a budget back until until, as a 429's
	// Retry-After does; see ratebudget.Store.Hold.
	Hold(api, baseURL string, cred ratebudget.CredentialID, until time.Time)
	// Allowance is the calls per second budget (a BudgetID of api) admits;
	// 0 means unlimited.
	Allowance(api, budget string) float64
	// MaxBatch is the most calls of api one Admit can ever reserve; 0
	// means unlimited.
	MaxBatch(api string) int
}

// part is one independent piece of a sync. Everything that differs between
// the pipes, the reverse private endpoints and the alerts is declared here,
// once; reading the cloud, applying results to status, the Ready and Stalled
// summary, events, the schedule and metrics all walk syncParts.
type part struct {
	// name labels the part in metrics.
	name string
	// condition is the type of the condition that reports the part.
	condition string
	// noun names the part's items in messages ("pipes").
	noun string
	// inUse tells whether the watch asks for this part at all; a part not in
	// use still reports its condition (True, nothing to read) but is left
	// out of the sync metrics.
	inUse func(watch *swv1.ServiceWatch) bool
	// read calls the cloud. It never returns an error: a failure is part of
	// the result, classified where it arose.
	read func(ctx context.Context, cloud Cloud, in *syncScope) partResult
	// count is the number of items the status's summary reports.
	count func(status *swv1.ServiceWatchStatus) int32
	// list is the part's list in status, for truncation.
	list statusList
}

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
	secretVersions map[string]string
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
	routes       *alertlist.Routes
	alertsByList bool
	// alertNeeds are what the watches sharing each alert list use of it
	// (the read keeps only that).
	alertNeeds *alertselect.Needs[readKey]
	// keepBytes bounds what a list call keeps: the status size limit.
	keepBytes int
	// metricBytes bounds the items a list call gathers for the state
	// metrics (statemetrics.Collector.MaxItemBytes).
	metricBytes int
	// shared joins the reads of watches that read the same thing; nil
	// reads alone.
	shared *sharedread.Reads[readKey]
	// budgets are asked for the unreserved reads.
	budgets    Budgets
	chargeWork func(units int64) // charges the work of decoding an answer to the watch's namespace
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
	return in.management.failure == nil || (alertselect.InUse(&in.watch.Spec) && in.alerts.failure == nil)
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
	// (workshare), not for a rate budget.
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
	if alertselect.FromManagement(&in.watch.Spec) {
		key.organizationID, key.serviceID = in.watch.Spec.OrganizationID, in.watch.Spec.ServiceID
	}
	return key
}

// sharedListGroup is the phase group of the alert list the sync reads when
// watches of other services may share it (see pacing.Pacer.ReadsList); 0
// when none does: a management API list is its service's, whose group the
// watch is in already.
func (in *syncScope) sharedListGroup() uint64 {
	if !in.alertsByList || in.alerts.failure != nil || !alertselect.SharedList(&in.watch.Spec) {
		return 0
	}
	return pacing.GroupOf(alertListReadKind, in.alerts.url, string(in.alerts.digest[:]))
}

// alertSource is where the sync reads its alerts, with which credential.
func (in *syncScope) alertSource() cloudapi.AlertSource {
	return alertselect.Source(&in.watch.Spec, in.alerts.url, in.alerts.token, in.management.creds)
}

// listAge is how old a list another watch read may be for this sync to
// reuse it (alertselect.ListAge).
func listAge(in *syncScope) time.Duration { return alertselect.ListAge(interval(in.watch), in.fresh) }

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
	return nil
}

// readFailed is the result of a part whose read failed, or whose call waits
// for room in the budget: the part is deferred, its data and condition stay.
func readFailed(err error) partResult {
	if waiting := deferral(err); waiting != nil {
		return partResult{deferred: waiting}
	}
	return partResult{failure: cloudFailure(err)}
}

// deferral is why a read waits for a later sync, nil when it does not.
func deferral(err error) *failure {
	refused, ok := errors.AsType[*budgetRefusalError](err)
	if !ok {
		return nil
	}
	return newFailure(swv1.ReasonRateLimited, "%s", refused.Error())
}

// ownCopy is a deep copy of a shared list for one watch's status: results
// shared between watches must stay as they were read, and the status they are
// written into is the watch's to change (decoding the status patch's answer
// writes into its lists and the items' pointers).
func ownCopy[T any, P interface {
	*T
	DeepCopyInto(*T)
}](items []T) []T {
	if items == nil {
		return nil
	}
	out := make([]T, len(items))
	for i := range items {
		P(&items[i]).DeepCopyInto(&out[i])
	}
	return out
}

// partResult is what one part read, ready to be applied to status.
type partResult struct {
	// failure is why the part failed, nil when it synced.
	failure *failure
	// apply writes what the part read into status. A part that failed as a
	// whole has none, so status keeps its last good data.
	apply func(status *swv1.ServiceWatchStatus)
	// message is the part condition's message when the part synced.
	message string
	// metricItems puts the part's items, all of them and not only those
	// status keeps, into the state metrics' snapshot.
	metricItems func(*statemetrics.Watch)
	// deferred: the part did not run this time; its data and condition stay
	// as they are (or, when it never ran, its condition says why).
	deferred *failure
}

// readCloud runs the parts concurrently: they are independent, and a slow one
// must not hold up the others. The results are in the order of parts.
func readCloud(ctx context.Context, cloud Cloud, in *syncScope) []partResult {
	results := make([]partResult, len(in.parts))
	var wg sync.WaitGroup
	for i, p := range in.parts {
		wg.Go(func() {
			defer recoverAs(&results[i].failure)
			results[i] = p.read(ctx, cloud, in)
		})
	}
	wg.Wait()
	return results
}

// recoverAs turns a panic of a read into the read's failure: a bug that one
// tenant's cloud answer triggers must fail that watch's sync, not stop the
// manager for every tenant. A panic in any goroutine ends the process, so
// each goroutine that reads the cloud recovers on its own.
func recoverAs(f **failure) {
	//nolint:revive // recoverAs is itself the deferred call (defer recoverAs(…)), so recover sees the panic.
	if p := recover(); p != nil {
		*f = panicFailure(p)
	}
}

// panicFailure is the failure of a read that panicked, in its own goroutine
// (recoverAs) or in a read shared with other watches (sharedread.PanicError).
func panicFailure(value any) *failure {
	return newFailure(swv1.ReasonInvalidResponse, "reading the cloud failed inside the operator (a bug: please report it): %v", value)
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

func always(*swv1.ServiceWatch) bool { return true }

func pipesPart() part {
	return part{
		name:      "pipes",
		condition: swv1.ConditionPipesSynced,
		noun:      "pipes",
		inUse:     always,
		read:      readPipes,
		count:     func(s *swv1.ServiceWatchStatus) int32 { return s.Summary.Pipes },
		list: statusList{
			field:    "pipes",
			keepRank: 2, // pipes are many: cut first
			sizes:    func(s *swv1.ServiceWatchStatus) []int { return bound.Charges(s.Pipes) },
			slim:     func(s *swv1.ServiceWatchStatus, budget int) { s.Pipes = slim.List(s.Pipes, budget, slim.Pipes) },
			cuts: func(s *swv1.ServiceWatchStatus) []string {
				return slim.Cuts("pipe", s.Pipes, func(p *swv1.Pipe) (*string, map[string]int32) { return p.ID, p.Omitted })
			},
			keep:   func(s *swv1.ServiceWatchStatus, n int) { s.Pipes = s.Pipes[:n] },
			length: func(s *swv1.ServiceWatchStatus) int { return len(s.Pipes) },
			total:  func(w *swv1.ServiceWatch) int { return int(w.Status.Summary.Pipes) },
		},
	}
}

// listedMessage is the message of a list part that synced: how many items
// the cloud listed and, when values of some could not be read, how many
// items had fields left out, naming the first few (the client bounds them).
func listedMessage(total int, noun string, incomplete int, described []string) string {
	msg := fmt.Sprintf("Listed %d %s", total, noun)
	if incomplete == 0 {
		return msg
	}
	named := bound.Join(described, maxListMessageBytes)
	if more := incomplete - len(described); more > 0 {
		named += bound.AndMore(more)
	}
	return fmt.Sprintf("%s; %d had fields left out that could not be read (kept as sent in otherFields): %s", msg, incomplete, named)
}

// listRead is what one list of the management API gives every watch that
// shares it: the list the client kept, the state metrics' items, and for
// pipes the count of each state.
type listRead[T, M any] struct {
	list    cloudapi.List[T]
	items   []M
	byState map[string]int32
}

// pipesRead is what one list of pipes gives.
type pipesRead = listRead[swv1.Pipe, statemetrics.Pipe]

// endpointsRead is what one list of reverse private endpoints gives.
type endpointsRead = listRead[swv1.ReversePrivateEndpoint, statemetrics.Endpoint]

// listPart says how one list of the management API is read and shown: kind
// keys the shared read, list calls the cloud, apply puts what it read into
// the status and show into the state metrics' watch.
type listPart[T, M any] struct {
	kind, noun string
	list       func(context.Context, Cloud, *syncScope) (listRead[T, M], error)
	apply      func(*swv1.ServiceWatchStatus, listRead[T, M])
	show       func(w *statemetrics.Watch, items []M, total int)
}

// readList reads one of the watch's lists of the management API: shared
// with the watches that read the same, asking the budget at call time when
// admission left it to a shared read.
func readList[T, M any](ctx context.Context, cloud Cloud, in *syncScope, lp listPart[T, M]) partResult {
	if in.management.failure != nil {
		return partResult{failure: in.management.failure}
	}
	key := in.listRead(lp.kind)
	read, err := sharedread.Do(ctx, in.shared, key, in.fresh, func(ctx context.Context) (listRead[T, M], error) {
		if err := in.admitAtCall(cloudapi.APIManagement, key, false); err != nil {
			return listRead[T, M]{}, err
		}
		return lp.list(ctx, cloud, in)
	})
	if err != nil {
		return readFailed(err)
	}
	return partResult{
		message:     listedMessage(read.list.Total, lp.noun, read.list.Incomplete, read.list.IncompleteItems),
		apply:       func(s *swv1.ServiceWatchStatus) { lp.apply(s, read) },
		metricItems: func(w *statemetrics.Watch) { lp.show(w, read.items, read.list.Total) },
	}
}

func readPipes(ctx context.Context, cloud Cloud, in *syncScope) partResult {
	return readList(ctx, cloud, in, listPart[swv1.Pipe, statemetrics.Pipe]{
		kind: pipesReadKind, noun: "pipes", list: listPipes, apply: applyPipes, show: showPipes})
}

// listPipes calls the cloud. The client keeps what fits the status; the
// counts and the metric items see every pipe.
func listPipes(ctx context.Context, cloud Cloud, in *syncScope) (pipesRead, error) {
	byState := bound.NewTally(maxCountedStates, maxPipeStateBytes, otherPipeStates)
	items := newCollector(in.metricBytes, pipeItem)
	list, err := cloud.ListPipes(ctx, in.management.url, in.management.creds, in.watch.Spec.OrganizationID, in.watch.Spec.ServiceID,
		cloudapi.ListOptions[swv1.Pipe]{KeepBytes: in.keepBytes, Charge: bound.GoSize[swv1.Pipe], Work: in.chargeWork, Each: func(p *swv1.Pipe) {
			byState.Add(ptr.Deref(p.State, "Unknown"))
			items.add(p)
		}, Replace: func(old, p *swv1.Pipe) { // the summary counts the duplicate status shows
			byState.Remove(ptr.Deref(old.State, "Unknown"))
			byState.Add(ptr.Deref(p.State, "Unknown"))
		}})
	if err != nil {
		return pipesRead{}, err
	}
	return pipesRead{list: list, byState: byState.Top(maxPipeStates), items: items.items.Items()}, nil
}

// showPipes gives the state metrics every pipe a list read.
func showPipes(w *statemetrics.Watch, items []statemetrics.Pipe, total int) {
	w.Pipes, w.PipesTotal = items, total
}

// applyPipes puts what a list of pipes read into the status: the items
// kept, the total and the count by state.
func applyPipes(s *swv1.ServiceWatchStatus, read pipesRead) {
	s.Pipes = ownCopy(read.list.Items)
	s.Summary.Pipes = int32(read.list.Total)
	s.Summary.PipesByState = maps.Clone(read.byState)
}

func endpointsPart() part {
	return part{
		name:      "reverse_private_endpoints",
		condition: swv1.ConditionReversePrivateEndpointsSynced,
		noun:      "reverse private endpoints",
		inUse:     always,
		read:      readEndpoints,
		count:     func(s *swv1.ServiceWatchStatus) int32 { return s.Summary.ReversePrivateEndpoints },
		list: statusList{
			field:    "reversePrivateEndpoints",
			keepRank: 0, // endpoints are few and pipes reference them: kept first
			sizes:    func(s *swv1.ServiceWatchStatus) []int { return bound.Charges(s.ReversePrivateEndpoints) },
			slim: func(s *swv1.ServiceWatchStatus, budget int) {
				s.ReversePrivateEndpoints = slim.List(s.ReversePrivateEndpoints, budget, slim.Endpoints)
			},
			cuts: func(s *swv1.ServiceWatchStatus) []string {
				return slim.Cuts("endpoint", s.ReversePrivateEndpoints, func(e *swv1.ReversePrivateEndpoint) (*string, map[string]int32) { return e.ID, e.Omitted })
			},
			keep:   func(s *swv1.ServiceWatchStatus, n int) { s.ReversePrivateEndpoints = s.ReversePrivateEndpoints[:n] },
			length: func(s *swv1.ServiceWatchStatus) int { return len(s.ReversePrivateEndpoints) },
			total:  func(w *swv1.ServiceWatch) int { return int(w.Status.Summary.ReversePrivateEndpoints) },
		},
	}
}

func readEndpoints(ctx context.Context, cloud Cloud, in *syncScope) partResult {
	return readList(ctx, cloud, in, listPart[swv1.ReversePrivateEndpoint, statemetrics.Endpoint]{
		kind: endpointsReadKind, noun: "reverse private endpoints", list: listEndpoints, apply: applyEndpoints, show: showEndpoints})
}

// listEndpoints calls the cloud; the metric items see every endpoint.
func listEndpoints(ctx context.Context, cloud Cloud, in *syncScope) (endpointsRead, error) {
	items := newCollector(in.metricBytes, endpointItem)
	list, err := cloud.ListReversePrivateEndpoints(ctx, in.management.url, in.management.creds, in.watch.Spec.OrganizationID, in.watch.Spec.ServiceID,
		cloudapi.ListOptions[swv1.ReversePrivateEndpoint]{KeepBytes: in.keepBytes, Charge: bound.GoSize[swv1.ReversePrivateEndpoint], Work: in.chargeWork, Each: items.add})
	if err != nil {
		return endpointsRead{}, err
	}
	return endpointsRead{list: list, items: items.items.Items()}, nil
}

// showEndpoints gives the state metrics every endpoint a list read.
func showEndpoints(w *statemetrics.Watch, items []statemetrics.Endpoint, total int) {
	w.Endpoints, w.EndpointsTotal = items, total
}

// applyEndpoints puts what a list of endpoints read into the status.
func applyEndpoints(s *swv1.ServiceWatchStatus, read endpointsRead) {
	s.ReversePrivateEndpoints = ownCopy(read.list.Items)
	s.Summary.ReversePrivateEndpoints = int32(read.list.Total)
}

// Bounds on status.summary.pipesByState, whose keys are the cloud's words:
// a cloud that gives each of a million pipes a state of its own must not make
// the summary, which is never truncated, unbounded.
const (
	// maxPipeStates is how many states the summary names; the pipes of the
	// others are counted under otherPipeStates.
	maxPipeStates = 32
	// maxCountedStates is how many distinct states a list counts by name
	// while it streams.
	maxCountedStates = 1000
	// maxPipeStateBytes cuts a state's name.
	maxPipeStateBytes = 64
	// otherPipeStates counts the pipes of the states left unnamed.
	otherPipeStates = "(other)"
)

// The items as the state metrics show them.

func pipeItem(p *swv1.Pipe) statemetrics.Pipe {
	return statemetrics.Pipe{ID: ptr.Deref(p.ID, ""), Name: ptr.Deref(p.Name, ""), State: ptr.Deref(p.State, ""), SourceKind: ptr.Deref(p.SourceKind, "")}
}

func endpointItem(e *swv1.ReversePrivateEndpoint) statemetrics.Endpoint {
	return statemetrics.Endpoint{ID: ptr.Deref(e.ID, ""), Type: ptr.Deref(e.Type, ""), Status: ptr.Deref(e.Status, "")}
}

// collector gathers the metric items of a list while the client streams it,
// those the state metrics' bound in bytes keeps: a list of a million items
// with long names costs the bound, not the list.
type collector[T any, M statemetrics.Item] struct {
	items   *statemetrics.Selection[M]
	project func(*T) M
}

func newCollector[T any, M statemetrics.Item](maxBytes int, project func(*T) M) collector[T, M] {
	return collector[T, M]{items: statemetrics.NewSelection[M](maxBytes), project: project}
}

func (c collector[T, M]) add(item *T) { c.items.Add(c.project(item)) }

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
	alertListReadKind = "alert_list"
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

// slottedCloud is the Cloud of one sync's read: each call holds its host's
// slot (readrunner.Slots) while it runs. Admission asks no slot: it calls
// nothing.
type slottedCloud struct {
	Cloud
	slots *readrunner.Slots
}

// ListPipes lists the pipes holding the management host's slot.
func (c slottedCloud) ListPipes(ctx context.Context, baseURL string, creds cloudapi.BasicCredentials, organizationID, serviceID string, opts cloudapi.ListOptions[swv1.Pipe]) (cloudapi.List[swv1.Pipe], error) {
	return holding(ctx, c.slots, baseURL, func() (cloudapi.List[swv1.Pipe], error) {
		return c.Cloud.ListPipes(ctx, baseURL, creds, organizationID, serviceID, opts)
	})
}

// ListReversePrivateEndpoints lists the endpoints holding the management
// host's slot.
func (c slottedCloud) ListReversePrivateEndpoints(ctx context.Context, baseURL string, creds cloudapi.BasicCredentials, organizationID, serviceID string, opts cloudapi.ListOptions[swv1.ReversePrivateEndpoint]) (cloudapi.List[swv1.ReversePrivateEndpoint], error) {
	return holding(ctx, c.slots, baseURL, func() (cloudapi.List[swv1.ReversePrivateEndpoint], error) {
		return c.Cloud.ListReversePrivateEndpoints(ctx, baseURL, creds, organizationID, serviceID, opts)
	})
}

// GetAlertFrom fetches an alert holding its host's slot.
func (c slottedCloud) GetAlertFrom(ctx context.Context, src cloudapi.AlertSource, alertID string) (cloudapi.AlertResult, error) {
	return holding(ctx, c.slots, src.BaseURL, func() (cloudapi.AlertResult, error) { return c.Cloud.GetAlertFrom(ctx, src, alertID) })
}

// ListAlerts reads a page of alerts holding its host's slot.
func (c slottedCloud) ListAlerts(ctx context.Context, src cloudapi.AlertSource, page cloudapi.AlertPageRequest) (cloudapi.AlertPage, error) {
	return holding(ctx, c.slots, src.BaseURL, func() (cloudapi.AlertPage, error) { return c.Cloud.ListAlerts(ctx, src, page) })
}

// holding makes call while holding baseURL's host's slot of slots.
func holding[T any](ctx context.Context, slots *readrunner.Slots, baseURL string, call func() (T, error)) (T, error) {
	release, err := slots.Hold(ctx, baseURL)
	if err != nil {
		var none T
		return none, err
	}
	defer release()
	return call()
}

// failure is why one part of a sync failed, classified once, where it arose,
// into what the status needs: a condition reason, a message for the user, and
// how long the service asked us to wait. Whether only the user can fix it
// follows from the reason (isStalledReason).
type failure struct {
	reason     string
	message    string
	retryAfter time.Duration
}

func (f *failure) Error() string { return f.reason + ": " + f.message }

func newFailure(reason, format string, args ...any) *failure {
	return &failure{reason: reason, message: fmt.Sprintf(format, args...)}
}

// isStalledReason tells the reasons that retrying cannot fix until the user
// acts: kstatus reports them as Stalled.
func isStalledReason(reason string) bool {
	switch reason {
	case swv1.ReasonSecretNotFound, swv1.ReasonSecretKeyMissing, swv1.ReasonUnauthorized,
		swv1.ReasonForbidden, swv1.ReasonEndpointNotFound, swv1.ReasonBadRequest, swv1.ReasonConfigurationError,
		swv1.ReasonURLNotAllowed, swv1.ReasonAddressNotAllowed, swv1.ReasonAccountNotFound, swv1.ReasonAccountNotAllowed,
		swv1.ReasonListNotServed:
		return true
	}
	return false
}

// isTransientReason tells the reasons that a retry soon may fix: they back
// off. The others wait for the interval: stalled ones for the user, an idle
// or otherwise not running service (or a too costly answer) for its owner.
func isTransientReason(reason string) bool {
	return !isStalledReason(reason) && reason != swv1.ReasonServiceIdle && reason != swv1.ReasonServiceNotRunning && reason != swv1.ReasonDecodeBudgetExceeded
}

// cloudFailure classifies an error of the cloud client. The message keeps the
// client's words (never a credential: the client scrubs them) and adds what
// the user can do about it.
func cloudFailure(err error) *failure {
	if panicked, ok := errors.AsType[*sharedread.PanicError](err); ok {
		return panicFailure(panicked.Value)
	}
	var cerr *cloudapi.Error
	if !errors.As(err, &cerr) {
		return &failure{reason: swv1.ReasonUnreachable, message: err.Error()}
	}
	f := &failure{reason: conditionReason(cerr.Reason), message: cerr.Error(), retryAfter: cerr.RetryAfter}
	switch cerr.Reason {
	case cloudapi.ReasonUnauthorized:
		f.message += "; check the key or token in the referenced Secret"
	case cloudapi.ReasonForbidden:
		f.message += "; the credential lacks permission for this organization or service"
	case cloudapi.ReasonAddressNotAllowed:
		f.message += "; the manager runs with --deny-local-addresses: use a URL that leads elsewhere"
	case cloudapi.ReasonNotFound:
		f.message += byAPI(cerr.Operation, "; check the ID in spec.alertIds",
			"; check spec.organizationId and spec.serviceId")
	case cloudapi.ReasonEndpointNotFound:
		f.message += byAPI(cerr.Operation, "; the URL does not reach the alert API: check spec.alertApi.url (or the manager's --alert-api-url) and its path prefix",
			"; the URL does not reach the management API: check spec.managementApi.url (or the manager's --management-api-url) and its path prefix")
	case cloudapi.ReasonBadRequest:
		f.message += byAPI(cerr.Operation, "; the alert API rejected the request: check the ID in spec.alertIds",
			"; the management API rejected the request: check spec.organizationId and spec.serviceId")
	case cloudapi.ReasonUnexpectedStatus:
		if cerr.Location != "" {
			f.message += byAPI(cerr.Operation, "; if the alert API moved, set spec.alertApi.url (or --alert-api-url) to its new base URL",
				"; if the management API moved, set spec.managementApi.url (or --management-api-url) to its new base URL")
		}
	case cloudapi.ReasonServiceNotRunning:
		f.message += "; the service is not running"
		if cerr.ServiceState != "" {
			f.message += " (" + cerr.ServiceState + ")"
		}
		f.message += ": the data in status is kept and the part is retried every interval; start the service to resume"
	}
	return f
}

// byAPI is the hint for a failed operation: alert for the alert API's one
// operation, management for the management API's.
func byAPI(operation, alert, management string) string {
	if operation == cloudapi.OperationGetAlert || operation == cloudapi.OperationListAlerts {
		return alert
	}
	return management
}

// conditionReason maps a client reason to a condition reason. They share
// their spelling; the switch keeps the mapping explicit should either change.
func conditionReason(r cloudapi.Reason) string {
	switch r {
	case cloudapi.ReasonUnauthorized:
		return swv1.ReasonUnauthorized
	case cloudapi.ReasonForbidden:
		return swv1.ReasonForbidden
	case cloudapi.ReasonNotFound:
		return swv1.ReasonNotFound
	case cloudapi.ReasonEndpointNotFound:
		return swv1.ReasonEndpointNotFound
	case cloudapi.ReasonBadRequest:
		return swv1.ReasonBadRequest
	case cloudapi.ReasonRateLimited:
		return swv1.ReasonRateLimited
	case cloudapi.ReasonServerError:
		return swv1.ReasonServerError
	case cloudapi.ReasonInvalidResponse:
		return swv1.ReasonInvalidResponse
	case cloudapi.ReasonDecodeBudgetExceeded:
		return swv1.ReasonDecodeBudgetExceeded
	case cloudapi.ReasonConfigurationError:
		return swv1.ReasonConfigurationError
	case cloudapi.ReasonServiceIdle:
		return swv1.ReasonServiceIdle
	case cloudapi.ReasonAddressNotAllowed:
		return swv1.ReasonAddressNotAllowed
	case cloudapi.ReasonServiceNotRunning:
		return swv1.ReasonServiceNotRunning
	case cloudapi.ReasonUnexpectedStatus:
		return swv1.ReasonUnexpectedStatus
	default:
		return swv1.ReasonUnreachable
	}
}
