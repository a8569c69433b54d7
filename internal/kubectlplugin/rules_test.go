package kubectlplugin

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// now is the time of every test of this package: times in the fixtures are
// relative to it, so that ages in the output never change.
var now = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(d)} }

func cond(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: *at(-10 * time.Minute)}
}

// synced is a watch that synced 2 minutes ago, every 5 minutes, and is Ready.
func synced() *serviceWatch {
	w := &serviceWatch{}
	w.Name, w.Namespace, w.Generation = "analytics-prod", "data", 3
	w.Spec.Interval = metav1.Duration{Duration: 5 * time.Minute}
	w.Status.ObservedGeneration = 3
	w.Status.LastSyncTime = at(-2 * time.Minute)
	w.Status.Conditions = []metav1.Condition{cond(conditionReady, metav1.ConditionTrue, "Synced", "Synced 2 pipes")}
	w.Status.Conditions[0].ObservedGeneration = w.Generation
	return w
}

func TestNextSync(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(w *serviceWatch)
		want   string
	}{
		{"due an interval after the last sync", func(*serviceWatch) {}, "about 2026-11-26T12:03:00Z (in 3m): spec.interval 5m0s after the last sync"},
		{"overdue", func(w *serviceWatch) { w.Status.LastSyncTime = at(-7 * time.Minute) }, "about 2026-11-26T11:58:00Z (2m ago)"},
		// An object that predates the CRD's bounds syncs as the manager bounds it (swv1's SyncInterval).
		{"an interval under the floor: the default", func(w *serviceWatch) { w.Spec.Interval.Duration = 10 * time.Second }, "about 2026-11-26T12:03:00Z (in 3m)"},
		{"an interval over the ceiling: the ceiling", func(w *serviceWatch) { w.Spec.Interval.Duration = 48 * time.Hour }, "about 2026-11-27T11:58:00Z"},
		{"suspended", func(w *serviceWatch) { w.Spec.Suspend = true }, "none while suspended (kubectl servicewatch resume analytics-prod)"},
		{"new generation", func(w *serviceWatch) { w.Generation = 4 }, "now: generation 4 of the spec is not synced yet"},
		{"requested", func(w *serviceWatch) {
			w.Annotations = map[string]string{requestedAtAnnotation: "b"}
			w.Status.LastHandledRequestedAt = "a"
		}, "now: a requested sync waits for the manager"},
		{"never synced", func(w *serviceWatch) { w.Status.LastSyncTime = nil }, "as soon as the manager reaches it"},
		{"held past the interval by a 429", func(w *serviceWatch) {
			w.Status.RetryNotBefore = at(20 * time.Minute)
		}, "not before 2026-11-26T12:20:00Z (in 20m): the cloud asked to wait"},
		{"held, but less than the interval", func(w *serviceWatch) {
			w.Status.RetryNotBefore = at(time.Minute)
		}, "about 2026-11-26T12:03:00Z (in 3m)"},
		{"budget stretched", func(w *serviceWatch) {
			w.Status.Conditions = append(w.Status.Conditions, cond(conditionIntervalMet, metav1.ConditionFalse, "BudgetExceeded", "effective interval 12m"))
		}, "later while the rate budget is stretched"},
		{"stalled", func(w *serviceWatch) {
			w.Status.Conditions = []metav1.Condition{
				cond(conditionReady, metav1.ConditionFalse, "Unauthorized", "401"),
				cond(conditionStalled, metav1.ConditionTrue, "Unauthorized", "401"),
			}
		}, "at once when you fix what Stalled says"},
		{"failing, retried", func(w *serviceWatch) {
			w.Status.Conditions = []metav1.Condition{cond(conditionReady, metav1.ConditionFalse, "ServerError", "503")}
		}, "a failed part is retried sooner, with backoff"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := synced()
			tt.change(w)
			if got := nextSync(w, now); !strings.Contains(got, tt.want) {
				t.Errorf("next sync %q, want it to say %q", got, tt.want)
			}
		})
	}
}

func TestBudgetState(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(w *serviceWatch)
		want   string
	}{
		{"within budget", func(*serviceWatch) {}, "within budget: syncs every spec.interval"},
		{"held by a 429", func(w *serviceWatch) {
			w.Status.RetryNotBefore = at(3 * time.Minute)
			w.Status.Conditions = append(w.Status.Conditions, cond("PipesSynced", metav1.ConditionFalse, reasonRateLimited, "429"))
		}, "held by a 429 until 2026-11-26T12:03:00Z (in 3m): no call to the cloud before then"},
		{"held by a 503", func(w *serviceWatch) {
			w.Status.RetryNotBefore = at(3 * time.Minute)
		}, "held by a 503 with Retry-After until 2026-11-26T12:03:00Z (in 3m)"},
		{"a wait that is over holds nothing", func(w *serviceWatch) {
			w.Status.RetryNotBefore = at(-time.Minute)
		}, "within budget"},
		{"stretched", func(w *serviceWatch) {
			w.Status.Conditions = append(w.Status.Conditions, cond(conditionIntervalMet, metav1.ConditionFalse, "BudgetExceeded", "effective interval 12m"))
		}, "stretched: effective interval 12m"},
		{"waiting for its turn", func(w *serviceWatch) {
			w.Status.Conditions = append(w.Status.Conditions, cond(conditionReconciling, metav1.ConditionTrue, "Progressing", "syncing generation 4"))
		}, "waiting for its turn: syncing generation 4"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := synced()
			tt.change(w)
			if got := budgetState(w, now); !strings.Contains(got, tt.want) {
				t.Errorf("budget %q, want it to say %q", got, tt.want)
			}
		})
	}
}

func TestRequestPending(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, tt := range []struct {
		asked, handled string
		want           bool
	}{
		{"", "", false},
		{"a", "", true},
		{"a", "a", false},
		{"b", "a", true},
		// The manager echoes a value over 256 bytes, or one with control
		// characters, as its hash.
		{long, hashOf(long), false},
		{long, hashOf("another"), true},
		{long, "", true},
		{"now\x1b]52;c;aGk=\x07", hashOf("now\x1b]52;c;aGk=\x07"), false},
		{"now\x1b]52;c;aGk=\x07", "now", true},
	} {
		w := synced()
		w.Annotations = map[string]string{requestedAtAnnotation: tt.asked}
		w.Status.LastHandledRequestedAt = tt.handled
		if got := requestPending(w); got != tt.want {
			t.Errorf("asked %.10q, handled %q: pending %v, want %v", tt.asked, tt.handled, got, tt.want)
		}
	}
}

func hashOf(v string) string {
	sum := sha256.Sum256([]byte(v))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// counting is a random source that never repeats: each read is the next
// number.
type counting struct{ n byte }

func (c *counting) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 0
	}
	c.n++
	p[len(p)-1] = c.n
	return len(p), nil
}

// TestNewTokenIsNew: the token sync sets is the time and a random part,
// never the value the annotation or the echo already holds; else the
// manager would see no new request, or the old echo would pass for the
// answer. A source that repeats itself fails the request.
func TestNewTokenIsNew(t *testing.T) {
	w := synced()
	random := &counting{}
	first, err := newToken(now, random, w)
	if err != nil || first != "2026-11-26T12:00:00Z-0000000000000001" {
		t.Errorf("token %q (%v), want the time in RFC 3339 and 16 hex digits", first, err)
	}
	w.Annotations = map[string]string{requestedAtAnnotation: "2026-11-26T12:00:00Z-0000000000000002"}
	w.Status.LastHandledRequestedAt = "2026-11-26T12:00:00Z-0000000000000003"
	if second, err := newToken(now, random, w); err != nil || second != "2026-11-26T12:00:00Z-0000000000000004" {
		t.Errorf("token %q (%v), want neither the annotation's nor the echo's", second, err)
	}
	w.Annotations[requestedAtAnnotation] = "2026-11-26T12:00:00Z-0000000000000000"
	if got, err := newToken(now, strings.NewReader(strings.Repeat("\x00", 100)), w); err == nil {
		t.Errorf("a source of zeros made %q, the annotation's value", got)
	}
}

// TestAnsweredOnlyByThisRequest: an echo of an earlier request never
// answers, whatever Ready says; the echo of this one does, and so does the
// echo of a request someone made after it.
func TestAnsweredOnlyByThisRequest(t *testing.T) {
	w := synced()
	tw := newTokenWait(nil, w, "t2", []string{"t1"}, io.Discard)
	w.Annotations = map[string]string{requestedAtAnnotation: "t2"}
	w.Status.LastHandledRequestedAt = "t1"
	if tw.answered(w) {
		t.Error("the echo of an earlier request, with Ready True, was taken for the answer")
	}
	w.Annotations[requestedAtAnnotation] = "t3"
	if tw.answered(w) {
		t.Error("a later request that is not handled yet was taken for the answer")
	}
	w.Status.LastHandledRequestedAt = "t3"
	if !tw.answered(w) {
		t.Error("the echo of a request made after this one does not answer it")
	}
	w.Status.LastHandledRequestedAt = "t2"
	if !tw.answered(w) {
		t.Error("the echo of this request does not answer it")
	}
}

// TestAnsweredNotByARestoredRequest: another writer setting the annotation
// back to a value handled before this request (a GitOps tool restoring its
// manifest) makes the old echo current again: it answers nothing, and the
// user is told once why the wait may not end.
func TestAnsweredNotByARestoredRequest(t *testing.T) {
	for _, restored := range []string{"t1", "t0", ""} {
		w := synced()
		w.Annotations = map[string]string{requestedAtAnnotation: "t0"} // t0 asked, t1 handled, before this request
		var warnings strings.Builder
		tw := newTokenWait(nil, w, "t2", []string{"t0", "t1", "t1"}, &warnings)
		w.Status.LastHandledRequestedAt = "t1"
		w.Annotations[requestedAtAnnotation] = "t2"
		if tw.answered(w) {
			t.Fatal("answered by the earlier echo")
		}
		w.Annotations[requestedAtAnnotation] = restored
		for range 2 {
			if tw.answered(w) {
				t.Errorf("restoring %q: the echo of a sync before the request answered it", restored)
			}
		}
		w.Status.LastHandledRequestedAt = restored // the manager, or the other writer, echoes it
		if restored != "" && tw.answered(w) {
			t.Errorf("restoring %q: its echo answered the request", restored)
		}
		if strings.Count(warnings.String(), "warning: another writer") != 1 {
			t.Errorf("restoring %q: warnings %q, want one", restored, warnings.String())
		}
	}
}

func TestSelectAndSortRows(t *testing.T) {
	newPipe := func(id, name, state, kind string) pipe {
		return pipe{ID: ptr.To(id), Name: ptr.To(name), State: ptr.To(state), SourceKind: ptr.To(kind)}
	}
	a, b := synced(), synced()
	a.Namespace, a.Name = "team-b", "clicks"
	a.Status.Pipes = []pipe{newPipe("p4", "zeta", "Failed", "kinesis"), newPipe("p5", "alpha", "Running", "kafka")}
	b.Status.Pipes = []pipe{newPipe("p1", "events", "failed", "kafka"), newPipe("p2", "logs", "Running", "objectStorage")}
	kind, _ := findKind("pipe")
	ids := func(rows []row) string {
		var s []string
		for _, r := range rows {
			s = append(s, r.id)
		}
		return strings.Join(s, ",")
	}
	rows := selectRows([]serviceWatch{*a, *b}, kind, []string{"FAILED"})
	if err := sortRows(rows, kind, ""); err != nil {
		t.Fatal(err)
	}
	if got := ids(rows); got != "p1,p4" {
		t.Errorf("--state FAILED rows %s, want p1,p4 (any case, by namespace then watch)", got)
	}
	rows = selectRows([]serviceWatch{*a, *b}, kind, nil)
	if err := sortRows(rows, kind, "name"); err != nil {
		t.Fatal(err)
	}
	if got := ids(rows); got != "p5,p1,p2,p4" {
		t.Errorf("--sort-by name rows %s, want p5,p1,p2,p4", got)
	}
	if err := sortRows(rows, kind, "flavor"); err == nil || !strings.Contains(err.Error(), "use namespace, watch, id, name, state or source") {
		t.Errorf("--sort-by flavor: error %v, want one naming the columns", err)
	}
}
