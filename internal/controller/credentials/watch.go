package credentials

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Watch learns of changes to the Secrets that objects reference, and keeps
// the resourceVersion of those alone: the Secrets nothing references cost
// nothing but the bytes of their events as they pass.
//
// An informer would keep every Secret of the cluster, even stripped to its
// identity, and list them all into memory at once when it starts (see the
// package's comment). Watch lists them a page at a time, then watches from
// the list's version, and keeps what is referenced.
type Watch struct {
	// md reads Secrets' metadata; never their data.
	md metadata.Interface
	// namespaces to watch; empty: all.
	namespaces []string
	// referenced tells whether an object references the Secret.
	referenced func(ctx context.Context, secret types.NamespacedName) bool
	// changed is told of a change to a referenced Secret.
	changed chan<- ctrlevent.GenericEvent

	mu sync.Mutex
	// versions holds, of the referenced Secrets seen, the resourceVersion;
	// "" for one known not to exist.
	versions map[types.NamespacedName]string
}

// pageSize is how many Secrets one list call returns: a page is all the
// list holds in memory at once.
const pageSize = 500

// secretsResource is constant; a function, as Go has no constant structs.
func secretsResource() schema.GroupVersionResource {
	return corev1.SchemeGroupVersion.WithResource("secrets")
}

// New returns a watch of the Secrets of namespaces (all when empty) that
// referenced says are referenced; it tells changed of each change to one.
// md reads Secrets' metadata, never their data.
func New(md metadata.Interface, namespaces []string, referenced func(context.Context, types.NamespacedName) bool,
	changed chan<- ctrlevent.GenericEvent) *Watch {
	return &Watch{md: md, namespaces: namespaces, referenced: referenced, changed: changed,
		versions: map[types.NamespacedName]string{}}
}

// Version is the referenced Secret's resourceVersion, "" when it does not
// exist. A Secret not known yet (a watch that just started to reference it)
// is read once from the API server; from then on its events keep it.
func (s *Watch) Version(ctx context.Context, secret types.NamespacedName) string {
	s.mu.Lock()
	v, known := s.versions[secret]
	s.mu.Unlock()
	if known {
		return v
	}
	meta, err := s.md.Resource(secretsResource()).Namespace(secret.Namespace).Get(ctx, secret.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		v = ""
	case err != nil:
		return "" // not remembered: asked again next time
	default:
		v = meta.ResourceVersion
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if current, seen := s.versions[secret]; seen {
		return current // an event came first, and is newer
	}
	s.versions[secret] = v
	return v
}

// Start watches until ctx ends; it is a manager Runnable.
func (s *Watch) Start(ctx context.Context) error {
	namespaces := s.namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	var wg sync.WaitGroup
	for _, ns := range namespaces {
		wg.Go(func() { s.run(ctx, ns) })
	}
	wg.Wait()
	return nil
}

// run lists and watches one namespace (or all) until ctx ends, listing again
// when the watch's version is too old.
func (s *Watch) run(ctx context.Context, namespace string) {
	logger := log.FromContext(ctx).WithValues("watching", "Secrets", "namespace", namespace)
	backoff := time.Second
	for ctx.Err() == nil {
		version, err := s.list(ctx, namespace)
		for err == nil {
			version, err = s.watch(ctx, namespace, version)
		}
		if ctx.Err() != nil {
			return
		}
		if !errors.Is(err, errVersionTooOld) {
			logger.Error(err, "watching Secrets; retrying", "after", backoff)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, time.Minute)
			continue
		}
		backoff = time.Second
	}
}

var errVersionTooOld = errors.New("watch version too old")

// list reads the Secrets of namespace a page at a time and settles the
// referenced ones against what is known: a change or a deletion missed while
// no watch ran counts as a change. It returns the list's version.
func (s *Watch) list(ctx context.Context, namespace string) (string, error) {
	listed := map[types.NamespacedName]string{}
	opts := metav1.ListOptions{Limit: pageSize}
	version := ""
	for {
		page, err := s.md.Resource(secretsResource()).Namespace(namespace).List(ctx, opts)
		if err != nil {
			return "", fmt.Errorf("listing Secrets: %w", err)
		}
		if version == "" {
			version = page.ResourceVersion
		}
		for i := range page.Items {
			key := types.NamespacedName{Namespace: page.Items[i].Namespace, Name: page.Items[i].Name}
			if s.referenced(ctx, key) {
				listed[key] = page.Items[i].ResourceVersion
			}
		}
		if page.Continue == "" {
			break
		}
		opts.Continue = page.Continue
	}
	s.settle(ctx, namespace, listed)
	return version, nil
}

// settle makes the known versions of namespace those listed, and tells of
// each that changed.
func (s *Watch) settle(ctx context.Context, namespace string, listed map[types.NamespacedName]string) {
	s.mu.Lock()
	var changed []types.NamespacedName
	for key, v := range s.versions {
		if namespace != metav1.NamespaceAll && key.Namespace != namespace {
			continue
		}
		now, exists := listed[key]
		switch {
		case !s.referenced(ctx, key):
			delete(s.versions, key)
		case !exists && v != "":
			s.versions[key] = ""
			changed = append(changed, key)
		case exists && v != now:
			s.versions[key] = now
			changed = append(changed, key)
		}
	}
	for key, v := range listed {
		if _, known := s.versions[key]; !known {
			s.versions[key] = v
		}
	}
	s.mu.Unlock()
	for _, key := range changed {
		s.tell(ctx, key)
	}
}

// watch follows the Secrets of namespace from version until the watch ends,
// and returns the version to go on from.
func (s *Watch) watch(ctx context.Context, namespace, version string) (string, error) {
	timeout := int64(300 + rand.IntN(300)) // as client-go's reflectors: 5 to 10 minutes
	w, err := s.md.Resource(secretsResource()).Namespace(namespace).Watch(ctx, metav1.ListOptions{
		ResourceVersion: version, AllowWatchBookmarks: true, TimeoutSeconds: &timeout,
	})
	if err != nil {
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			return "", errVersionTooOld
		}
		return "", fmt.Errorf("watching Secrets: %w", err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case e, open := <-w.ResultChan():
			if !open {
				return version, nil // the server ended it: go on from here
			}
			if e.Type == watch.Error {
				if status := apierrors.FromObject(e.Object); apierrors.IsResourceExpired(status) || apierrors.IsGone(status) {
					return "", errVersionTooOld
				}
				return "", fmt.Errorf("watching Secrets: %w", apierrors.FromObject(e.Object))
			}
			meta, ok := e.Object.(*metav1.PartialObjectMetadata)
			if !ok {
				continue
			}
			version = meta.ResourceVersion
			if e.Type != watch.Bookmark {
				s.observe(ctx, types.NamespacedName{Namespace: meta.Namespace, Name: meta.Name}, e.Type == watch.Deleted, meta.ResourceVersion)
			}
		}
	}
}

// observe records an event of a Secret, if a watch references it, and tells
// of it.
func (s *Watch) observe(ctx context.Context, key types.NamespacedName, deleted bool, version string) {
	if !s.referenced(ctx, key) {
		s.mu.Lock()
		delete(s.versions, key) // no longer referenced
		s.mu.Unlock()
		return
	}
	if deleted {
		version = ""
	}
	s.mu.Lock()
	s.versions[key] = version
	s.mu.Unlock()
	s.tell(ctx, key)
}

func (s *Watch) tell(ctx context.Context, key types.NamespacedName) {
	secret := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	select {
	case s.changed <- ctrlevent.GenericEvent{Object: secret}:
	case <-ctx.Done():
	}
}

// Kept is a copy of what the watch keeps: the versions of the referenced
// Secrets it saw, "" for one known not to exist. It is how much the watch
// holds, whatever the number of Secrets in the cluster.
func (s *Watch) Kept() map[types.NamespacedName]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.versions)
}

// Digests remembers, by Secret and resourceVersion, the digest D of the
// credential the Secret holds: a digest, never the credential. A caller that
// waits asks again with the digest, and reads the credential from the API
// server only when it goes ahead. It holds one entry per referenced Secret
// and kind of credential, replaced when the Secret changes.
type Digests[D any] struct {
	mu sync.Mutex
	m  map[secretCredential]versioned[D]
}

// secretCredential names one kind of credential of one Secret.
type secretCredential struct {
	secret types.NamespacedName
	kind   string
}

type versioned[D any] struct {
	version string
	digest  D
}

// NewDigests returns an empty cache.
func NewDigests[D any]() *Digests[D] {
	return &Digests[D]{m: map[secretCredential]versioned[D]{}}
}

// Get returns the digest of the kind of credential the Secret held at
// version; none for an unknown version ("" when the cache has not seen the
// Secret).
func (c *Digests[D]) Get(secret types.NamespacedName, kind, version string) (D, bool) {
	var none D
	if version == "" {
		return none, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[secretCredential{secret: secret, kind: kind}]
	if !ok || v.version != version {
		return none, false
	}
	return v.digest, true
}

// Put records the digest of what the Secret held at version.
func (c *Digests[D]) Put(secret types.NamespacedName, kind, version string, d D) {
	if version == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[secretCredential{secret: secret, kind: kind}] = versioned[D]{version: version, digest: d}
}
