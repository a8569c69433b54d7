package storagemigration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// FieldOwner is the field manager of the migration's writes. Its writes
// change no field, so the API server records no entry of it.
const FieldOwner = "servicewatch-storage-migration"

// Defaults of the Migrator's knobs.
const (
	// DefaultPageSize bounds the objects one list returns, so that ten
	// thousand watches are never in memory at once.
	DefaultPageSize = 500
	// DefaultProgressEvery is how many objects go between progress lines.
	DefaultProgressEvery = 1000
)

// maxFailuresShown bounds the objects a failed run names in its error.
const maxFailuresShown = 5

// errNoRights is a CRD the manager may not read, or whose objects it may
// not list: a namespaced install. Trying again would not help. A write
// refused for one object (by a policy, say) is no such thing, even though
// the API server says Forbidden for both; it is tried again.
var errNoRights = errors.New("no right to read the CRD or to list its objects")

// classifyRights marks a read refused as forbidden with errNoRights.
func classifyRights(err error) error {
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("%w: %w", errNoRights, err)
	}
	return err
}

// Migrator rewrites the objects of CRDs in their storage version and trims
// their status.storedVersions, once per leadership. It is a manager
// Runnable that only the leader runs: the controllers keep running while it
// works, and objects stay readable in every served version throughout
// (the CRDs convert with conversion None).
type Migrator struct {
	// Client reads and writes the CRDs and their objects directly: a cache
	// would hold every object's metadata at once, which paging avoids. Its
	// scheme must know apiextensions.k8s.io/v1.
	Client client.Client
	// CRDs are the names of the CRDs to migrate.
	CRDs []string
	// Metrics, when set, say whether a migration is pending and what it did.
	Metrics *Metrics
	// Log receives the start, progress and outcome of each CRD's migration.
	Log logr.Logger
	// PageSize bounds the objects one list returns; default DefaultPageSize.
	PageSize int64
	// ProgressEvery is how many objects go between two progress lines;
	// default DefaultProgressEvery.
	ProgressEvery int
	// Clock times the runs and the waits between them; default the real one.
	Clock clock.Clock
	// Backoff spaces the attempts after a failed run; default from 1 s,
	// doubling up to 5 min, for as long as the manager runs.
	Backoff *wait.Backoff

	// afterObject, when set, is called after each object is handled, with
	// how many of that CRD's objects were; tests interrupt a run there.
	afterObject func(crd string, done int)
}

var _ manager.LeaderElectionRunnable = (*Migrator)(nil)

// NeedLeaderElection says that only the leader migrates: two replicas
// would only do the same writes twice.
func (m *Migrator) NeedLeaderElection() bool { return true }

// Start migrates each CRD, and tries again with backoff those whose
// migration failed, until all are done or ctx ends; once a CRD is migrated,
// it counts the objects whose managed fields the manager cannot clean
// (reportStale). It never returns an error: a migration that cannot finish
// must not stop the controllers, and servicewatch_storage_migration_pending
// says it is still pending.
func (m *Migrator) Start(ctx context.Context) error {
	backoff := *m.backoff() // a copy: Step advances it
	todo := slices.Clone(m.CRDs)
	for {
		todo = slices.DeleteFunc(todo, func(name string) bool {
			switch outcome, _ := m.Migrate(ctx, name); outcome {
			case OutcomeFailed:
				return false
			case OutcomeMigrated, OutcomeUpToDate:
				m.reportStale(ctx, name)
			}
			return true
		})
		if len(todo) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-m.clock().After(backoff.Step()):
		}
	}
}

// Migrate migrates one CRD and returns its outcome; the error says why it
// failed (or was forbidden). It is safe to interrupt (storedVersions is
// trimmed only after every object was written) and to run again (a CRD
// already migrated costs one read and no write).
func (m *Migrator) Migrate(ctx context.Context, name string) (string, error) {
	log := m.Log.WithValues("crd", name)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := m.Client.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		return m.stopped(log, name, fmt.Errorf("reading CRD %s: %w", name, classifyRights(err)))
	}
	p, err := planFor(crd)
	if err != nil {
		return m.stopped(log, name, err)
	}
	if !p.rewrite {
		m.Metrics.setPending(name, false)
		m.Metrics.run(name, OutcomeUpToDate)
		log.Info("Storage migration not needed: every object is stored in the storage version; nothing written", "storageVersion", p.storage)
		return OutcomeUpToDate, nil
	}
	m.Metrics.setPending(name, true)
	start := m.clock().Now()
	log.Info("Storage migration started", "storageVersion", p.storage, "storedVersions", crd.Status.StoredVersions, "servedVersions", p.served)
	c, err := m.rewriteAll(ctx, log, crd, p)
	if err == nil {
		err = m.trimStoredVersions(ctx, crd, p.storage)
	}
	if err != nil {
		log.Info("Storage migration progress when it stopped", c.keysAndValues(m.clock().Since(start))...)
		return m.stopped(log, name, err)
	}
	m.Metrics.setPending(name, false)
	m.Metrics.run(name, OutcomeMigrated)
	log.Info("Storage migration done: storedVersions is the storage version alone", append([]any{"storageVersion", p.storage}, c.keysAndValues(m.clock().Since(start))...)...)
	return OutcomeMigrated, nil
}

// stopped logs and counts a migration that could not finish. No rights
// (errNoRights) is final: whoever installs the CRDs migrates them.
// Anything else is tried again; storedVersions was left as it was either
// way.
func (m *Migrator) stopped(log logr.Logger, name string, err error) (string, error) {
	if errors.Is(err, errNoRights) {
		m.Metrics.run(name, OutcomeForbidden)
		log.Info("Storage migration skipped: the manager may not read this CRD or all its objects (a namespaced install?); whoever installs the CRDs must migrate them", "error", err.Error())
		return OutcomeForbidden, err
	}
	m.Metrics.run(name, OutcomeFailed)
	if errors.Is(err, context.Canceled) {
		log.Info("Storage migration interrupted; storedVersions left as it was, the next leader starts again")
		return OutcomeFailed, err
	}
	log.Error(err, "Storage migration stopped; storedVersions left as it was, to be tried again")
	return OutcomeFailed, err
}

// counts are what one run did to a CRD's objects.
type counts struct{ seen, rewritten, unchanged, gone, failed int }

func (c counts) keysAndValues(d time.Duration) []any {
	return []any{"objects", c.seen, "rewritten", c.rewritten, "unchanged", c.unchanged, "gone", c.gone, "failed", c.failed, "duration", d.Round(time.Millisecond).String()}
}

func (c *counts) add(result string) {
	switch result {
	case ResultRewritten:
		c.rewritten++
	case ResultUnchanged:
		c.unchanged++
	case ResultGone:
		c.gone++
	case ResultFailed:
		c.failed++
	}
}

// rewriteAll writes every object of crd once, a page at a time. An object
// that cannot be written is counted and the others go on; the run then
// fails, so that storedVersions keeps the version it may still be in.
func (m *Migrator) rewriteAll(ctx context.Context, log logr.Logger, crd *apiextensionsv1.CustomResourceDefinition, p plan) (counts, error) {
	var c counts
	var failures []error
	err := m.eachObject(ctx, crd, p, func(obj *metav1.PartialObjectMetadata) error {
		result, err := m.rewrite(ctx, p, obj)
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted after %d objects: %w", c.seen, ctx.Err())
		}
		c.seen++
		c.add(result)
		m.Metrics.object(crd.Name, result)
		if err != nil {
			log.Error(err, "Storage migration could not rewrite an object", "object", client.ObjectKeyFromObject(obj).String())
			failures = append(failures, fmt.Errorf("%s: %w", client.ObjectKeyFromObject(obj), err))
		}
		if c.seen%m.progressEvery() == 0 {
			log.Info("Storage migration progress", "objects", c.seen, "rewritten", c.rewritten)
		}
		if m.afterObject != nil {
			m.afterObject(crd.Name, c.seen)
		}
		return nil
	})
	if err != nil {
		return c, err
	}
	if len(failures) > 0 {
		return c, fmt.Errorf("%d of %d objects not rewritten: %w", len(failures), c.seen, errors.Join(failures[:min(len(failures), maxFailuresShown)]...))
	}
	return c, nil
}

// eachObject calls fn with every object of crd, as metadata in the storage
// version, a page at a time (ten thousand watches are never in memory at
// once); it stops at fn's first error.
func (m *Migrator) eachObject(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, p plan, fn func(*metav1.PartialObjectMetadata) error) error {
	gvk := schema.GroupVersionKind{Group: p.group, Version: p.storage, Kind: crd.Spec.Names.Kind}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(crd.Spec.Names.ListKind))
	for {
		if err := m.Client.List(ctx, list, client.Limit(m.pageSize()), client.Continue(list.GetContinue())); err != nil {
			return fmt.Errorf("listing %s: %w", crd.Spec.Names.Plural, classifyRights(err))
		}
		for i := range list.Items {
			obj := &list.Items[i]
			obj.SetGroupVersionKind(gvk)
			if err := fn(obj); err != nil {
				return err
			}
		}
		if list.GetContinue() == "" {
			return nil
		}
	}
}

// rewrite writes obj once so that the API server encodes it anew in the
// storage version.
//
// The write is a merge patch of {}: the API server decodes the object,
// encodes it in the storage version and skips the etcd write only when the
// bytes are the same, which they are not while the stored apiVersion is an
// older one (TestEmptyPatchRewritesOnlyAnOlderEncoding reads etcd to prove
// it). It goes to /status when the CRD has that subresource: the manager
// may write status only, and users' admission webhooks guard the main
// resource, not status, as a rule. It carries no resourceVersion, so a concurrent
// write never makes it fail with a conflict (the API server retries such a
// patch itself) and it needs no retry of its own; an object deleted
// meanwhile is gone, which is fine.
func (m *Migrator) rewrite(ctx context.Context, p plan, obj *metav1.PartialObjectMetadata) (string, error) {
	emptyPatch := client.RawPatch(types.MergePatchType, []byte("{}"))
	before := obj.ResourceVersion
	var err error
	if p.subresourceStatus {
		err = m.Client.Status().Patch(ctx, obj, emptyPatch, client.FieldOwner(FieldOwner))
	} else {
		err = m.Client.Patch(ctx, obj, emptyPatch, client.FieldOwner(FieldOwner))
	}
	switch {
	case err == nil && obj.ResourceVersion == before:
		return ResultUnchanged, nil
	case err == nil:
		return ResultRewritten, nil
	case apierrors.IsNotFound(err):
		return ResultGone, nil
	default:
		return ResultFailed, err
	}
}

// trimStoredVersions sets storedVersions to the storage version alone, on
// the condition that the CRD did not change since it was read: a version
// added meanwhile (a Helm upgrade during the run) may have objects the run
// did not see, and the next attempt starts again.
func (m *Migrator) trimStoredVersions(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, storage string) error {
	before := crd.DeepCopy()
	crd.Status.StoredVersions = []string{storage}
	if err := m.Client.Status().Patch(ctx, crd, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), client.FieldOwner(FieldOwner)); err != nil {
		return fmt.Errorf("trimming status.storedVersions of %s to [%s]: %w", crd.Name, storage, err)
	}
	return nil
}

func (m *Migrator) pageSize() int64 {
	if m.PageSize > 0 {
		return m.PageSize
	}
	return DefaultPageSize
}

func (m *Migrator) progressEvery() int {
	if m.ProgressEvery > 0 {
		return m.ProgressEvery
	}
	return DefaultProgressEvery
}

func (m *Migrator) clock() clock.Clock {
	if m.Clock != nil {
		return m.Clock
	}
	return clock.RealClock{}
}

func (m *Migrator) backoff() *wait.Backoff {
	if m.Backoff != nil {
		return m.Backoff
	}
	return &wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: 1 << 30, Cap: 5 * time.Minute}
}
