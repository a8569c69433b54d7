package controller_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/servicewatch/servicewatch/internal/controller"
)

// Secrets no watch references cost the manager nothing (issue 17: Helm keeps
// every release as a Secret): it keeps the versions of referenced Secrets
// only, and still tells at once of a referenced Secret's creation, change
// and deletion, but not of the others'.
func TestSecretWatchKeepsOnlyReferencedSecrets(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	secret := func(name string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name,
			// kubectl apply's annotation may hold the whole Secret.
			Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"stringData":{"keySecret":"` + f.keySecret + `"}}`},
			Labels:      map[string]string{"owner": "helm"}},
			StringData: map[string]string{"release": strings.Repeat("x", 1024)}}
	}
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: f.ns, Name: name} }
	// More than two pages of unrelated Secrets, and one referenced, before
	// the watch starts.
	for i := range 1200 {
		f.create(secret(fmt.Sprintf("sh.helm.release.v1.app-%04d", i)))
	}
	f.create(secret("ref-a"))
	referenced := func(k types.NamespacedName) bool { return k.Namespace == f.ns && strings.HasPrefix(k.Name, "ref-") }
	sw, err := controller.StartSecretWatch(f.ctx, env.Config, []string{f.ns}, referenced)
	if err != nil {
		t.Fatal(err)
	}
	waitForKept := func(what string, ok func(map[types.NamespacedName]string) bool) map[types.NamespacedName]string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			kept := sw.Kept()
			if ok(kept) {
				return kept
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: it keeps %v", what, kept)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	kept := waitForKept("ref-a listed", func(k map[types.NamespacedName]string) bool { return k[key("ref-a")] != "" })
	if len(kept) != 1 {
		t.Errorf("after listing 1,201 Secrets it keeps %d: %v, want only ref-a", len(kept), kept)
	}
	nextChange := func(what string) types.NamespacedName {
		t.Helper()
		select {
		case k := <-sw.Changed:
			return k
		case <-time.After(15 * time.Second):
			t.Fatalf("no change told after %s", what)
			return types.NamespacedName{}
		}
	}

	// An unrelated Secret's change is not told; a referenced one's is, in
	// order, so the first told is the referenced one.
	unrelated := secret("sh.helm.release.v1.app-0000")
	unrelated.StringData = map[string]string{"release": "upgraded"}
	if err := env.Client.Update(f.ctx, unrelated); err != nil {
		t.Fatal(err)
	}
	a := secret("ref-a")
	a.StringData = map[string]string{"keySecret": "rotated"}
	if err := env.Client.Update(f.ctx, a); err != nil {
		t.Fatal(err)
	}
	if got := nextChange("updating ref-a"); got != key("ref-a") {
		t.Errorf("told of %v, want ref-a (and nothing of the unrelated Secret)", got)
	}
	if v := sw.Version(f.ctx, key("ref-a")); v != a.ResourceVersion {
		t.Errorf("ref-a at version %q, want the updated %q", v, a.ResourceVersion)
	}

	// A referenced Secret that does not exist yet reads "", and its creation
	// is told.
	if v := sw.Version(f.ctx, key("ref-b")); v != "" {
		t.Errorf("missing ref-b at version %q, want \"\"", v)
	}
	b := secret("ref-b")
	f.create(b)
	if got := nextChange("creating ref-b"); got != key("ref-b") {
		t.Errorf("told of %v, want ref-b", got)
	}
	if v := sw.Version(f.ctx, key("ref-b")); v != b.ResourceVersion {
		t.Errorf("ref-b at version %q after its creation, want %q", v, b.ResourceVersion)
	}

	// Deleting a referenced Secret is told, and it reads "" again.
	if err := env.Client.Delete(f.ctx, a); err != nil {
		t.Fatal(err)
	}
	if got := nextChange("deleting ref-a"); got != key("ref-a") {
		t.Errorf("told of %v, want ref-a", got)
	}
	if v := sw.Version(f.ctx, key("ref-a")); v != "" {
		t.Errorf("deleted ref-a at version %q, want \"\"", v)
	}
	if kept := sw.Kept(); len(kept) != 2 {
		t.Errorf("it keeps %v, want only ref-a (deleted) and ref-b", kept)
	}
}
