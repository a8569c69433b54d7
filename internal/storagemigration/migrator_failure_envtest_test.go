package storagemigration_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/servicewatch/servicewatch/internal/storagemigration"
	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// An object whose write is refused (here by an admission policy, as a
// cluster's policy engine might) keeps the migration pending: the other
// objects are rewritten, the refused one is named in the log, storedVersions
// keeps v1alpha1 (trimming it would strand that object), and the migration
// is tried again until the write goes through.
func TestRefusedWriteKeepsStoredVersionsAndIsRetried(t *testing.T) {
	testenv.SkipShort(t)
	ns, names := upgradedWatches(t, 6)
	const frozen = "w-003"
	binding := refuseStatusWrites(t, ns, frozen)

	m, reg, log := newMigrator(t)
	m.Backoff = &wait.Backoff{Duration: 50 * time.Millisecond, Factor: 1, Steps: 1 << 30}
	done := make(chan error, 1)
	go func() { done <- m.Start(t.Context()) }()
	poll(t, 30*time.Second, "a failed run", func() bool {
		return gauge(t, reg, "servicewatch_storage_migration_runs_total", "crd", watchesCRD, "outcome", storagemigration.OutcomeFailed) >= 1
	})
	if got := storedVersions(t, watchesCRD); !slices.Equal(got, []string{"v1alpha1", "v1beta1"}) {
		t.Errorf("storedVersions = %v while %s is not rewritten, want [v1alpha1 v1beta1]", got, frozen)
	}
	if got := gauge(t, reg, "servicewatch_storage_migration_pending", "crd", watchesCRD); got != 1 {
		t.Errorf("pending = %v while %s is not rewritten, want 1", got, frozen)
	}
	checkStored(t, "servicewatches", ns, []string{frozen}, "v1alpha1")
	checkStored(t, "servicewatches", ns, slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == frozen }), "v1beta1")
	if !strings.Contains(log.String(), ns+"/"+frozen) || !strings.Contains(log.String(), "frozen by a policy") {
		t.Errorf("the log does not name %s and why it was refused:\n%s", frozen, log)
	}

	if err := env.Client.Delete(t.Context(), binding); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the migration did not finish within a minute of the policy's removal")
	}
	checkStored(t, "servicewatches", ns, append(names, "probe"), "v1beta1")
	if got := storedVersions(t, watchesCRD); !slices.Equal(got, []string{"v1beta1"}) {
		t.Errorf("storedVersions = %v after the retry, want [v1beta1]", got)
	}
	if got := gauge(t, reg, "servicewatch_storage_migration_pending", "crd", watchesCRD); got != 0 {
		t.Errorf("pending = %v after the retry, want 0", got)
	}
}

// refuseStatusWrites has the API server refuse every status write of the
// watch ns/name, and returns the policy's binding, whose deletion lifts it.
func refuseStatusWrites(t *testing.T, ns, name string) client.Object {
	t.Helper()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "freeze-" + ns},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{"servicewatches/status"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "object.metadata.namespace != '" + ns + "' || !(object.metadata.name in ['" + name + "', 'probe'])",
				Message:    "frozen by a policy",
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	for _, o := range []client.Object{policy, binding} {
		if err := env.Client.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = env.Client.Delete(t.Context(), policy) })
	// The API server applies a new policy a moment after it is created: a
	// probe watch, frozen too, is written until the policy refuses it (its
	// writes before that rewrite it, which is why it is not the watch the
	// test freezes).
	probe := previousWatch(ns, 99, "http://127.0.0.1:1")
	probe.SetName("probe")
	createPrevious(t, probe, nil)
	probe.SetAPIVersion(group + "/v1beta1")
	poll(t, 30*time.Second, "the policy in force", func() bool {
		err := env.Client.Status().Patch(t.Context(), probe, client.RawPatch(types.MergePatchType, []byte("{}")))
		return err != nil && strings.Contains(err.Error(), "frozen by a policy")
	})
	return binding
}
