package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/alerts"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/changes"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/cloudapi/slim"
	"github.com/servicewatch/servicewatch/internal/controller/reads"
	"github.com/servicewatch/servicewatch/internal/metrics"
)

// part is one independent piece of a sync. Everything that differs between
// the pipes, the reverse private endpoints and the alerts is declared here,
// once; reading the cloud, applying results to status, the Ready and Stalled
// summary, the conditions the controller owns (ownsCondition), events, the
// schedule and metrics all walk syncParts. A part need not be a list: one
// whose result is one value leaves count and list nil.
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
	// count is the number of items the status's summary reports; nil for
	// a part that is not a list (Ready's message and the item metrics
	// leave it out).
	count func(status *swv1.ServiceWatchStatus) int32
	// list is the part's list in status, for truncation; nil for a part
	// that is not a list: what it writes is never cut.
	list *statusList
}

// partResult is what one part read, ready to be applied to status.
type partResult struct {
	// failure is why the part failed, nil when it synced.
	failure *failure
	// apply writes what the part read into status. A part that failed as a
	// whole has none, so status keeps its last good data.
	apply func(status *swv1.ServiceWatchStatus) error
	// message is the part condition's message when the part synced.
	message string
	// metricItems puts the part's items, all of them and not only those
	// status keeps, into the state metrics' snapshot.
	metricItems func(*metrics.Watch)
	// deferred: the part did not run this time; its data and condition stay
	// as they are (or, when it never ran, its condition says why).
	deferred *failure
	// sayWhy: a deferred part's condition says why even when it has one
	// (a list read begun and left unfinished: its data stays the last
	// complete read's, older than its condition would tell).
	sayWhy bool
	// seen are the items the part read beyond those apply puts in status
	// (a list the client kept only part of), within the state metrics'
	// bound: their since is followed too.
	seen []changes.Item
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

func always(*swv1.ServiceWatch) bool { return true }

func pipesPart() part {
	return part{
		name:      "pipes",
		condition: swv1.ConditionPipesSynced,
		noun:      "pipes",
		inUse:     always,
		read:      readPipes,
		count:     func(s *swv1.ServiceWatchStatus) int32 { return s.Summary.Pipes },
		list: &statusList{
			field:    "pipes",
			keepRank: 2, // pipes are many: cut first
			sizes:    func(s *swv1.ServiceWatchStatus) []int { return bound.Charges(s.Pipes) },
			slim:     func(s *swv1.ServiceWatchStatus, budget int) { s.Pipes = slim.List(s.Pipes, budget, slim.Pipes) },
			cuts: func(s *swv1.ServiceWatchStatus) []string {
				return slim.Cuts("pipe", s.Pipes, func(p *swv1.Pipe) (*string, map[string]int32) { return p.ID, p.Omitted })
			},
			keep:      func(s *swv1.ServiceWatchStatus, n int) { s.Pipes = s.Pipes[:n] },
			attention: func(s *swv1.ServiceWatchStatus) []bool { return needsAttention(s.Pipes) },
			reorder:   func(s *swv1.ServiceWatchStatus, order []int) { s.Pipes = permuted(s.Pipes, order) },
			length:    func(s *swv1.ServiceWatchStatus) int { return len(s.Pipes) },
			total:     func(w *swv1.ServiceWatch) int { return int(w.Status.Summary.Pipes) },
			track: tracked{
				kind: changes.KindPipe,
				items: func(s *swv1.ServiceWatchStatus) []changes.Item {
					return itemsOf(s.Pipes, func(p *swv1.Pipe) changes.Item {
						return changes.Item{ID: ptr.Deref(p.ID, ""), Name: ptr.Deref(p.Name, ""), State: ptr.Deref(p.State, ""), Since: ptr.Deref(p.Since, metav1.Time{}).Time}
					})
				},
				setSince: func(s *swv1.ServiceWatchStatus, since map[string]time.Time) {
					for i := range s.Pipes {
						s.Pipes[i].Since = sinceOf(since, s.Pipes[i].ID)
					}
				},
			},
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
type pipesRead = listRead[swv1.Pipe, metrics.Pipe]

// endpointsRead is what one list of reverse private endpoints gives.
type endpointsRead = listRead[swv1.ReversePrivateEndpoint, metrics.Endpoint]

// listPart says how one list of the management API is read and shown: kind
// keys the shared read, list calls the cloud, apply puts what it read into
// the status and show into the state metrics' watch.
type listPart[T, M any] struct {
	kind, noun string
	list       func(context.Context, Cloud, *syncScope) (listRead[T, M], error)
	apply      func(*swv1.ServiceWatchStatus, listRead[T, M]) error
	show       func(w *metrics.Watch, items []M, total int)
	// seen are the metric items as detection sees them.
	seen func(items []M) []changes.Item
}

// readList reads one of the watch's lists of the management API: shared
// with the watches that read the same, asking the budget at call time when
// admission left it to a shared read.
func readList[T, M any](ctx context.Context, cloud Cloud, in *syncScope, lp listPart[T, M]) partResult {
	if in.management.failure != nil {
		return partResult{failure: in.management.failure}
	}
	key := in.listRead(lp.kind)
	read, err := reads.Do(ctx, in.shared, key, in.fresh, func(ctx context.Context) (listRead[T, M], error) {
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
		apply:       func(s *swv1.ServiceWatchStatus) error { return lp.apply(s, read) },
		metricItems: func(w *metrics.Watch) { lp.show(w, read.items, read.list.Total) },
		seen:        lp.seen(read.items),
	}
}

func readPipes(ctx context.Context, cloud Cloud, in *syncScope) partResult {
	return readList(ctx, cloud, in, listPart[swv1.Pipe, metrics.Pipe]{
		kind: pipesReadKind, noun: "pipes", list: listPipes, apply: applyPipes, show: showPipes,
		seen: func(items []metrics.Pipe) []changes.Item {
			return itemsOf(items, func(p *metrics.Pipe) changes.Item { return changes.Item{ID: p.ID, Name: p.Name, State: p.State} })
		}})
}

// listPipes calls the cloud. The client keeps what fits the status; the
// counts and the metric items see every pipe.
func listPipes(ctx context.Context, cloud Cloud, in *syncScope) (pipesRead, error) {
	byState := bound.NewTally(maxCountedStates, maxPipeStateBytes, otherPipeStates)
	items := newCollector(in.metricBytes, pipeItem)
	list, err := cloud.ListPipes(ctx, in.management.url, in.management.creds, in.watch.Spec.OrganizationID, in.watch.Spec.ServiceID,
		cloudapi.ListOptions[swv1.Pipe]{KeepBytes: in.keepBytes, KeepEncoded: true, Charge: bound.GoSize[swv1.Pipe], Work: in.chargeWork, Each: func(p *swv1.Pipe) {
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
func showPipes(w *metrics.Watch, items []metrics.Pipe, total int) {
	w.Pipes, w.PipesTotal = items, total
}

// applyPipes puts what a list of pipes read into the status: the items
// kept, the total and the count by state. The list kept its items encoded
// (ListOptions.KeepEncoded): a read that waits for its write holds their
// JSON, a few times smaller than the items decoded, and each watch that
// shares the read decodes its own copy.
func applyPipes(s *swv1.ServiceWatchStatus, read pipesRead) error {
	pipes, err := read.list.Encoded.Decode()
	if err != nil {
		return err
	}
	s.Pipes = pipes
	s.Summary.Pipes = int32(read.list.Total)
	s.Summary.PipesByState = maps.Clone(read.byState)
	return nil
}

func endpointsPart() part {
	return part{
		name:      "reverse_private_endpoints",
		condition: swv1.ConditionReversePrivateEndpointsSynced,
		noun:      "reverse private endpoints",
		inUse:     always,
		read:      readEndpoints,
		count:     func(s *swv1.ServiceWatchStatus) int32 { return s.Summary.ReversePrivateEndpoints },
		list: &statusList{
			field:    "reversePrivateEndpoints",
			keepRank: 0, // endpoints are few and pipes reference them: kept first
			sizes:    func(s *swv1.ServiceWatchStatus) []int { return bound.Charges(s.ReversePrivateEndpoints) },
			slim: func(s *swv1.ServiceWatchStatus, budget int) {
				s.ReversePrivateEndpoints = slim.List(s.ReversePrivateEndpoints, budget, slim.Endpoints)
			},
			cuts: func(s *swv1.ServiceWatchStatus) []string {
				return slim.Cuts("endpoint", s.ReversePrivateEndpoints, func(e *swv1.ReversePrivateEndpoint) (*string, map[string]int32) { return e.ID, e.Omitted })
			},
			keep:      func(s *swv1.ServiceWatchStatus, n int) { s.ReversePrivateEndpoints = s.ReversePrivateEndpoints[:n] },
			attention: func(s *swv1.ServiceWatchStatus) []bool { return needsAttention(s.ReversePrivateEndpoints) },
			reorder: func(s *swv1.ServiceWatchStatus, order []int) {
				s.ReversePrivateEndpoints = permuted(s.ReversePrivateEndpoints, order)
			},
			length: func(s *swv1.ServiceWatchStatus) int { return len(s.ReversePrivateEndpoints) },
			total:  func(w *swv1.ServiceWatch) int { return int(w.Status.Summary.ReversePrivateEndpoints) },
			track: tracked{
				kind: changes.KindReversePrivateEndpoint,
				items: func(s *swv1.ServiceWatchStatus) []changes.Item {
					return itemsOf(s.ReversePrivateEndpoints, func(e *swv1.ReversePrivateEndpoint) changes.Item {
						return changes.Item{ID: ptr.Deref(e.ID, ""), Name: ptr.Deref(e.Description, ""), State: ptr.Deref(e.Status, ""), Since: ptr.Deref(e.Since, metav1.Time{}).Time}
					})
				},
				setSince: func(s *swv1.ServiceWatchStatus, since map[string]time.Time) {
					for i := range s.ReversePrivateEndpoints {
						s.ReversePrivateEndpoints[i].Since = sinceOf(since, s.ReversePrivateEndpoints[i].ID)
					}
				},
			},
		},
	}
}

func readEndpoints(ctx context.Context, cloud Cloud, in *syncScope) partResult {
	return readList(ctx, cloud, in, listPart[swv1.ReversePrivateEndpoint, metrics.Endpoint]{
		kind: endpointsReadKind, noun: "reverse private endpoints", list: listEndpoints, apply: applyEndpoints, show: showEndpoints,
		seen: func(items []metrics.Endpoint) []changes.Item {
			return itemsOf(items, func(e *metrics.Endpoint) changes.Item { return changes.Item{ID: e.ID, State: e.Status} })
		}})
}

// listEndpoints calls the cloud; the metric items see every endpoint.
func listEndpoints(ctx context.Context, cloud Cloud, in *syncScope) (endpointsRead, error) {
	items := newCollector(in.metricBytes, endpointItem)
	list, err := cloud.ListReversePrivateEndpoints(ctx, in.management.url, in.management.creds, in.watch.Spec.OrganizationID, in.watch.Spec.ServiceID,
		cloudapi.ListOptions[swv1.ReversePrivateEndpoint]{KeepBytes: in.keepBytes, KeepEncoded: true, Charge: bound.GoSize[swv1.ReversePrivateEndpoint], Work: in.chargeWork, Each: items.add})
	if err != nil {
		return endpointsRead{}, err
	}
	return endpointsRead{list: list, items: items.items.Items()}, nil
}

// showEndpoints gives the state metrics every endpoint a list read.
func showEndpoints(w *metrics.Watch, items []metrics.Endpoint, total int) {
	w.Endpoints, w.EndpointsTotal = items, total
}

// applyEndpoints puts what a list of endpoints read into the status.
func applyEndpoints(s *swv1.ServiceWatchStatus, read endpointsRead) error {
	endpoints, err := read.list.Encoded.Decode()
	if err != nil {
		return err
	}
	s.ReversePrivateEndpoints = endpoints
	s.Summary.ReversePrivateEndpoints = int32(read.list.Total)
	return nil
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

// itemsOf is items as detection sees them.
func itemsOf[T any](items []T, of func(*T) changes.Item) []changes.Item {
	if len(items) == 0 {
		return nil
	}
	out := make([]changes.Item, len(items))
	for i := range items {
		out[i] = of(&items[i])
	}
	return out
}

// collector gathers the metric items of a list while the client streams it,
// those the state metrics' bound in bytes keeps: a list of a million items
// with long names costs the bound, not the list.
type collector[T any, M metrics.Item] struct {
	items   *metrics.Selection[M]
	project func(*T) M
}

func newCollector[T any, M metrics.Item](maxBytes int, project func(*T) M) collector[T, M] {
	return collector[T, M]{items: metrics.NewSelection[M](maxBytes), project: project}
}

func (c collector[T, M]) add(item *T) { c.items.Add(c.project(item)) }

func alertsPart() part {
	return part{
		name:      "alerts",
		condition: swv1.ConditionAlertsSynced,
		noun:      "alerts",
		inUse:     func(w *swv1.ServiceWatch) bool { return alerts.InUse(&w.Spec) },
		read:      readAlerts,
		count:     func(s *swv1.ServiceWatchStatus) int32 { return s.Summary.Alerts },
		list: &statusList{
			field:    "alerts",
			keepRank: 1, // the alerts the user named, then those a selector matched
			sizes:    func(s *swv1.ServiceWatchStatus) []int { return bound.Charges(s.Alerts) },
			slim:     func(s *swv1.ServiceWatchStatus, budget int) { s.Alerts = slim.List(s.Alerts, budget, slim.Alerts) },
			cuts: func(s *swv1.ServiceWatchStatus) []string {
				return slim.Cuts("alert", s.Alerts, func(a *swv1.AlertStatus) (*string, map[string]int32) { return &a.ID, a.Omitted })
			},
			keep:      func(s *swv1.ServiceWatchStatus, n int) { s.Alerts = s.Alerts[:n] },
			attention: func(s *swv1.ServiceWatchStatus) []bool { return needsAttention(s.Alerts) },
			reorder:   func(s *swv1.ServiceWatchStatus, order []int) { s.Alerts = permuted(s.Alerts, order) },
			length:    func(s *swv1.ServiceWatchStatus) int { return len(s.Alerts) },
			total:     func(w *swv1.ServiceWatch) int { return int(w.Status.Summary.Alerts) },
			track: tracked{
				kind: changes.KindAlert,
				items: func(s *swv1.ServiceWatchStatus) []changes.Item {
					return itemsOf(s.Alerts, func(a *swv1.AlertStatus) changes.Item {
						// An alert whose fetch failed shows its last good state.
						return changes.Item{ID: a.ID, Name: a.Label(), State: ptr.Deref(a.State, ""), Since: ptr.Deref(a.Since, metav1.Time{}).Time, Stale: a.Error != ""}
					})
				},
				setSince: func(s *swv1.ServiceWatchStatus, since map[string]time.Time) {
					for i := range s.Alerts {
						s.Alerts[i].Since = sinceOf(since, &s.Alerts[i].ID)
					}
				},
			},
		},
	}
}

// readAlerts reads the watch's alerts: from the host's list where it lists
// (one read per interval shared by the watches on the host and credential),
// else one alert ID at a time, a few at once.
func readAlerts(ctx context.Context, cloud Cloud, in *syncScope) partResult {
	w := in.watch
	switch {
	case !alerts.InUse(&w.Spec):
		return alertsResult(nil, 0, "", "")
	case in.alertsDeferred:
		return partResult{deferred: newFailure(swv1.ReasonRateLimited, "waiting for room in the %s's rate budget until %s; the alerts keep their last data until then",
			alerts.BudgetName(&w.Spec), in.alertsRoomAt.UTC().Format("15:04:05 MST"))}
	case in.alerts.failure != nil:
		return wholeFailed(w, in.alerts.failure)
	case !in.alertsByList && w.Spec.AlertSelector != nil:
		return wholeFailed(w, asFailure(alerts.NoListRoute(in.alerts.url)))
	case !in.alertsByList:
		return readOneByOne(ctx, cloud, in, false)
	}
	listing, err := readAlertList(ctx, cloud, in)
	switch {
	case errors.Is(err, cloudapi.ErrNoListRoute):
		in.routes.NoList(alerts.RouteOf(in.alertSource(), in.alerts.digest))
		if w.Spec.AlertSelector != nil {
			return wholeFailed(w, asFailure(alerts.NoListRoute(in.alerts.url)))
		}
		return readOneByOne(ctx, cloud, in, true)
	case err != nil:
		res := readFailed(err)
		res.sayWhy = unfinished(err)
		return res
	case !listing.Serves(alerts.NeedOf(&w.Spec)):
		// Rare: read twice, for others' needs each time (see readAlertList).
		return wholeFailed(w, newFailure(swv1.ReasonUnreachable, "the host's alert list was read for the other watches that share it before this watch's selector; reading it again"))
	}
	in.routes.Listed(alerts.RouteOf(in.alertSource(), in.alerts.digest))
	picked := alerts.Pick(w.Spec.AlertIDs, w.Spec.AlertSelector, listing)
	if waiting := readUnread(ctx, cloud, in, picked); waiting != nil {
		return partResult{deferred: waiting}
	}
	return alertsResult(picked.Entries, picked.Matched, listing.Stopped(), swv1.AlertsReadByList)
}

// readAlertList reads the host's list for the watches that share it, once for
// them all within the list's age; a list another watch read for needs
// that leave this watch's selector out is no use to it, and it reads the
// list afresh (its need is registered first, so that the fresh read keeps
// it).
func readAlertList(ctx context.Context, cloud Cloud, in *syncScope) (*alerts.Index, error) {
	key, need := in.alertListRead(), alerts.NeedOf(&in.watch.Spec)
	in.alertNeeds.Register(in.p.Key.String(), key, need, needKeptFor(in.watch))
	maxAge, ask := listAge(in), false
	for {
		listing, err := reads.DoWithin(ctx, in.shared, key, maxAge, func(ctx context.Context) (*alerts.Index, error) {
			// Kept for the watches that share the list: what they use of it.
			filter := alerts.NewFilter(append(in.alertNeeds.Of(key), need), listKeepBytes(in))
			c := filter.Collect()
			l, err := listAlerts(ctx, cloud, in, c.Keep, ask)
			return c.Index(l.Read, l.Seen.Has, l.Stopped), err
		})
		if err != nil || listing.Serves(need) || ask {
			return listing, err
		}
		maxAge, ask = -1, true // a read that admission did not reserve: it asks the budget
	}
}

// listKeepBytes is what a list keeps for each watch that shares it: twice
// what a status keeps, so that a status's own cut (which slims its items
// before it drops any) still chooses among more than fit.
func listKeepBytes(in *syncScope) int { return 2 * max(in.keepBytes, 64<<10) }

// needKeptFor is how long a watch's need of its list is remembered
// without a sync: two intervals, so that it is there for the read of the
// watch's next round, and gone soon after the watch is.
func needKeptFor(w *swv1.ServiceWatch) time.Duration { return 2*w.Spec.SyncInterval() + time.Minute }

// readUnread reads on their own the IDs the list read but did not keep
// (named after it was read), a few at a time; waiting says one of them
// waits for the budget.
func readUnread(ctx context.Context, cloud Cloud, in *syncScope, picked alerts.Picked) *failure {
	deferred := make([]*failure, len(picked.Unread))
	limit := make(chan struct{}, max(1, in.alertConcurrency))
	var wg sync.WaitGroup
	for i, at := range picked.Unread {
		wg.Go(func() {
			limit <- struct{}{}
			defer func() { <-limit }()
			picked.Entries[at], deferred[i] = readAlert(ctx, cloud, in, picked.Entries[at].ID, true)
		})
	}
	wg.Wait()
	for _, d := range deferred {
		if d != nil {
			return d
		}
	}
	return nil
}

// listAlerts pages through the host's list, handing each alert to keep.
// As many pages as the last read took were admitted with the sync (see
// pagesToReserve; ask: none); each further page asks the budget as it
// goes, waiting a little for room (admitPage), so a long list never sends
// a call the budget did not admit. Each page's work is charged to the
// namespace's decode share.
func listAlerts(ctx context.Context, cloud Cloud, in *syncScope, keep alerts.Keep, ask bool) (alerts.Listing, error) {
	src, key := in.alertSource(), in.alertListRead()
	// called counts the pages asked for; needed is what the list's total
	// says a whole read takes.
	called, needed := 0, in.pageCounts.Of(key)
	l, err := alerts.ReadAll(ctx, cloudapi.MaxAlertPageLimit, func(ctx context.Context, offset int, each func(*cloudapi.AlertResult) int) (cloudapi.AlertPage, error) {
		called++
		if err := admitPage(ctx, in, src.API, key, listPage{at: called, of: needed, ask: ask}); err != nil {
			return cloudapi.AlertPage{}, err
		}
		page, err := cloud.ListAlerts(ctx, src, cloudapi.AlertPageRequest{Limit: cloudapi.MaxAlertPageLimit, Offset: offset, Each: each, Work: in.chargeWork})
		if err == nil && page.Total >= 0 {
			needed = max(needed, alerts.PagesFor(page.Total, cloudapi.MaxAlertPageLimit))
		}
		return page, err
	}, keep)
	// The next sync reserves the pages this read took, or, when it did not
	// end, at least those its list's total showed it needs.
	switch {
	case err == nil:
		in.pageCounts.Note(key, l.Pages, needKeptFor(in.watch))
	case needed > in.pageCounts.Of(key):
		in.pageCounts.Note(key, needed, needKeptFor(in.watch))
	}
	return l, err
}

// unfinished tells whether err left a list read halfway, a page past the
// first refused room in the budget: the alerts keep their last complete
// list, and the condition says why.
func unfinished(err error) bool {
	refused, ok := errors.AsType[*budgetRefusalError](err)
	return ok && refused.page > 1
}

// listPage is a page of an alert list about to be read: at, from 1, of
// the pages the list is known to need (0: unknown); ask: admission
// reserved none of them.
type listPage struct {
	at, of int
	ask    bool
}

// admitPage asks the budget for the call of page, unless the sync's
// admission reserved it (see admission.reservedPages; the first page, when
// the sync reserved the list read at all). A short wait for room it waits
// out (alerts.MayWaitForPage): the pages of a list make one read, and a
// read left to the next sync would begin again from its first page, and
// never end while the key is busy. A longer wait, or the sync's context
// ending, is the refusal (a deferral: the alerts keep their last list).
func admitPage(ctx context.Context, in *syncScope, api string, key readKey, page listPage) error {
	if !page.ask && !in.unreserved[key] && page.at <= max(1, in.reservedPages) {
		return nil
	}
	every, left := in.watch.Spec.SyncInterval(), untilDeadline(ctx)
	for waited := time.Duration(0); ; {
		wait := in.budgets.Admit(api, key.url, key.credential, 1)
		if wait <= 0 {
			return nil
		}
		refusal := &budgetRefusalError{api: api, wait: wait, page: page.at, pages: page.of}
		if !alerts.MayWaitForPage(waited, wait, every, left) || sleep(ctx, wait) != nil {
			return refusal
		}
		waited += wait
	}
}

// untilDeadline is the time left to ctx's deadline; 0 when it has none.
func untilDeadline(ctx context.Context) time.Duration {
	if at, ok := ctx.Deadline(); ok {
		return max(time.Nanosecond, time.Until(at))
	}
	return 0
}

// sleep waits d, or until ctx ends (its error).
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for room in the rate budget: %w", ctx.Err())
	}
}

// readOneByOne fetches every alert ID of the spec, a few at a time: a
// bounded fan-out keeps one watch with 100 alerts from monopolising the
// manager. askEach: admission reserved a list read, not these calls, so
// each asks the budget for itself.
func readOneByOne(ctx context.Context, cloud Cloud, in *syncScope, askEach bool) partResult {
	ids := in.watch.Spec.AlertIDs
	entries := make([]alerts.Entry, len(ids))
	deferred := make([]*failure, len(ids))
	limit := make(chan struct{}, max(1, in.alertConcurrency))
	var wg sync.WaitGroup
	for i, id := range ids {
		if in.alertBatch != nil && !in.alertBatch[id] {
			entries[i] = alerts.Later(&in.watch.Spec, in.watch.Status.Alerts, id, len(in.alertBatch))
			continue
		}
		wg.Go(func() {
			limit <- struct{}{}
			defer func() { <-limit }()
			entries[i], deferred[i] = readAlert(ctx, cloud, in, id, askEach)
		})
	}
	wg.Wait()
	for _, d := range deferred {
		if d != nil {
			// Rare (see admitAtCall): the part waits for the next sync
			// whole, as when admission defers it.
			return partResult{deferred: d}
		}
	}
	return alertsResult(entries, 0, "", swv1.AlertsReadOneByOne)
}

// readAlert fetches one alert; waiting says that its call waits for the
// budget. A panic is the entry's failure.
func readAlert(ctx context.Context, cloud Cloud, in *syncScope, id string, askEach bool) (e alerts.Entry, waiting *failure) {
	var panicked *failure
	defer func() {
		e.ID, e.SelectedBy, e.Failed = id, swv1.SelectedByID, entryFailure(panicked, e.Failed)
	}()
	defer recoverAs(&panicked)
	key, src := in.alertRead(id), in.alertSource()
	got, err := reads.Do(ctx, in.shared, key, in.fresh, func(ctx context.Context) (cloudapi.AlertResult, error) {
		if err := in.admitAtCall(src.API, key, askEach); err != nil {
			return cloudapi.AlertResult{}, err
		}
		got, err := cloud.GetAlertFrom(ctx, src, id)
		got.Alert.ID = id // the entry is keyed by the ID the user asked for
		return got, err
	})
	if err != nil {
		if waiting := deferral(err); waiting != nil {
			return alerts.Entry{}, waiting
		}
		return alerts.Entry{Failed: entryFailure(cloudFailure(err), nil)}, nil
	}
	return alerts.Entry{Alert: &got.Alert, LeftOut: got.LeftOut}, nil
}

// alertsResult is the alerts part's result: its entries (see
// alerts.Apply) and its condition. Unlike the lists, the alerts part
// applies even when some entries failed: each keeps its last successful
// fetch and says why.
func alertsResult(entries []alerts.Entry, matched int, stopped, readBy string) partResult {
	told := alerts.Tell(entries, stopped)
	res := partResult{message: told.Message, failure: asFailure(told.Failure)}
	var full []swv1.AlertStatus // what apply wrote, before any truncation
	res.metricItems = func(w *metrics.Watch) {
		w.Alerts, w.AlertsTotal = alerts.Items(full), len(full)+max(0, matched-alerts.MaxSelected)
	}
	res.apply = func(s *swv1.ServiceWatchStatus) error {
		full = alerts.Apply(s, entries, matched, readBy)
		return nil
	}
	return res
}

// wholeFailed is the result of an alerts part that could not read at all:
// every entry keeps its last data and says why; the condition carries f.
func wholeFailed(w *swv1.ServiceWatch, f *failure) partResult {
	res := alertsResult(alerts.AllFailed(&w.Spec, w.Status.Alerts, entryFailure(f, nil)), 0, "", w.Status.AlertsReadBy)
	res.failure = f
	return res
}

// asFailure is an entry's failure as the part's.
func asFailure(f *alerts.ReadError) *failure {
	if f == nil {
		return nil
	}
	return &failure{reason: f.Reason, message: f.Message, retryAfter: f.RetryAfter}
}

// entryFailure is f as an entry's failure; or, when f is nil, otherwise.
func entryFailure(f *failure, otherwise *alerts.ReadError) *alerts.ReadError {
	if f == nil {
		return otherwise
	}
	return &alerts.ReadError{Reason: f.reason, Message: f.message, RetryAfter: f.retryAfter}
}
