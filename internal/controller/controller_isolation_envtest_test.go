package controller_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/pacing"
)

// Tenants share the manager: watches whose API hangs, and watches that share
// one throttled key, must not hold the workers or slots that another
// namespace's new watch needs.
func TestHangingNeighboursDoNotDelayANewWatch(t *testing.T) {
	t.Parallel()
	noisy := newFixture(t)
	noisy.fake.SetFault(fakecloud.OpListPipes, fakecloud.Fault{Hang: true})
	noisy.fake.SetFault(fakecloud.OpListReversePrivateEndpoints, fakecloud.Fault{Hang: true})
	noisy.createSecrets()
	for i := range 8 {
		// Eight services: watches of one service would share one call.
		w := noisy.newWatch(fmt.Sprintf("hangs-%d", i))
		w.Spec.ServiceID = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		noisy.create(w)
	}
	// Wait until the slots the noisy namespace may hold are all held by
	// hanging calls; its other watches wait for those slots. All eight are
	// never in calls at once: a hanging call holds its slot until the client
	// gives up (5 s), so waiting for eight calls would wait for a second
	// round of them, and find the slots free again.
	holds := min(controller.DefaultMaxSyncsPerHost, controller.DefaultMaxSyncsPerNamespace)
	waitForCalls(t, "the noisy namespace's calls to hang", holds, func() int { return noisy.fake.Calls(fakecloud.OpListPipes) })

	throttled := newNamedFixture(t, t.Name()+"-throttled")
	throttled.fake.SetManagementBudget(fakecloud.Budget{Requests: 10, Window: 10 * time.Second})
	throttled.createSecrets()
	for i := range 24 {
		throttled.create(throttled.newWatch(fmt.Sprintf("throttled-%d", i)))
	}
	// They meet the budget once their read (one, shared by the watches of
	// the one service) has called the key: the rest wait on it.
	waitForCalls(t, "the throttled watches' first read", 1, func() int { return throttled.fake.Calls(fakecloud.OpListPipes) })

	victim := newNamedFixture(t, t.Name()+"-victim")
	victim.createSecrets()
	start := time.Now()
	victim.create(victim.newWatch("new"))
	victim.waitFor("new", 2*time.Second, "Ready within 2s beside 8 hanging watches", isReady)
	t.Logf("the new watch was Ready after %v while 8 other watches hung and 24 shared a throttled key", time.Since(start).Round(time.Millisecond))
}

// A status write that the API server refuses must not make the manager call
// the cloud again at once: the write waits for the schedule's backoff.
func TestRefusedStatusWritesDoNotLoopCloudCalls(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	refuseStatusWrites(t, f)
	f.createSecrets()
	f.create(f.newWatch("refused"))

	// Each refused write is retried on the backoff, BackoffBase then twice
	// that after the sync ended: syncs at about 0 s, 5 s and 15 s. The
	// third sync is the end state; a retry of the whole sync before its
	// backoff shows as a gap shorter than the backoff.
	waitForCallsWithin(t, "the watch's first three syncs", 3, 30*time.Second, func() int { return f.fake.Calls(fakecloud.OpListPipes) })
	var syncs []time.Time
	for _, c := range f.fake.CallLog() {
		if c.Operation == fakecloud.OpListPipes {
			syncs = append(syncs, c.Time)
		}
	}
	t.Logf("list-pipes calls at %v while every status write was refused", syncs)
	for i, backoff := range []time.Duration{pacing.BackoffBase, 2 * pacing.BackoffBase} {
		// A tenth off for the call times' clock against the manager's.
		if gap := syncs[i+1].Sub(syncs[i]); gap < backoff*9/10 {
			t.Errorf("sync %d came %v after sync %d, before the backoff of %v: a refused status write retried the whole sync early", i+2, gap.Round(time.Millisecond), i+1, backoff)
		}
	}
	if w := f.get("refused"); len(w.Status.Conditions) != 0 {
		t.Fatalf("the policy let a status write through: %+v", w.Status.Conditions)
	}
}

// refuseStatusWrites installs a ValidatingAdmissionPolicy that refuses every
// status update of ServiceWatches in the fixture's namespace, and waits until
// the API server enforces it.
func refuseStatusWrites(t *testing.T, f *fixture) {
	t.Helper()
	name := "refuse-status-" + f.ns
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptrTo(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Update},
					Rule: admissionv1.Rule{APIGroups: []string{swv1.GroupVersion.Group}, APIVersions: []string{"*"},
						Resources: []string{"servicewatches/status"}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: "false", Message: "status writes are refused in this namespace"}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: f.ns},
			}},
		},
	}
	f.create(policy)
	f.create(binding)
	t.Cleanup(func() {
		_ = env.Client.Delete(f.ctx, binding)
		_ = env.Client.Delete(f.ctx, policy)
	})

	// A probe watch (suspended, with no Secret: the manager writes its status
	// only to say it is suspended) shows when the policy bites.
	probe := f.newWatch("probe")
	probe.Spec.Suspend = true
	f.create(probe)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var cur swv1.ServiceWatch
		if err := env.Client.Get(f.ctx, types.NamespacedName{Namespace: f.ns, Name: "probe"}, &cur); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(cur.DeepCopy())
		cur.Status.LastHandledRequestedAt = time.Now().String()
		err := env.Client.Status().Patch(f.ctx, &cur, patch)
		if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the admission policy is not enforced after 20s (last answer: %v)", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func ptrTo[T any](v T) *T { return &v }

// Whatever a tenant names or the cloud answers, the status stays writable:
// every message and list is bounded, so the API server never refuses it.
func TestOversizedInputsKeepStatusWritable(t *testing.T) {
	t.Parallel()
	t.Run("100 failing alerts with 128-character IDs", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		ids := make([]string, 100)
		for i := range ids {
			ids[i] = fmt.Sprintf("%03d%s", i, strings.Repeat("a", 125))
		}
		f.createSecrets()
		f.create(f.newWatch("many-missing", ids...))
		w := f.waitFor("many-missing", 30*time.Second, "AlertsSynced NotFound", conditionIs(swv1.ConditionAlertsSynced, metav1.ConditionFalse, swv1.ReasonNotFound))
		if len(w.Status.Alerts) != 100 || !strings.Contains(w.Condition(swv1.ConditionAlertsSynced).Message, "100 of 100 alerts failed") {
			t.Errorf("status does not tell of the 100 failing alerts: %d entries, %q", len(w.Status.Alerts), w.Condition(swv1.ConditionAlertsSynced).Message)
		}
		if events := f.waitForEvent("many-missing", swv1.ReasonNotFound); len(events) == 0 {
			t.Error("no Warning event for the failing alerts")
		}
	})
	t.Run("50 alerts with 40 kB messages", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		ids := make([]string, 50)
		for i := range ids {
			ids[i] = fmt.Sprintf("big-%02d", i)
			f.fake.SetAlert(ids[i], map[string]any{"id": ids[i], "name": ids[i], "state": "active", "message": strings.Repeat("m", 40_000)})
		}
		f.createSecrets()
		f.create(f.newWatch("big-alerts", ids...))
		w := f.waitFor("big-alerts", 30*time.Second, "StatusTruncated", conditionIs(swv1.ConditionStatusTruncated, metav1.ConditionTrue, swv1.ReasonTooLarge))
		// Issue 28: big items are cut inside before whole ones go, so every
		// alert stays listed by id and name, some without their message.
		if w.Status.Summary.Alerts != 50 || len(w.Status.Alerts) != 50 {
			t.Errorf("summary.alerts %d, %d entries listed: want all 50 counted and listed", w.Status.Summary.Alerts, len(w.Status.Alerts))
		}
		cut := 0
		for _, a := range w.Status.Alerts {
			if ptr.Deref(a.Name, "") != a.ID {
				t.Errorf("alert %s lost its name", a.ID)
			}
			if a.Omitted["message"] == 1 && a.Message == nil {
				cut++
			}
		}
		if c := w.Condition(swv1.ConditionStatusTruncated); cut == 0 || !strings.Contains(c.Message, "alert big-") {
			t.Errorf("%d alerts cut, StatusTruncated %q: want the cut ones named", cut, c.Message)
		}
		if !isReady(w) {
			t.Error("a truncated but successful sync is not Ready")
		}
	})
	t.Run("a 40,000-character requested-at value", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		f.readyWatch("long-request")
		value := strings.Repeat("r", 40_000)
		f.requestSync("long-request", value)
		sum := sha256.Sum256([]byte(value))
		f.waitFor("long-request", 20*time.Second, "the request echoed as its hash", func(w *swv1.ServiceWatch) bool {
			return w.Status.LastHandledRequestedAt == "sha256:"+hex.EncodeToString(sum[:]) && isReady(w)
		})
	})
}
