package credentials

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

const ns = "tenant"

func secret(name, version string) *metav1.PartialObjectMetadata {
	s := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: version}}
	s.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return s
}

// newFake is a metadata client of an API server that holds secrets.
func newFake(t *testing.T, secrets ...runtime.Object) *metadatafake.FakeMetadataClient {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return metadatafake.NewSimpleMetadataClient(scheme, secrets...)
}

func key(name string) types.NamespacedName { return types.NamespacedName{Namespace: ns, Name: name} }

// Secrets nothing references cost nothing: the watch keeps the versions of
// referenced Secrets only, and tells at once of a referenced Secret's
// change, creation and deletion, but not of the others'. (The envtest
// TestSecretWatchKeepsOnlyReferencedSecrets runs the same against an API
// server, over several pages of a list.)
func TestWatchKeepsOnlyReferencedSecrets(t *testing.T) {
	md := newFake(t, secret("ref-a", "1"), secret("helm-release-1", "2"), secret("helm-release-2", "3"))
	var once sync.Once
	watching := make(chan struct{})
	md.PrependWatchReactor("*", func(clienttesting.Action) (bool, watch.Interface, error) {
		once.Do(func() { close(watching) })
		return false, nil, nil
	})
	changed := make(chan event.GenericEvent, 10)
	referenced := func(_ context.Context, k types.NamespacedName) bool { return strings.HasPrefix(k.Name, "ref-") }
	w := New(md, []string{ns}, referenced, changed)
	ctx := t.Context()
	go func() { _ = w.Start(ctx) }()
	select {
	case <-watching:
	case <-time.After(5 * time.Second):
		t.Fatal("the list never turned into a watch")
	}
	if kept := w.Kept(); len(kept) != 1 || kept[key("ref-a")] != "1" {
		t.Errorf("after the list it keeps %v, want only ref-a at 1", kept)
	}
	nextChange := func(what string) types.NamespacedName {
		t.Helper()
		select {
		case e := <-changed:
			return client.ObjectKeyFromObject(e.Object)
		case <-time.After(5 * time.Second):
			t.Fatalf("no change told after %s", what)
			return types.NamespacedName{}
		}
	}
	gvr := corev1.SchemeGroupVersion.WithResource("secrets")
	tracker := md.Tracker()

	// An unrelated Secret's change is not told; a referenced one's is, in
	// order, so the first told is the referenced one.
	if err := tracker.Update(gvr, secret("helm-release-1", "4"), ns); err != nil {
		t.Fatal(err)
	}
	if err := tracker.Update(gvr, secret("ref-a", "5"), ns); err != nil {
		t.Fatal(err)
	}
	if got := nextChange("updating ref-a"); got != key("ref-a") {
		t.Errorf("told of %v, want ref-a (and nothing of the unrelated Secret)", got)
	}
	if v := w.Version(ctx, key("ref-a")); v != "5" {
		t.Errorf("ref-a at version %q, want the updated 5", v)
	}

	// A referenced Secret that does not exist yet reads "", and its
	// creation is told.
	if v := w.Version(ctx, key("ref-b")); v != "" {
		t.Errorf("missing ref-b at version %q, want \"\"", v)
	}
	if err := tracker.Add(secret("ref-b", "6")); err != nil {
		t.Fatal(err)
	}
	if got := nextChange("creating ref-b"); got != key("ref-b") {
		t.Errorf("told of %v, want ref-b", got)
	}
	if v := w.Version(ctx, key("ref-b")); v != "6" {
		t.Errorf("ref-b at version %q after its creation, want 6", v)
	}

	// Deleting a referenced Secret is told, and it reads "" again.
	if err := tracker.Delete(gvr, ns, "ref-a"); err != nil {
		t.Fatal(err)
	}
	if got := nextChange("deleting ref-a"); got != key("ref-a") {
		t.Errorf("told of %v, want ref-a", got)
	}
	if v := w.Version(ctx, key("ref-a")); v != "" {
		t.Errorf("deleted ref-a at version %q, want \"\"", v)
	}
	if kept := w.Kept(); len(kept) != 2 {
		t.Errorf("it keeps %v, want only ref-a (deleted) and ref-b", kept)
	}
}

// A Secret known at a version is never read again; one not known is read
// once.
func TestVersionReadsAnUnknownSecretOnce(t *testing.T) {
	md := newFake(t, secret("ref-a", "7"))
	w := New(md, []string{ns}, func(context.Context, types.NamespacedName) bool { return true }, make(chan event.GenericEvent))
	for range 3 {
		if v := w.Version(t.Context(), key("ref-a")); v != "7" {
			t.Fatalf("ref-a at version %q, want 7", v)
		}
	}
	gets := 0
	for _, a := range md.Actions() {
		if a.GetVerb() == "get" {
			gets++
		}
	}
	if gets != 1 {
		t.Errorf("%d reads of ref-a for 3 versions asked, want 1", gets)
	}
}

// The digests are known by Secret, kind of credential and version only.
func TestDigests(t *testing.T) {
	d := NewDigests[string]()
	d.Put(key("s"), "management", "1", "digest-1")
	d.Put(key("s"), "management", "", "never kept")
	for _, tt := range []struct {
		name                  string
		secret, kind, version string
		want                  string
		ok                    bool
	}{
		{"the version put", "s", "management", "1", "digest-1", true},
		{"another version", "s", "management", "2", "", false},
		{"an unknown version", "s", "management", "", "", false},
		{"another kind", "s", "alert", "1", "", false},
		{"another Secret", "t", "management", "1", "", false},
	} {
		if got, ok := d.Get(key(tt.secret), tt.kind, tt.version); got != tt.want || ok != tt.ok {
			t.Errorf("%s: %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
	d.Put(key("s"), "management", "2", "digest-2")
	if _, ok := d.Get(key("s"), "management", "1"); ok {
		t.Error("the digest of a Secret's old version is still known after a new one's")
	}
}
