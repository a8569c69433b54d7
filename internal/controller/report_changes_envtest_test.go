package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"

	"github.com/prometheus/client_golang/prometheus"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/controller"
	"github.com/servicewatch/servicewatch/internal/egress"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/testsupport/testenv"
)

// changeReasons are the reasons of the Events of item state changes.
var changeReasons = map[string]bool{"PipeStateChanged": true, "ReversePrivateEndpointStatusChanged": true,
	"AlertStateChanged": true, "ItemStatesChanged": true}

// changeEvents are the Events of item state changes about the watch.
func (f *fixture) changeEvents(name string) []eventsv1.Event {
	f.t.Helper()
	var out []eventsv1.Event
	for _, e := range f.events(name) {
		if changeReasons[e.Reason] {
			out = append(out, e)
		}
	}
	return out
}

// pipesIn are n pipes of the fake's default service, all in state.
func pipesIn(n int, state func(i int) string) []map[string]any {
	pipes := make([]map[string]any, n)
	for i := range pipes {
		pipes[i] = map[string]any{"id": fmt.Sprintf("0000%04d-0000-4000-8000-000000000000", i), "serviceId": fakecloud.DefaultServiceID,
			"name": fmt.Sprintf("orders_%d", i), "state": state(i)}
	}
	return pipes
}

func allIn(state string) func(int) string { return func(int) string { return state } }

// pipeSince is the since of the watch's pipe of that id.
func pipeSince(w *swv1.ServiceWatch, id string) time.Time {
	for _, p := range w.Status.Pipes {
		if ptr.Deref(p.ID, "") == id && p.Since != nil {
			return p.Since.Time
		}
	}
	return time.Time{}
}

// afterSecond waits until the clock is past the second of t: since is kept
// in whole seconds, and a test that wants to see it move must not sync
// twice within one.
func afterSecond(t time.Time) {
	for !time.Now().Truncate(time.Second).After(t) {
		time.Sleep(50 * time.Millisecond)
	}
}

// A pipe Running, then Failed, then Running again across syncs: exactly
// two Events, a Warning then a Normal, naming the pipe and its states, and
// a since that changed twice.
func TestPipeStateChangesAreToldOnceEach(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := "00000000-0000-4000-8000-000000000000"
	f.fake.SetPipes(fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, pipesIn(1, allIn("Running")))
	w := f.readyWatch("flips")
	first := pipeSince(w, id)
	if first.IsZero() {
		t.Fatalf("the pipe has no since after the first sync: %s", indentedJSON(w.Status.Pipes))
	}
	if got := f.changeEvents("flips"); len(got) != 0 {
		t.Fatalf("the first sync told changes: %s", mustJSON(t, got))
	}

	var sinces []time.Time
	for _, state := range []string{"Failed", "Running"} {
		afterSecond(first)
		f.fake.SetPipes(fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, pipesIn(1, allIn(state)))
		w = f.requestSyncAndWait("flips")
		since := pipeSince(w, id)
		if !since.After(first) {
			t.Fatalf("after the pipe went %s its since is %v, not after %v", state, since, first)
		}
		sinces, first = append(sinces, since), since
	}
	got := f.changeEvents("flips")
	if len(got) != 2 {
		t.Fatalf("%d change Events, want 2: %s", len(got), mustJSON(t, got))
	}
	byType := map[string]eventsv1.Event{}
	for _, e := range got {
		byType[e.Type] = e
	}
	warning, normal := byType["Warning"], byType["Normal"]
	if warning.Reason != "PipeStateChanged" || !strings.Contains(warning.Note, "Pipe orders_0 (id "+id+"): Running → Failed") {
		t.Errorf("the Warning: %s", mustJSON(t, warning))
	}
	if normal.Reason != "PipeStateChanged" || !strings.Contains(normal.Note, "Failed → Running") {
		t.Errorf("the Normal: %s", mustJSON(t, normal))
	}
	if warning.Regarding.Kind != "ServiceWatch" || warning.Regarding.UID != w.UID || warning.ReportingController == "" {
		t.Errorf("the Event regards %+v, reported by %q", warning.Regarding, warning.ReportingController)
	}
	// An unchanged sync tells nothing more and moves no since.
	afterSecond(first)
	w = f.requestSyncAndWait("flips")
	if got := f.changeEvents("flips"); len(got) != 2 {
		t.Errorf("an unchanged sync told more: %d change Events", len(got))
	}
	if since := pipeSince(w, id); !since.Equal(sinces[1]) {
		t.Errorf("an unchanged sync moved since from %v to %v", sinces[1], since)
	}
}

// The first sync of a watch of 100 pipes, some failing, tells no change;
// every pipe gets a since.
func TestFirstSyncTellsNoChange(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.fake.SetPipes(fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, pipesIn(100, func(i int) string {
		return map[bool]string{true: "Failed", false: "Running"}[i%10 == 0]
	}))
	w := f.readyWatch("hundred")
	for _, p := range w.Status.Pipes {
		if p.Since == nil {
			t.Fatalf("pipe %s has no since", *p.ID)
		}
	}
	if len(w.Status.Pipes) != 100 {
		t.Fatalf("%d pipes listed", len(w.Status.Pipes))
	}
	if got := f.changeEvents("hundred"); len(got) != 0 {
		t.Errorf("the first sync told %d changes: %s", len(got), mustJSON(t, got))
	}
}

// 1,000 pipes failing in one sync: a bounded number of Events, the last of
// which counts the rest by transition.
func TestThousandChangesAreCounted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.fake.SetPipes(fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, pipesIn(1000, allIn("Running")))
	f.readyWatch("thousand")
	f.fake.SetPipes(fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, pipesIn(1000, allIn("Failed")))
	f.requestSyncAndWait("thousand")
	got := f.changeEvents("thousand")
	if len(got) == 0 || len(got) > 11 {
		t.Fatalf("%d change Events for 1,000 changes, want 1 to 11", len(got))
	}
	counted := 0
	for _, e := range got {
		if e.Type != "Warning" {
			t.Errorf("a change into Failed told as %s: %s", e.Type, e.Note)
		}
		if e.Reason == "ItemStatesChanged" {
			if !strings.Contains(e.Note, fmt.Sprintf("%d Pipe Running → Failed", 1000-(len(got)-1))) {
				t.Errorf("the counting Event does not count the rest: %s", e.Note)
			}
			counted++
		}
	}
	if counted != 1 {
		t.Errorf("%d counting Events, want 1: %s", counted, mustJSON(t, got))
	}
}

// A manager that stops between two syncs: the next manager, on the same API
// server, neither tells again what the first told, nor loses what changed
// while none ran.
func TestRestartNeitherRepeatsNorLosesAChange(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.fake.SetPipes(fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, pipesIn(2, allIn("Running")))
	f.createSecrets()
	w := f.newWatch("restarts")
	w.Labels = map[string]string{ownManagerLabel: "changes-restart"}
	f.create(w)

	stop := startStoppableManager(t, "changes-restart")
	f.waitFor("restarts", 20*time.Second, "Ready", isReady)
	f.fake.SetPipes(fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, pipesIn(2, func(i int) string {
		return map[bool]string{true: "Failed", false: "Running"}[i == 0]
	}))
	f.requestSyncAndWait("restarts")
	if got := f.changeEvents("restarts"); len(got) != 1 || got[0].Type != "Warning" {
		t.Fatalf("before the restart: %s", mustJSON(t, got))
	}
	stop()

	// While no manager runs, the failed pipe recovers and the other fails.
	f.fake.SetPipes(fakecloud.DefaultOrganizationID, fakecloud.DefaultServiceID, pipesIn(2, func(i int) string {
		return map[bool]string{true: "Failed", false: "Running"}[i == 1]
	}))
	startStoppableManager(t, "changes-restart")
	f.requestSyncAndWait("restarts")
	got := f.changeEvents("restarts")
	notes := make([]string, len(got))
	for i, e := range got {
		notes[i] = e.Type + " " + e.Note
	}
	if len(got) != 3 {
		t.Fatalf("after the restart, %d change Events, want 3 (one before, two while down): %v", len(got), notes)
	}
	for _, want := range []string{"Normal Pipe orders_0", "Warning Pipe orders_1", "Warning Pipe orders_0"} {
		n := 0
		for _, note := range notes {
			if strings.HasPrefix(note, want) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d Events %q..., want 1: %v", n, want, notes)
		}
	}
}

// startStoppableManager runs a manager of its own for the watches labeled
// ownManagerLabel=name, and returns what stops it (and waits until it has);
// the test's end stops it too.
func startStoppableManager(t *testing.T, name string) (stop func()) {
	t.Helper()
	syncMetrics, err := metrics.NewSync(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	opts := env.ManagerOptions()
	opts.Cache = controller.CacheOptions(controller.Scope{WatchSelector: labels.SelectorFromSet(labels.Set{ownManagerLabel: name})})
	opts.Controller = config.Controller{SkipNameValidation: ptr.To(true)}
	mgr, err := ctrl.NewManager(env.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	allowed, err := egress.ParseURLAllowList([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	r := testenv.Reconciler(mgr, syncMetrics, "", controller.Options{AllowedAPIURLs: allowed, ManagementAPIURL: notAllowedFallbackURL, AlertAPIURL: notAllowedFallbackURL})
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the test's manager: %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}
