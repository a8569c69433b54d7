package kubectlplugin

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"

	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// transcript is a run as a golden file holds it: the exit status, then
// what went to stdout and to stderr.
func (r result) transcript() string {
	return fmt.Sprintf("exit status %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// TestGetGolden: get lists one row per item across watches, filtered,
// wide, and as JSON for scripts; and says when nothing matched.
func TestGetGolden(t *testing.T) {
	needEnv(t)
	clk := clocktesting.NewFakeClock(now)
	for _, tt := range []struct {
		golden string
		args   []string
	}{
		{"get-pipes-all-namespaces-failed", []string{"get", "pipes", "-A", "--state", "Failed"}},
		{"get-pipes-wide", []string{"get", "pipes", "-n", "data", "-o", "wide"}},
		{"get-pipes-sorted-by-name", []string{"get", "pipes", "-A", "--sort-by", "name"}},
		{"get-endpoints", []string{"get", "endpoints", "-n", "data"}},
		{"get-alerts-json", []string{"get", "alerts", "analytics-prod", "-n", "data", "-o", "json"}},
		{"get-endpoints-yaml", []string{"get", "endpoints", "-A", "-o", "yaml"}},
		{"get-bad-output", []string{"get", "pipes", "-o", "table"}},
		{"get-pipes-none", []string{"get", "pipes", "-n", "empty"}},
		{"get-unknown-kind", []string{"get", "widgets", "-n", "data"}},
		{"get-missing-watch", []string{"get", "pipes", "no-such-watch", "-n", "data"}},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			golden(t, tt.golden, runPlugin(testContext(t), clk, tt.args...).transcript())
		})
	}
}

// TestGetAllNamespacesStateFailed: the question of issue 31, "which pipes
// are failing across all namespaces?", answered from two namespaces.
func TestGetAllNamespacesStateFailed(t *testing.T) {
	needEnv(t)
	r := runPlugin(testContext(t), clocktesting.NewFakeClock(now), "get", "pipes", "-A", "--state", "failed", "-o", "json")
	if r.code != exitOK {
		t.Fatalf("exit status %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{`"namespace": "data"`, `"namespace": "team-b"`, `"name": "logs_s3"`, `"name": "shop_postgres"`, `"name": "clicks_kinesis"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("get pipes -A --state failed does not show %s:\n%s", want, r.stdout)
		}
	}
	for _, running := range []string{"events_kafka", "orders_pubsub"} {
		if strings.Contains(r.stdout, running) {
			t.Errorf("get pipes -A --state failed shows the running pipe %s:\n%s", running, r.stdout)
		}
	}
}

// TestWhyGolden: why explains a watch whose key the cloud refuses, and one
// held back by a 429 and a stretched budget, without a Secret's value.
func TestWhyGolden(t *testing.T) {
	needEnv(t)
	clk := clocktesting.NewFakeClock(now)
	for _, tt := range []struct {
		golden string
		args   []string
	}{
		{"why-unauthorized", []string{"why", "billing", "-n", "data"}},
		{"why-rate-limited", []string{"why", "clicks", "-n", "team-b"}},
		{"why-ready", []string{"why", "analytics-prod", "-n", "data"}},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			r := runPlugin(testContext(t), clk, tt.args...)
			if strings.Contains(r.stdout+r.stderr, secretValue) {
				t.Errorf("why printed the Secret's value:\n%s", r.stdout)
			}
			golden(t, tt.golden, r.transcript())
		})
	}
}

// TestSuspendResumeGolden: suspend and resume set spec.suspend, and say
// when there was nothing to do.
func TestSuspendResumeGolden(t *testing.T) {
	needEnv(t)
	ctx := testContext(t)
	clk := clocktesting.NewFakeClock(now)
	w := newWatch("sync-tests", "to-suspend")
	if err := env.Client.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	var transcript strings.Builder
	for _, args := range [][]string{{"suspend", "to-suspend"}, {"suspend", "to-suspend"}, {"resume", "to-suspend"}, {"suspend", "no-such-watch"}} {
		r := runPlugin(ctx, clk, append(args, "-n", "sync-tests")...)
		fmt.Fprintf(&transcript, "$ kubectl servicewatch %s\n%s", strings.Join(args, " "), r.transcript())
		if args[0] == "suspend" && args[1] == "to-suspend" && !suspended(ctx, t, "to-suspend") {
			t.Errorf("after %v, spec.suspend is not true", args)
		}
	}
	if suspended(ctx, t, "to-suspend") {
		t.Error("after resume, spec.suspend is still true")
	}
	golden(t, "suspend-resume", transcript.String())
}

func suspended(ctx context.Context, t *testing.T, name string) bool {
	t.Helper()
	w := &serviceWatch{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "sync-tests", Name: name}, w); err != nil {
		t.Fatal(err)
	}
	return w.Spec.Suspend
}

// syncFixture is a watch of namespace sync-tests that the manager last
// synced for the request "earlier", with Ready True: the stale answer that
// a new request must not take.
func syncFixture(ctx context.Context, t *testing.T, name string) *serviceWatch {
	t.Helper()
	w := newWatch("sync-tests", name)
	w.Annotations = map[string]string{requestedAtAnnotation: "earlier"}
	err := createWithStatus(ctx, env.Client, w, func(w *serviceWatch) {
		w.Status.LastHandledRequestedAt = "earlier"
		w.Status.LastSyncTime = &metav1.Time{Time: now.Add(-time.Minute)}
		w.Status.Conditions = []metav1.Condition{condAt(conditionReady, metav1.ConditionTrue, "Synced", "the sync before the request", time.Hour, w.Generation)}
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// awaitRequest waits until the plugin has set the annotation to token,
// and returns the watch as it is then.
func awaitRequest(ctx context.Context, t *testing.T, name, token string) *serviceWatch {
	t.Helper()
	w := &serviceWatch{}
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "sync-tests", Name: name}, w); err != nil {
			return false, err
		}
		return w.Annotations[requestedAtAnnotation] == token, nil
	})
	if err != nil {
		t.Fatalf("the plugin did not set %s=%s: %v", requestedAtAnnotation, token, err)
	}
	return w
}

// writeStatusAsManager changes the status as the manager would.
func writeStatusAsManager(ctx context.Context, t *testing.T, w *serviceWatch, change func(*serviceWatch)) {
	t.Helper()
	before := w.DeepCopy()
	change(w)
	if err := env.Client.Status().Patch(ctx, w, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

// notReturned fails t when the plugin returned within a while: a second of
// real time, as the plugin is a process of its own whose wait nothing but
// its return shows; one that returns wrongly does so within milliseconds of
// the status it read.
func notReturned(t *testing.T, done <-chan result, why string) {
	t.Helper()
	select {
	case r := <-done:
		t.Fatalf("sync --wait returned %s:\n%s", why, r.transcript())
	case <-time.After(time.Second):
	}
}

func await(t *testing.T, done <-chan result) result {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(time.Minute):
		t.Fatal("sync --wait did not return")
		return result{}
	}
}

// TestSyncWaitWaitsForItsOwnSync: with Ready True from an earlier sync,
// sync --wait returns only once the manager echoes the new token, however
// many other status writes come first, and prints that sync's Ready.
func TestSyncWaitWaitsForItsOwnSync(t *testing.T) {
	needEnv(t)
	ctx := testContext(t)
	syncFixture(ctx, t, "stale-ready")
	done := runAsync(ctx, clocktesting.NewFakeClock(now), "sync", "stale-ready", "-n", "sync-tests", "--wait")
	const token = requestToken
	w := awaitRequest(ctx, t, "stale-ready", token)
	notReturned(t, done, "on the Ready of the sync before its request")

	// The manager announces the sync: Reconciling, Ready still True and
	// the echo still the earlier request's.
	writeStatusAsManager(ctx, t, w, func(w *serviceWatch) {
		w.Status.Conditions = append(w.Status.Conditions, condAt(conditionReconciling, metav1.ConditionTrue, "Progressing", "syncing as requested", 0, w.Generation))
	})
	notReturned(t, done, "on a status write that does not echo its token")

	writeStatusAsManager(ctx, t, w, func(w *serviceWatch) {
		w.Status.LastHandledRequestedAt = token
		w.Status.Conditions = []metav1.Condition{condAt(conditionReady, metav1.ConditionTrue, "Synced", "Synced 4 pipes, 1 reverse private endpoints and 2 alerts", 0, w.Generation)}
	})
	r := await(t, done)
	if r.code != exitOK {
		t.Errorf("exit status %d after a successful sync", r.code)
	}
	golden(t, "sync-wait-ready", r.transcript())
}

// TestSyncWaitFailedSync: a requested sync that leaves Ready False exits 1
// and prints Ready's reason and message.
func TestSyncWaitFailedSync(t *testing.T) {
	needEnv(t)
	ctx := testContext(t)
	syncFixture(ctx, t, "fails")
	done := runAsync(ctx, clocktesting.NewFakeClock(now), "sync", "fails", "-n", "sync-tests", "--wait")
	w := awaitRequest(ctx, t, "fails", requestToken)
	writeStatusAsManager(ctx, t, w, func(w *serviceWatch) {
		w.Status.LastHandledRequestedAt = requestToken
		w.Status.Conditions = []metav1.Condition{condAt(conditionReady, metav1.ConditionFalse, "Unauthorized", "the management API answered 401 Unauthorized", 0, w.Generation)}
	})
	r := await(t, done)
	if r.code == exitOK {
		t.Error("exit status 0 after a failed sync")
	}
	golden(t, "sync-wait-failed", r.transcript())
}

// TestSyncWaitTimesOut: when the manager does not answer before --timeout,
// sync exits 1 and says what it waited for.
func TestSyncWaitTimesOut(t *testing.T) {
	needEnv(t)
	ctx := testContext(t)
	syncFixture(ctx, t, "unanswered")
	clk := clocktesting.NewFakeClock(now)
	done := runAsync(ctx, clk, "sync", "unanswered", "-n", "sync-tests", "--wait", "--timeout", "30s")
	awaitRequest(ctx, t, "unanswered", requestToken)
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return clk.HasWaiters(), nil
	}); err != nil {
		t.Fatalf("sync --wait set no timer: %v", err)
	}
	clk.Step(29 * time.Second)
	notReturned(t, done, "before its timeout")
	clk.Step(time.Second)
	r := await(t, done)
	if r.code == exitOK {
		t.Error("exit status 0 after a timeout")
	}
	golden(t, "sync-wait-timeout", r.transcript())
}

// TestSyncNoWait: without --wait, sync sets the annotation and prints the
// kubectl wait command that waits for it.
func TestSyncNoWait(t *testing.T) {
	needEnv(t)
	ctx := testContext(t)
	syncFixture(ctx, t, "no-wait")
	r := runPlugin(ctx, clocktesting.NewFakeClock(now), "sync", "no-wait", "-n", "sync-tests")
	awaitRequest(ctx, t, "no-wait", requestToken)
	golden(t, "sync-no-wait", r.transcript())
}

// TestAPIWarningsReachStderr: a warning of the API server (here an
// admission policy's, as a deprecated API version's would be) is printed
// on stderr as kubectl prints it, not lost in a logger nobody set up.
func TestAPIWarningsReachStderr(t *testing.T) {
	needEnv(t)
	ctx := testContext(t)
	const ns = "warned"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"warn": "yes"}}}); err != nil {
		t.Fatal(err)
	}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "warn-on-servicewatch-updates"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"cloud.servicewatch.io"}, APIVersions: []string{"*"}, Resources: []string{"servicewatches"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "servicewatches here are watched by a test"}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "warn-on-servicewatch-updates"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn},
			MatchResources:    &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"warn": "yes"}}},
		},
	}
	for _, o := range []client.Object{policy, binding, newWatch(ns, "warned")} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// The API server applies a new policy a moment after it is created.
	var r result
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		r = runPlugin(ctx, clocktesting.NewFakeClock(time.Now()), "suspend", "warned", "-n", ns)
		if r.code == exitOK && !strings.Contains(r.stderr, "Warning:") {
			r = runPlugin(ctx, clocktesting.NewFakeClock(time.Now()), "resume", "warned", "-n", ns)
		}
		return strings.Contains(r.stderr, "servicewatches here are watched by a test"), nil
	})
	if err != nil {
		t.Fatalf("no warning of the API server on stderr:\n%s", r.transcript())
	}
	if !strings.HasPrefix(r.stderr, "Warning: ") || r.code != exitOK {
		t.Errorf("want kubectl's \"Warning: \" line and exit status 0:\n%s", r.transcript())
	}
}

// TestKubectlWaitHintWaitsForTheSync: the kubectl wait command that sync
// prints (and README shows) waits for that sync's echo, also while Ready is
// True from the sync before, and returns once the manager echoes the token.
func TestKubectlWaitHintWaitsForTheSync(t *testing.T) {
	needEnv(t)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("needs kubectl on the PATH")
	}
	ctx := testContext(t)
	syncFixture(ctx, t, "kubectl-wait")
	r := runPlugin(ctx, clocktesting.NewFakeClock(now), "sync", "kubectl-wait", "-n", "sync-tests")
	_, hint, ok := strings.Cut(strings.TrimSpace(r.stdout), "wait for it with: kubectl ")
	if !ok {
		t.Fatalf("sync printed no kubectl wait command:\n%s", r.transcript())
	}
	// The hint is for a shell: its one quoted word loses its quotes there.
	args := append(strings.Fields(strings.ReplaceAll(hint, "'", "")), "--kubeconfig", kubeconfig, "--timeout", "50s")
	done := make(chan error, 1)
	var out testenv.LockedBuffer
	go func() {
		cmd := exec.CommandContext(ctx, kubectl, args...)
		cmd.Stdout, cmd.Stderr = &out, &out
		done <- cmd.Run()
	}()
	w := awaitRequest(ctx, t, "kubectl-wait", requestToken)
	// Real time, as in notReturned: kubectl wait is a process whose wait
	// nothing but its return shows.
	select {
	case err := <-done:
		t.Fatalf("kubectl %s returned before the sync was handled (%v):\n%s", strings.Join(args, " "), err, out.String())
	case <-time.After(2 * time.Second):
	}
	writeStatusAsManager(ctx, t, w, func(w *serviceWatch) { w.Status.LastHandledRequestedAt = requestToken })
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
	case <-time.After(50 * time.Second):
		t.Fatalf("kubectl %s did not return after the sync was handled:\n%s", strings.Join(args, " "), out.String())
	}
}

// Terminal escapes a tenant's host, a tenant or anyone who may create
// events in a namespace can put in what the plugin prints.
const (
	osc52    = "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07" // writes the clipboard
	eraseRow = "\x1b[1A\x1b[2K"                     // erases the row above
	c1CSI    = "\u009b2J"                           // clears the screen, in one character
	del      = "\x7f"
)

// hostileWatch is a watch of namespace hostile whose status, annotation
// and events carry terminal escapes, as the API server stores them for a
// manager that copied them (before issue 37) or a tenant who wrote them.
func hostileWatch(ctx context.Context, t *testing.T) *serviceWatch {
	t.Helper()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "hostile"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	w := newWatch("hostile", "evil")
	w.Annotations = map[string]string{requestedAtAnnotation: "now" + osc52}
	err := createWithStatus(ctx, env.Client, w, func(w *serviceWatch) {
		w.Status.LastHandledRequestedAt = "earlier"
		w.Status.Pipes = []swv1.Pipe{
			fixturePipe("p1"+del, "logs"+osc52, "Failed"+eraseRow, "kafka"+c1CSI),
			fixturePipe("p2", "two\nrows\tsplit", "Running\r", "kafka"),
		}
		w.Status.Alerts = []swv1.AlertStatus{{ID: "a1", Name: ptr.To("lag" + c1CSI), State: ptr.To("OK" + eraseRow), Error: "boom" + osc52}}
		w.Status.Conditions = []metav1.Condition{condAt(conditionReady, metav1.ConditionFalse, "Failed", "pipe logs"+osc52+" failed", time.Minute, w.Generation)}
	})
	if err != nil {
		t.Fatal(err)
	}
	note := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: "evil.1"},
		EventTime:  metav1.NewMicroTime(now.Add(-time.Minute)), ReportingController: "someone", ReportingInstance: "someone-1",
		Action: "Sync", Reason: "Forged", Type: corev1.EventTypeWarning, Note: "hidden" + eraseRow + osc52 + c1CSI + del + "\nfake row",
		Regarding: corev1.ObjectReference{APIVersion: swv1.GroupVersion.String(), Kind: "ServiceWatch", Namespace: w.Namespace, Name: w.Name, UID: w.UID},
	}
	if err := env.Client.Create(ctx, note); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestPrintsNoTerminalEscapes: get (every output format) and why print no
// character a terminal acts on, from item names, states, errors, the
// requested-at annotation, condition messages or event notes; the escapes
// show as text instead, and a newline or tab in a value splits no row.
func TestPrintsNoTerminalEscapes(t *testing.T) {
	needEnv(t)
	ctx := testContext(t)
	hostileWatch(ctx, t)
	clk := clocktesting.NewFakeClock(now)
	for _, args := range [][]string{
		{"get", "pipes", "-n", "hostile"},
		{"get", "pipes", "-A", "-o", "wide"},
		{"get", "alerts", "-n", "hostile", "-o", "wide"},
		{"get", "pipes", "-n", "hostile", "-o", "json"},
		{"get", "alerts", "-n", "hostile", "-o", "yaml"},
		{"why", "evil", "-n", "hostile"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := runPlugin(ctx, clk, args...)
			if r.code != exitOK {
				t.Fatalf("exit status %d:\n%s", r.code, r.transcript())
			}
			for _, out := range []string{r.stdout, r.stderr} {
				if c, ok := terminalControl(strings.ReplaceAll(out, "\n", "")); ok {
					t.Errorf("printed %U, a character the terminal acts on:\n%q", c, out)
				}
			}
			if !strings.Contains(r.stdout, `\x1b`) && !strings.Contains(r.stdout, `\u001b`) && !strings.Contains(r.stdout, `\u009b`) {
				t.Errorf("the escapes do not show:\n%s", r.stdout)
			}
		})
	}
	// One row per pipe, however its values break lines: the header and 2.
	r := runPlugin(ctx, clk, "get", "pipes", "-n", "hostile")
	if lines := strings.Count(r.stdout, "\n"); lines != 3 {
		t.Errorf("get pipes printed %d lines for 2 pipes:\n%s", lines, r.stdout)
	}
	why := runPlugin(ctx, clk, "why", "evil", "-n", "hostile").stdout
	for _, want := range []string{`requested-at=now\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07`, `hidden\x1b[1A\x1b[2K`, `\nfake row`} {
		if !strings.Contains(why, want) {
			t.Errorf("why does not show %q:\n%s", want, why)
		}
	}
}

// TestSyncWaitNotAnsweredByARestoredRequest: another writer (a GitOps tool
// restoring its manifest) sets the annotation back to the value the manager
// handled before the request. The old echo is current again and Ready is
// True from the earlier sync: sync --wait must not take that for its
// answer; it warns, and fails at its timeout.
func TestSyncWaitNotAnsweredByARestoredRequest(t *testing.T) {
	needEnv(t)
	ctx := testContext(t)
	syncFixture(ctx, t, "restored")
	clk := clocktesting.NewFakeClock(now)
	done := runAsync(ctx, clk, "sync", "restored", "-n", "sync-tests", "--wait", "--timeout", "30s")
	w := awaitRequest(ctx, t, "restored", requestToken)
	before := w.DeepCopy()
	w.Annotations[requestedAtAnnotation] = "earlier"
	if err := env.Client.Patch(ctx, w, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	notReturned(t, done, "on the echo of the request before it, set back by another writer")
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return clk.HasWaiters(), nil
	}); err != nil {
		t.Fatalf("sync --wait set no timer: %v", err)
	}
	clk.Step(30 * time.Second)
	r := await(t, done)
	if r.code == exitOK {
		t.Errorf("exit status 0 for a sync the manager never handled:\n%s", r.transcript())
	}
	if !strings.Contains(r.stderr, `warning: another writer set `+requestedAtAnnotation+` back to "earlier"`) {
		t.Errorf("no warning that the request was set aside:\n%s", r.transcript())
	}
}
