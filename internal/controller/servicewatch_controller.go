package controller

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/accountcontroller"
	"github.com/servicewatch/servicewatch/internal/alerts"
	"github.com/servicewatch/servicewatch/internal/changes"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/controller/credentials"
	"github.com/servicewatch/servicewatch/internal/controller/reads"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/pacing"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
	"github.com/servicewatch/servicewatch/internal/tenancy"
)

// ServiceWatchReconciler syncs ServiceWatches with the cloud.
type ServiceWatchReconciler struct {
	// Client reads ServiceWatches and Secret metadata from the cache and
	// patches status.
	Client client.Client
	// APIReader reads Secrets straight from the API server.
	APIReader client.Reader
	Cloud     Cloud
	Recorder  events.EventRecorder
	Metrics   *metrics.Sync
	// Budgets admits each sync's calls; the Cloud's client holds its calls
	// back in the same store after a 429.
	Budgets Budgets
	// StateMetrics shows each watch's status as metrics; default: a
	// collector no registry reads.
	StateMetrics *metrics.State
	// StatusBudget bounds what statuses keep by namespace; nil: no bound.
	StatusBudget *tenancy.StatusLedger
	// WorkShares defer the syncs of a namespace whose answers cost more than its share to decode; nil: none.
	WorkShares *tenancy.WorkShares
	// Accounts resolves the ClusterCloudAccounts watches refer to; nil: none.
	Accounts *accountcontroller.Accounts
	// ShareWeights weigh the namespaces that share a key; nil: equal.
	ShareWeights tenancy.Weights
	// ChangeSink is offered the item state changes of every sync, besides
	// their Events; nil: none.
	ChangeSink changes.Sink
	Options    Options

	// parts are the parts of every sync (syncParts), built once.
	parts []part
	// pacer decides when each watch syncs and whether it may call now.
	pacer   *pacing.Pacer[types.NamespacedName, readKey]
	fetches *fetches
	// credentials reads what the syncs read with, from Secrets whose
	// versions a credentials.Watch (which SetupWithManager starts) knows.
	credentials *credentials.Reader
	// shared lets watches that read the same thing share the calls.
	shared *reads.Shared[readKey]
	// routes know which hosts serve the alert list.
	routes *alerts.Routes
	// alertNeeds are what the watches sharing each alert list use of it.
	alertNeeds *alerts.Needs[readKey]
	// listPages are the pages the last read of each alert list took: a
	// sync reserves them all (see admission).
	listPages *alerts.PageCounts[readKey]
	// clock reads the time and tells the wall clock's steps to the pacer;
	// default: the machine's (pacing.SystemClock).
	clock *pacing.Clock
	// episodes bound the events of each watch's failure episode.
	episodes episodes
	// changeBudgets bound each watch's Events of item changes over time;
	// reportingInstance names this manager in them.
	changeBudgets     changeBudgets
	reportingInstance string
	// holdsRestored is set once the persisted Retry-After holds were given
	// back to the client (restoreHolds); holdsMu orders the restoring.
	holdsRestored atomic.Bool
	holdsMu       sync.Mutex
}

// Reconcile syncs one ServiceWatch when a sync is due, and says when the next
// one is. A sync runs in two reconciles: one starts the cloud reads in the
// background (start), the next, woken by their end, writes what they read
// (write).
func (r *ServiceWatchReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var watch swv1.ServiceWatch
	if err := r.Client.Get(ctx, req.NamespacedName, &watch); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !watch.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	r.StatusBudget.HoldIfNew(watch.Namespace, watch.Name, func() int { return fixedSize(&watch.Status) })
	if watch.Spec.Suspend {
		return ctrl.Result{}, r.suspend(ctx, &watch)
	}
	s := r.newScope(ctx, &watch)
	if read, ok := r.takeRead(req.NamespacedName); ok && read.p.Trigger == s.p.Trigger {
		return r.write(ctx, &watch, s.p, read), nil
	}
	if r.fetches.Busy(req.NamespacedName) {
		return ctrl.Result{}, nil // the read's end wakes the watch
	}
	if wait := r.pacer.Due(s.p); wait > 0 {
		// A watch first seen after a restart may not be due for a while;
		// its state metrics show its status until then.
		r.StateMetrics.SetIfAbsent(stateMetricsOf(&watch))
		return periodic(wait), nil
	}
	return r.start(ctx, s), nil
}

// newScope is the scope of a sync of watch as this reconcile sees it.
func (r *ServiceWatchReconciler) newScope(ctx context.Context, watch *swv1.ServiceWatch) *syncScope {
	versions := r.credentials.Versions(ctx, watch)
	return &syncScope{p: pacedOf(watch, versions, r.Options.ManagementAPIURL), watch: watch, secretVersions: versions,
		parts: r.parts, alertConcurrency: r.Options.AlertConcurrency, keepBytes: r.Options.StatusSizeLimit,
		metricBytes: r.StateMetrics.MaxItemBytes(), shared: r.shared, budgets: r.Budgets,
		chargeWork: func(units int64) { r.WorkShares.Charge(watch.Namespace, units) },
		spent:      func(budget string, calls int) { r.pacer.Spent(budget, watch.Namespace, calls) }}
}

// periodic requeues a watch for a periodic sync, behind anything a user
// asked for.
func periodic(wait time.Duration) ctrl.Result {
	return ctrl.Result{RequeueAfter: wait, Priority: ptr.To(handler.LowPriority)}
}

func (r *ServiceWatchReconciler) forget(key types.NamespacedName) {
	r.alertNeeds.Forget(key.String())
	r.pacer.Forget(key)
	r.fetches.Forget(key)
	r.Metrics.PublishBudgetDemands(r.pacer.TakeDemandChanges)
	r.Metrics.Forget(key)
	r.StateMetrics.Delete(key.Namespace, key.Name)
	r.episodes.forget(key)
	r.changeBudgets.forget(key)
	r.StatusBudget.Release(key.Namespace, key.Name)
}

// suspend acknowledges a suspended watch: Ready turns False with reason
// Suspended, a requested sync is echoed as handled, and no call is made.
func (r *ServiceWatchReconciler) suspend(ctx context.Context, watch *swv1.ServiceWatch) error {
	r.fetches.Forget(client.ObjectKeyFromObject(watch)) // a read under way is not written
	// A suspended watch makes no call: it leaves the budget book, its claims
	// and its lines, so the watches on its credentials are no longer
	// stretched for it; resuming syncs at once and asks again.
	r.pacer.Forget(client.ObjectKeyFromObject(watch))
	r.alertNeeds.Forget(client.ObjectKeyFromObject(watch).String())
	r.Metrics.PublishBudgetDemands(r.pacer.TakeDemandChanges)
	before, err := r.writeStatus(ctx, watch, statusChange{suspended: true})
	if err != nil {
		// A watch deleted meanwhile is forgotten by its delete event.
		return client.IgnoreNotFound(err)
	}
	r.StateMetrics.Set(stateMetricsOf(watch))
	r.emit(ctx, watch, r.episodes.events(before, watch, r.parts))
	return nil
}

// syncStep is one step of starting a sync. It says whether to go on; when
// it does not, the sync waits (for room in a budget, a Secret that changed)
// and result says when to come back: nothing was sent and nothing written.
type syncStep func(ctx context.Context, s *syncScope) (result ctrl.Result, goOn bool)

// start begins a sync, in the order of its steps: the persisted Retry-After
// holds are restored (once per process); the credentials are known by their
// digests, reading a Secret only when its digest at its current version is
// unknown; the watch's demand on its budgets is noted and the budgets are
// asked for the calls; the credentials themselves are read for the calls
// admitted; work the user asked for is announced; the reads start in the
// background.
func (r *ServiceWatchReconciler) start(ctx context.Context, s *syncScope) ctrl.Result {
	for _, step := range []syncStep{r.restoreHolds, r.learnAccess, r.noteDemand, r.admit, r.readCredentials, r.announce, r.startReads} {
		if result, goOn := step(ctx, s); !goOn {
			return result
		}
	}
	return ctrl.Result{}
}

// learnAccess learns what the parts need of the referenced Secrets (see
// accessOf) and what the pacer says of the sync: whether it must read fresh,
// and the level of its work.
func (r *ServiceWatchReconciler) learnAccess(ctx context.Context, s *syncScope) (ctrl.Result, bool) {
	s.management, s.alerts = r.accessOf(ctx, s.watch, s.secretVersions)
	s.routes, s.alertsByList = r.routes, r.routes.UseList(alerts.RouteOf(s.alertSource(), s.alerts.digest))
	s.alertNeeds, s.pageCounts = r.alertNeeds, r.listPages
	if s.alertsByList && s.alerts.failure == nil && alerts.InUse(&s.watch.Spec) {
		// Before any read of the list begins, so that it keeps this need.
		r.alertNeeds.Register(s.p.Key.String(), s.alertListRead(), alerts.NeedOf(&s.watch.Spec), needKeptFor(s.watch))
	}
	r.pacer.ReadsList(s.p.Key, s.sharedListGroup())
	s.fresh, s.level = r.pacer.Fresh(s.p), r.pacer.Level(s.p)
	return ctrl.Result{}, true
}

// readCredentials reads the credentials that admission knew only by their
// digests, for the parts that will call: a sync reads its Secrets at most
// once more after it was admitted, however long it waited. When a Secret
// changed since its digest was admitted, the sync starts again (the change
// wakes the watch anyway).
func (r *ServiceWatchReconciler) readCredentials(ctx context.Context, s *syncScope) (ctrl.Result, bool) {
	sameManagement, sameAlerts := true, true
	var wg sync.WaitGroup
	if m := s.management; m.unread && m.failure == nil {
		wg.Go(func() {
			s.management = managementOf(r.credentials.ReadManagement(ctx, s.watch))
			sameManagement = s.management.failure != nil || s.management.digest == m.digest
		})
	}
	if a := s.alerts; a.unread && a.failure == nil && !s.alertsDeferred {
		wg.Go(func() {
			s.alerts = alertOf(r.credentials.ReadAlert(ctx, s.watch))
			sameAlerts = s.alerts.failure != nil || s.alerts.digest == a.digest
		})
	}
	wg.Wait()
	return ctrl.Result{RequeueAfter: time.Second}, sameManagement && sameAlerts
}

// announce marks the watch Reconciling before slow cloud calls when the
// user asked for the sync, so that `kubectl get` and kstatus show it is
// being worked on. It is best effort: the sync's own write follows. A new
// watch reads observedGeneration -1, which kstatus already shows as in
// progress: it costs no write of its own.
func (r *ServiceWatchReconciler) announce(ctx context.Context, s *syncScope) (ctrl.Result, bool) {
	if !s.p.Asked() || s.watch.Status.ObservedGeneration <= 0 {
		return ctrl.Result{}, true
	}
	if _, err := r.writeStatus(ctx, s.watch, statusChange{announce: requestedWork(s.watch)}); err != nil && !apierrors.IsNotFound(err) {
		// A deleted watch's write forgets it; any other failure is the
		// sync's own write's to retry.
		log.FromContext(ctx).Error(err, "announcing the sync")
	}
	return ctrl.Result{}, true
}

// startReads starts the cloud reads in the background; their end wakes the
// watch to write what they found.
func (r *ServiceWatchReconciler) startReads(ctx context.Context, s *syncScope) (ctrl.Result, bool) {
	r.fetches.Run(ctx, readRequest(s, func(ctx context.Context, slots *reads.Slots) []partResult {
		return readCloud(ctx, slottedCloud{Cloud: r.Cloud, slots: slots}, s)
	}))
	return ctrl.Result{}, true
}

// write ends a sync: build and patch the status, then tell of what changed
// (events, metrics, state metrics), then schedule the next sync. Its
// failures are the watch's, never the workqueue's: they are in status and
// in the schedule. p is the watch as the pacer sees it now.
func (r *ServiceWatchReconciler) write(ctx context.Context, watch *swv1.ServiceWatch, p paced, s *syncScope) ctrl.Result {
	before, err := r.writeStatus(ctx, watch, statusChange{synced: s})
	record := s.record()
	switch {
	case apierrors.IsNotFound(err):
		// Deleted while its read ran: there is no status left to write, no
		// event to emit and nothing to schedule. Its delete event may have
		// been handled before this write, so it is forgotten here too.
		log.FromContext(ctx).V(1).Info("the watch was deleted during its sync; nothing written")
		r.forget(p.Key)
		return ctrl.Result{}
	case errors.Is(err, errChangedDuringSync):
		log.FromContext(ctx).V(1).Info(err.Error())
		record.Outcome.Failed, record.Outcome.Transient = true, true
	case err != nil:
		// Retrying at once would call the cloud again for a status the API
		// server may refuse again: the write waits for the schedule's backoff
		// like any transient failure.
		log.FromContext(ctx).Error(err, "writing status; retrying on the backoff schedule")
		record.Outcome.Failed, record.Outcome.Transient = true, true
	default:
		r.tell(ctx, before, watch, s)
	}
	return periodic(r.pacer.Synced(p, record))
}

// tell reports a status written: events of what changed, the sync metrics,
// and the state metrics, with the items of the parts that just synced in
// full (s.results), within the room the status had.
func (r *ServiceWatchReconciler) tell(ctx context.Context, before, watch *swv1.ServiceWatch, s *syncScope) {
	r.emit(ctx, watch, r.episodes.events(before, watch, r.parts))
	recordSync(r.Metrics, watch, r.parts)
	fills := make([]func(*metrics.Watch), 0, len(s.results))
	for _, res := range s.results {
		fills = append(fills, res.metricItems)
	}
	shown := stateMetricsOf(watch, fills...)
	showSince(&shown, s.parts, s.tracking)
	shown.MaxItemBytes = s.statusRoom
	r.StateMetrics.Set(shown)
}

// fetches run the cloud reads of syncs in the background (reads): a
// worker starts a read and moves on, and the read's end wakes the watch
// again to write what was read. The calls of the reads are bounded per API
// host, per namespace and in all (slotQueue): a sync holds a host's slot
// only while it calls that host, work a user asked for goes first, and the
// namespaces that wait take turns.
type fetches = reads.Runner[types.NamespacedName, fetched]

// fetched is a sync whose read ended, and what the read found; results are
// nil when it ended without an answer (it panicked, or got no slot before
// the sync timeout).
type fetched struct {
	scope   *syncScope
	results []partResult
}

func newFetches(limits reads.SlotLimits, timeout time.Duration, now func() time.Time, slotWait func(pacing.Level, time.Duration)) *fetches {
	return reads.NewRunner[types.NamespacedName, fetched](limits, timeout, now, slotWait)
}

// readRequest is the background read of the sync s: read calls the cloud.
func readRequest(s *syncScope, read func(ctx context.Context, slots *reads.Slots) []partResult) reads.Request[types.NamespacedName, fetched] {
	return reads.Request[types.NamespacedName, fetched]{Key: s.p.Key, Tenant: s.p.Key.Namespace, Level: s.level,
		Interrupted: fetched{scope: s},
		Read: func(ctx context.Context, slots *reads.Slots) fetched {
			return fetched{scope: s, results: read(ctx, slots)}
		}}
}

// takeRead returns the sync of the watch whose read ended, if there is one,
// with what it found, and forgets it.
func (r *ServiceWatchReconciler) takeRead(key types.NamespacedName) (*syncScope, bool) {
	ended, ok := r.fetches.Take(key)
	if !ok {
		return nil, false
	}
	ended.Result.scope.ended(ended.Result.results, ended.StartedAt, ended.EndedAt)
	return ended.Result.scope, true
}

// syncParts are the parts of a sync, in the order their failures are
// reported in Ready and Stalled.
func syncParts() []part {
	return []part{pipesPart(), endpointsPart(), alertsPart()}
}

// admit asks the client for the calls the sync will make, so that no call is
// ever sent that the key's budget (or a 429's hold) does not allow, and no
// worker or read slot waits for one. The management calls are asked first;
// when the alert calls have no room after them, a periodic refresh goes on
// without them (their data and condition stay as they are), while work a user
// asked for waits until everything can be read.
//
// Reads that a read of another watch will answer (one under way, or one
// that just ended: see reads.Shared) ask for nothing, so that ten watches of
// one service spend two management calls, not twenty.
func (r *ServiceWatchReconciler) admit(ctx context.Context, in *syncScope) (ctrl.Result, bool) {
	in.admission = r.admission(in)
	if in.overShare {
		log.FromContext(ctx).Info("sync deferred: the namespace's cloud answers cost more than its share of decode work", "wait", in.wait)
	}
	if c := in.watch.Condition(swv1.ConditionReconciling); in.overSpent != "" && (c == nil || c.Reason != swv1.ReasonBudgetExceeded) {
		if _, err := r.writeStatus(ctx, in.watch, statusChange{announce: in.overSpent, waits: true}); err == nil {
			r.emit(ctx, in.watch, []event{newEvent(corev1.EventTypeWarning, swv1.ReasonBudgetExceeded, in.overSpent)})
		}
	}
	return ctrl.Result{RequeueAfter: in.wait}, in.wait <= 0
}

// admission is what the budgets admit of the sync's calls; see admit.
func (r *ServiceWatchReconciler) admission(in *syncScope) admission {
	key, level := in.p.Key, in.level
	if wait := ownWait(in.watch, r.clock.Now()); wait > 0 {
		return admission{wait: wait}
	}
	if wait := r.WorkShares.Wait(key.Namespace); wait > 0 { // its answers cost more than its share to decode
		return admission{wait: wait, overShare: true}
	}
	admitted := admission{unreserved: map[readKey]bool{}}
	withAlerts := alerts.InUse(&in.watch.Spec) && in.alerts.failure == nil
	// Alerts from the management API are asked for with its other calls, at
	// once: two asks of one budget by one watch would hold each other back.
	together := withAlerts && alerts.FromManagement(&in.watch.Spec)
	var batch []readKey
	size, n := r.Budgets.MaxBatch(alerts.API(&in.watch.Spec)), 0
	if withAlerts {
		if together && size > 0 {
			size = max(1, size-len(in.managementReads()))
		}
		batch = r.pacer.AlertBatch(key, in.alertReads(), size)
		var expected bool
		if n, expected = r.toReserve(in, batch, admitted.unreserved); expected {
			return admission{wait: expectRetry}
		}
		admitted.reservedPages = r.pagesToReserve(in, admitted.unreserved, size)
		n += max(0, admitted.reservedPages-1) // the list read counts its first page already
	}
	if in.management.failure == nil {
		keys := in.managementReads()
		m, expected := r.toReserve(in, keys, admitted.unreserved)
		if together {
			keys, m = append(keys, batch...), m+n
		}
		if expected {
			return admission{wait: expectRetry}
		}
		if m > 0 {
			if wait := r.ask(key, level, cloudapi.APIManagement, in.management.url, in.management.digest, m); wait > 0 {
				return r.waiting(in, ratebudget.BudgetID(cloudapi.APIManagement, in.management.url, in.management.digest), "management API key", wait)
			}
			r.expect(keys, admitted.unreserved)
		}
	}
	if withAlerts && !together && n > 0 {
		if wait := r.ask(key, level, alerts.API(&in.watch.Spec), in.alerts.url, in.alerts.digest, n); wait > 0 {
			if level == pacing.User {
				return r.waiting(in, ratebudget.BudgetID(alerts.API(&in.watch.Spec), in.alerts.url, in.alerts.digest), alerts.BudgetName(&in.watch.Spec), wait)
			}
			admitted.alertsDeferred, admitted.alertsRoomAt = true, r.clock.Now().Add(wait)
		} else {
			r.expect(batch, admitted.unreserved)
		}
	}
	if all := len(in.alertReads()); withAlerts && !admitted.alertsDeferred && len(batch) < all {
		admitted.alertBatch = make(map[string]bool, len(batch))
		for _, read := range batch {
			admitted.alertBatch[read.alertID] = true
		}
		r.pacer.Took(key, all, size)
	}
	r.pacer.Admitted(key)
	return admitted
}

// waiting is the admission of a sync that waits wait for room in budget id
// (key, in messages): work the user asked for says why when its namespace
// spent more than its share of the budget (pacing.Pacer.Spending); admit
// writes it (Reconciling, reason BudgetExceeded) once until the sync starts
// or ends, so a namespace that requests in a loop costs one write a sync.
func (r *ServiceWatchReconciler) waiting(in *syncScope, id, key string, wait time.Duration) admission {
	if s := r.pacer.Spending(id, in.p.Key.Namespace); in.p.Asked() && s.Over() {
		return admission{wait: wait, overSpent: s.Message(key)}
	}
	return admission{wait: wait}
}

// ask asks one budget for n calls of work at level (see pacing.Pacer.Ask),
// and counts a deferral when it has no room yet.
func (r *ServiceWatchReconciler) ask(key types.NamespacedName, level pacing.Level, api, url string, cred ratebudget.CredentialID, n int) time.Duration {
	id := ratebudget.BudgetID(api, url, cred)
	wait := r.pacer.Ask(key, level, pacing.Budget{
		ID:     id,
		Rate:   r.Budgets.Allowance(api, id),
		Admit:  func(n int) time.Duration { return r.Budgets.Admit(api, url, cred, n) },
		Waiter: pacing.Waiter{Namespace: key.Namespace, Weight: r.ShareWeights.Of(id, key.Namespace)},
	}, n)
	if wait > 0 {
		r.Metrics.RecordDeferral(api)
	}
	return wait
}

// toReserve counts the reads that need a call of their own, and marks the
// others unreserved; expected: one of those was just admitted for another
// watch and is about to begin (see reads.Shared.Expecting), so the watch
// looks again in a moment and joins it. A sync that must read fresh
// reserves every call: a finished read is no use to it, and one under way
// may end before it gets there.
func (r *ServiceWatchReconciler) toReserve(in *syncScope, keys []readKey, unreserved map[readKey]bool) (n int, expected bool) {
	for _, key := range keys {
		if !in.fresh {
			if r.shared.CoversWithin(key, maxAgeOf(in, key)) {
				unreserved[key] = true
				continue
			}
			expected = expected || r.shared.Expecting(key)
		}
		n++
	}
	return n, expected
}

// pagesToReserve are the pages of the watch's alert list that its sync
// reserves with its other calls: as many as the last read of the list took,
// as fit in a batch of size (see alerts.ListPages); 0 when the sync reads
// no list or another watch's read answers it. Reserved together, a list of
// several pages is read whole in one sync, the pacer starting it when the
// key has room for all of them.
func (r *ServiceWatchReconciler) pagesToReserve(in *syncScope, unreserved map[readKey]bool, size int) int {
	key := in.alertListRead()
	if !in.alertsByList || unreserved[key] {
		return 0
	}
	return alerts.ListPages(r.listPages.Of(key), 0, size)
}

// expect tells the shared reads that the reads of reads the sync reserved
// calls for are about to begin.
func (r *ServiceWatchReconciler) expect(keys []readKey, unreserved map[readKey]bool) {
	for _, key := range keys {
		if !unreserved[key] {
			r.shared.Expect(key)
		}
	}
}

// noteDemand records what the watch asks of its budgets at its interval, and
// the interval the budgets allow it (its own when they fit).
func (r *ServiceWatchReconciler) noteDemand(_ context.Context, in *syncScope) (ctrl.Result, bool) {
	var demands []pacing.Demand[readKey]
	if in.management.failure == nil {
		demands = append(demands, pacing.Demand[readKey]{
			API:    cloudapi.APIManagement,
			Budget: ratebudget.BudgetID(cloudapi.APIManagement, in.management.url, in.management.digest),
			Reads:  in.managementReads(),
		})
	}
	if api := alerts.API(&in.watch.Spec); alerts.InUse(&in.watch.Spec) && in.alerts.failure == nil {
		demands = append(demands, pacing.Demand[readKey]{
			API:    api,
			Budget: ratebudget.BudgetID(api, in.alerts.url, in.alerts.digest),
			Reads:  in.alertReads(), AcrossGroups: in.alertsByList,
		})
	}
	for i := range demands {
		demands[i].Label, demands[i].Allowed = ratebudget.FingerprintOf(demands[i].Budget), r.Budgets.Allowance(demands[i].API, demands[i].Budget)
		demands[i].Namespace, demands[i].Weight = in.p.Key.Namespace, r.ShareWeights.Of(demands[i].Budget, in.p.Key.Namespace)
	}
	in.allowed = r.pacer.Allow(in.p, demands)
	r.Metrics.PublishBudgetDemands(r.pacer.TakeDemandChanges)
	return ctrl.Result{}, true
}

// restoreHolds gives the client back, once after a start, the Retry-After
// holds the watches persisted (status.retryNotBefore): a 429 holds the key
// at its host for every watch that uses it, not only the one that got it,
// and another watch on that key is admitted only after the holds of all
// watches were restored, since the first start of a sync waits for this. A
// list that fails is tried again by the next start.
func (r *ServiceWatchReconciler) restoreHolds(ctx context.Context, _ *syncScope) (ctrl.Result, bool) {
	if r.holdsRestored.Load() {
		return ctrl.Result{}, true
	}
	r.holdsMu.Lock()
	defer r.holdsMu.Unlock()
	if r.holdsRestored.Load() {
		return ctrl.Result{}, true
	}
	var watches swv1.ServiceWatchList
	// Read only: no copy of every status out of the cache.
	if err := r.Client.List(ctx, &watches, client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "listing ServiceWatches to restore the cloud's Retry-After holds; trying again at the next sync")
		return ctrl.Result{}, true
	}
	now := r.clock.Now()
	for i := range watches.Items {
		w := &watches.Items[i]
		if w.Spec.Suspend || w.Status.RetryNotBefore == nil || !w.Status.RetryNotBefore.After(now) || len(w.Status.HeldBudgets) == 0 || w.Status.ObservedGeneration != w.Generation {
			continue
		}
		r.restoreHold(ctx, w)
	}
	r.holdsRestored.Store(true)
	return ctrl.Result{}, true
}

// restoreHold holds until retryNotBefore each budget the watch's status
// (of its current generation) names in heldBudgets that the watch still
// calls with: never another API, host or credential than the cloud asked
// to wait (an edited spec, a rotated Secret, an account that moved).
func (r *ServiceWatchReconciler) restoreHold(ctx context.Context, w *swv1.ServiceWatch) {
	m, a := r.accessOf(ctx, w, r.credentials.Versions(ctx, w))
	for api, b := range map[string]apiAccess{cloudapi.APIManagement: m.apiAccess, cloudapi.APIAlert: a.apiAccess} {
		if b.failure == nil && slices.Contains(w.Status.HeldBudgets, b.budget(api)) {
			r.Budgets.Hold(api, b.url, b.digest, w.Status.RetryNotBefore.Time)
		}
	}
}

// waitsAlone tells whether the watch's wait came from a 503 (ServerError):
// it holds back the watch, not every watch on its key (see cloudapi's
// honourRetryAfter).
func waitsAlone(w *swv1.ServiceWatch) bool {
	for _, t := range []string{swv1.ConditionPipesSynced, swv1.ConditionReversePrivateEndpointsSynced, swv1.ConditionAlertsSynced} {
		if c := w.Condition(t); c != nil && c.Reason == swv1.ReasonServerError {
			return true
		}
	}
	return false
}

// ownWait is what is left of the wait a 503 asked of this watch alone
// (waitsAlone): a sync the user requests waits for it too, as one held by a
// 429's budget does. A new spec (another URL, say) does not.
func ownWait(w *swv1.ServiceWatch, now time.Time) time.Duration {
	if t := w.Status.RetryNotBefore; t != nil && w.Generation == w.Status.ObservedGeneration && waitsAlone(w) {
		return t.Sub(now)
	}
	return 0
}

// maxAgeOf is how old a finished read of key may be for the sync to reuse
// it: a list for most of the watch's interval, others the freshness window.
func maxAgeOf(in *syncScope, key readKey) time.Duration {
	if key.kind != alertListReadKind {
		return 0
	}
	return listAge(in)
}
