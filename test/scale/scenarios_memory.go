package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// The scenarios of what a big or hostile answer costs the manager: one
// watch's big answer and its heap, the noisy neighbor, rejected status
// writes.

// bigAnswer is a fault that makes one watch's sync read a lot.
type bigAnswer struct {
	op        fakecloud.Operation
	fault     func() fakecloud.Fault
	spec      watchSpec
	condition string // the condition that shows the sync is done
}

var bigPipes = bigAnswer{
	op:        fakecloud.OpListPipes,
	fault:     func() fakecloud.Fault { return fakecloud.Fault{Body: emptyItemsEnvelope(16 << 20)} },
	spec:      watchSpec{serviceID: defaultService},
	condition: swv1.ConditionPipesSynced,
}

var bigAlerts = bigAnswer{
	op:        fakecloud.OpGetAlert,
	fault:     func() fakecloud.Fault { return fakecloud.Fault{OversizedBytes: 4 << 20} },
	spec:      watchSpec{serviceID: defaultService, alertIDs: alertIDs(100)},
	condition: swv1.ConditionAlertsSynced,
}

// worstMemoryScenario syncs 60 watches whose every pipes answer is
// worstPipesEnvelope and reports the manager's peak memory: the issue 17
// goal, 60 watches at the worst case under the Deployment's 256 MiB.
func worstMemoryScenario(ctx context.Context, e *runEnv) (string, error) {
	const n = 60
	ts := makeTenants("worst-memory", 4)
	if err := setUp(ctx, e, ts); err != nil {
		return "", err
	}
	if err := e.cloud.setFault(ctx, fakecloud.OpListPipes, fakecloud.Fault{Body: worstPipesEnvelope()}); err != nil {
		return "", err
	}
	m, err := e.runFleet(ctx, spreadWatches(ts, n, watchSpec{}), noClientLimits...)
	if err != nil {
		return "", err
	}
	_, waitErr := waitAllReady(ctx, e, "", n, 5*time.Minute)
	if err := sleepUntil(ctx, time.Now().Add(5*time.Second)); err != nil {
		return "", err
	}
	_, ready, _, _ := e.track.summary("")
	peak, _ := m.peakRSS()
	outcome := fmt.Sprintf("%d of %d Ready", ready, n)
	if m.exited() {
		outcome += "; the manager exited (killed at the cap or crashed)"
	}
	if waitErr != nil {
		outcome += "; " + waitErr.Error()
	}
	return fmt.Sprintf("peak RSS %s (%s per watch over a 50 MiB baseline); %s",
		mebibytes(peak), mebibytes((peak-50<<20)/n), outcome), nil
}

// worstPipesEnvelope is a pipes answer that costs the manager the most
// memory per byte it keeps: first (by id) as many pipes made of empty nested
// objects as the client keeps for the status (each is charged 64 bytes there,
// and decodes to about 400), then 10,000 pipes with names of 1.2 KB, which
// the status has no room for but the state metrics see.
func worstPipesEnvelope() string {
	var b strings.Builder
	b.WriteString(`{"status":200,"requestId":"00000000-0000-4000-8000-000000000000","result":[`)
	for i := range 10_100 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"a%07d","source":{"postgres":{"settings":{}}},"settings":{}}`, i)
	}
	name := strings.Repeat("n", 1200)
	for i := range 10_000 {
		fmt.Fprintf(&b, `,{"id":"b%07d","name":"%s-%d","state":"Running"}`, i, name, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

// emptyItemsEnvelope is a management answer of exactly size bytes whose
// result is a list of empty objects: cheap to send, as many items as fit.
func emptyItemsEnvelope(size int) string {
	const head, tail = `{"status":200,"requestId":"00000000-0000-4000-8000-000000000000","result":[{}`, `]}`
	var b strings.Builder
	b.Grow(size)
	b.WriteString(head)
	for b.Len()+len(",{}")+len(tail) <= size {
		b.WriteString(",{}")
	}
	b.WriteString(tail)
	for b.Len() < size { // pad with whitespace JSON allows
		b.WriteByte(' ')
	}
	return b.String()
}

func alertIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("bench-alert-%03d", i)
	}
	return ids
}

// memoryScenario measures the manager's peak memory for one big watch
// against that of a manager that synced one normal watch.
func memoryScenario(big bigAnswer) func(context.Context, *runEnv) (string, error) {
	return func(ctx context.Context, e *runEnv) (string, error) {
		ts := makeTenants("memory", 1)
		if err := setUp(ctx, e, ts); err != nil {
			return "", err
		}
		normal := watchSpec{serviceID: defaultService, alertIDs: []string{fakecloud.DefaultAlertID, fakecloud.SecondAlertID}}
		baseline, err := syncedPeak(ctx, e, ts[0], "baseline", normal, swv1.ConditionReady)
		if err != nil {
			return "", fmt.Errorf("baseline: %w", err)
		}
		if err := e.cloud.setFault(ctx, big.op, big.fault()); err != nil {
			return "", err
		}
		got, err := syncedPeak(ctx, e, ts[0], "big", big.spec, big.condition)
		if err != nil {
			return "", err
		}
		peak := mebibytes(got.peak)
		if got.killed {
			peak = "> " + mebibytes(e.rssCap) + " (killed at the cap)"
		}
		return fmt.Sprintf("peak RSS %s = %s baseline %s; %s",
			peak, times(float64(got.peak)/float64(baseline.peak)), mebibytes(baseline.peak), got.outcome), nil
	}
}

// memoryPeak is what syncedPeak saw.
type memoryPeak struct {
	peak    int64
	killed  bool   // for passing the RSS cap
	outcome string // the condition that ended the wait, or why there was none
}

// syncedPeak starts a manager, creates one watch, waits until the watch's
// condition shows the sync is done, and returns the manager's peak memory.
// The watch is deleted and the manager stopped afterwards. Client limits are
// off: they would only spread the big answers out in time, and the worst
// case is what is measured.
func syncedPeak(ctx context.Context, e *runEnv, t tenant, name string, s watchSpec, condition string) (memoryPeak, error) {
	m, err := e.startManager(ctx, noClientLimits...)
	if err != nil {
		return memoryPeak{}, err
	}
	w := newWatch(t, name, s)
	if err := e.cp.client.Create(ctx, w); err != nil {
		return memoryPeak{}, err
	}
	key := client.ObjectKeyFromObject(w)
	var cond metav1.Condition
	const timeout = 3 * time.Minute
	done := waitUntil(ctx, timeout, func() bool {
		var ok bool
		cond, ok = e.track.condition(key, condition)
		return (ok && cond.Status != metav1.ConditionUnknown) || m.exited()
	})
	// Memory freed after the sync is not what is measured: the peak is.
	if err := sleepUntil(ctx, time.Now().Add(2*time.Second)); err != nil {
		return memoryPeak{}, err
	}
	var got memoryPeak
	got.peak, got.killed = m.peakRSS()
	if _, err := m.stop(); err != nil && !got.killed {
		return memoryPeak{}, err
	}
	if err := e.cp.client.Delete(ctx, w); err != nil {
		return memoryPeak{}, err
	}
	switch {
	case got.killed:
		got.outcome = "manager killed"
	case !done || m.exited() && cond.Type == "":
		got.outcome = fmt.Sprintf("no %s within %s", condition, timeout)
	default:
		got.outcome = fmt.Sprintf("%s=%s %s", condition, cond.Status, cond.Reason)
	}
	return got, nil
}

// noisyNeighbourScenario: one tenant's hanging API and another's exhausted
// budget must not keep a third tenant waiting.
func noisyNeighbourScenario(ctx context.Context, e *runEnv) (string, error) {
	hang, throttled, fresh := makeTenants("hanging", 1)[0], makeTenants("throttled", 1)[0], makeTenants("fresh", 1)[0]
	if err := setUp(ctx, e, []tenant{hang, throttled, fresh}, "--management-budget", managementBudget, "--alert-budget", alertBudget); err != nil {
		return "", err
	}
	for _, op := range []fakecloud.Operation{fakecloud.OpListPipes, fakecloud.OpListReversePrivateEndpoints} {
		if err := e.cloud.setFault(ctx, op, fakecloud.Fault{Hang: true, KeyID: hang.key.id}); err != nil {
			return "", err
		}
	}
	s := watchSpec{interval: 30 * time.Second}
	noisy := append(spreadWatches([]tenant{hang}, 8, s), spreadWatches([]tenant{throttled}, 24, s)...)
	if _, err := e.runFleet(ctx, noisy); err != nil {
		return "", err
	}
	// Let the hanging calls and the throttled key take hold.
	if err := sleepUntil(ctx, time.Now().Add(5*time.Second)); err != nil {
		return "", err
	}
	return timeToReady(ctx, e, fresh, "new", "8 hanging, 24 throttled")
}

// statusRejectScenario: when status cannot be written, the watch must still
// keep to its schedule rather than call the cloud on every retry.
func statusRejectScenario(ctx context.Context, e *runEnv) (string, error) {
	const window = time.Minute
	t := makeTenants("reject", 1)[0]
	if err := setUp(ctx, e, []tenant{t}); err != nil {
		return "", err
	}
	if _, err := e.startManager(ctx); err != nil {
		return "", err
	}
	w := newWatch(t, "rejected", watchSpec{serviceID: defaultService, interval: 30 * time.Second, labels: map[string]string{rejectLabel: "true"}})
	if err := e.cp.client.Create(ctx, w); err != nil {
		return "", err
	}
	key := client.ObjectKeyFromObject(w)
	if !waitUntil(ctx, time.Minute, func() bool { return !e.track.firstReady(key).IsZero() }) {
		return "", errors.New("the watch did not become Ready before the policy")
	}
	if err := rejectStatusUpdates(ctx, e.cp.client, w); err != nil {
		return "", err
	}
	from := time.Now()
	if err := sleepUntil(ctx, from.Add(window)); err != nil {
		return "", err
	}
	calls, err := e.cloud.calls(ctx)
	if err != nil {
		return "", err
	}
	inWindow := selectCalls(calls, withKey(t.key), since(from), before(from.Add(window)))
	syncs := len(selectCalls(inWindow, withOperation(fakecloud.OpListPipes)))
	return fmt.Sprintf("%d syncs (%d calls) in 60 s", syncs, len(inWindow)), nil
}

const rejectLabel = "scale.servicewatch.io/reject-status"

// rejectStatusUpdates installs a ValidatingAdmissionPolicy that denies every
// update of the status of watches labeled rejectLabel, and returns once the
// API server enforces it (policies take effect a moment after creation).
func rejectStatusUpdates(ctx context.Context, c client.Client, w *swv1.ServiceWatch) error {
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "reject-status"},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{
				ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{rejectLabel: "true"}},
				ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Update},
					Rule: admissionv1.Rule{
						APIGroups:   []string{swv1.GroupVersion.Group},
						APIVersions: []string{"*"},
						Resources:   []string{"servicewatches/status"},
					},
				}}},
			},
			Validations: []admissionv1.Validation{{Expression: "false", Message: "status updates of this watch are rejected by the scale benchmark"}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "reject-status"},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
	for _, o := range []client.Object{policy, binding} {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %T: %w", o, err)
		}
	}
	// A dry-run status patch goes through admission without changing
	// anything: once it is denied, so are the manager's patches.
	probe := client.RawPatch(types.MergePatchType, []byte(`{"status":{"lastHandledRequestedAt":"scale-probe"}}`))
	var lastErr error
	if waitUntil(ctx, time.Minute, func() bool {
		lastErr = c.Status().Patch(ctx, w.DeepCopy(), probe, client.DryRunAll)
		return lastErr != nil && strings.Contains(lastErr.Error(), "rejected by the scale benchmark")
	}) {
		return nil
	}
	if lastErr == nil {
		return errors.New("the admission policy was not enforced within a minute (last probe: accepted)")
	}
	return fmt.Errorf("the admission policy was not enforced within a minute (last probe: %w)", lastErr)
}
