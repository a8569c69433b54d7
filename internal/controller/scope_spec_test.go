package controller

import (
	"crypto/sha256"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/pacing"
)

func TestReadHash(t *testing.T) {
	a, b := testWatch(), testWatch()
	a.Spec.ServiceID, b.Spec.ServiceID = "s1", "s1"
	b.Spec.AlertIDs = []string{"x"}
	b.Name = "other"
	if readHash(a, "https://api") != readHash(b, "https://api") {
		t.Error("two watches of one service at one API hash apart")
	}
	b.Spec.ManagementAPI.URL = "https://other-api"
	if readHash(a, "https://api") == readHash(b, "https://api") {
		t.Error("the same service at two APIs hashes alike")
	}
}

// hostileRequest is a requested-at value that commands a terminal.
const hostileRequest = "now\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07\u009b2J\x7f"

func TestRequestedAtEcho(t *testing.T) {
	long := strings.Repeat("x", 40000)
	tests := []struct {
		value, want string
	}{
		{"", ""},
		{"2026-11-23T12:00:00Z", "2026-11-23T12:00:00Z"},
		{strings.Repeat("y", maxRequestedAtEcho), strings.Repeat("y", maxRequestedAtEcho)},
		{long, "sha256:" + fmt.Sprintf("%x", sha256.Sum256([]byte(long)))},
		// A terminal's escapes (OSC 52, a C1 CSI, DEL) are not copied into
		// status: the value shows as its hash, handled once all the same.
		{hostileRequest, "sha256:" + fmt.Sprintf("%x", sha256.Sum256([]byte(hostileRequest)))},
		// Nor a line break, which would split a row of a raw printer.
		{"now\nthen", "sha256:" + fmt.Sprintf("%x", sha256.Sum256([]byte("now\nthen")))},
	}
	for _, tt := range tests {
		w := testWatch()
		w.Annotations = map[string]string{swv1.RequestedAtAnnotation: tt.value}
		if got := requestedAt(w); got != tt.want {
			t.Errorf("echo of a %d-byte value = %q, want %q", len(tt.value), got, tt.want)
		}
		// Once echoed, the same value is not owed again.
		w.Status.ObservedGeneration = w.Generation
		w.Status.LastHandledRequestedAt = requestedAt(w)
		if work := requestedWork(w); work != "" {
			t.Errorf("a %d-byte value already handled is owed again: %s", len(tt.value), work)
		}
		if len(requestedWork(testWatch())) > 200 {
			t.Error("the Reconciling message echoes the value")
		}
	}
}

func TestIntervalFloor(t *testing.T) {
	for _, tt := range []struct{ spec, want time.Duration }{
		{0, swv1.DefaultInterval}, {time.Second, swv1.DefaultInterval}, {30 * time.Second, 30 * time.Second}, {time.Hour, time.Hour},
		{24 * time.Hour, 24 * time.Hour}, {25 * time.Hour, 24 * time.Hour}, {2562047 * time.Hour, 24 * time.Hour},
	} {
		w := testWatch()
		w.Spec.Interval.Duration = tt.spec
		if got := w.Spec.SyncInterval(); got != tt.want {
			t.Errorf("interval(%v) = %v, want %v", tt.spec, got, tt.want)
		}
	}
}

// A watch whose interval predates the CRD's 24h bound, as long as a
// time.Duration goes, or a budget that stretches an interval without end,
// still syncs next at a time in the future, within the bounds.
func TestIntervalBoundedInArithmetic(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	w := testWatch()
	w.Spec.Interval.Duration = 2562047 * time.Hour
	every := w.Spec.SyncInterval()
	for _, tt := range []struct {
		name  string
		every time.Duration
		limit time.Duration
	}{
		{"spec.interval of 2562047h", every, swv1.MaxInterval},
		{"a budget stretching 24h a million times", pacing.Stretched(every, 1e6), pacing.MaxEffectiveInterval},
		{"a budget stretching by +Inf", pacing.Stretched(every, math.Inf(1)), pacing.MaxEffectiveInterval},
	} {
		// Headed anywhere in the interval.
		for _, target := range []float64{0, 0.5, 0.999999} {
			next, _ := pacing.NextSync(pacing.Sync{Began: now, Ended: now, Every: tt.every}, pacing.Phase{Known: true, Target: target})
			if wait := next.Sub(now); wait <= 0 || wait > tt.limit*3/2 {
				t.Errorf("%s, target %v: next sync %v after the last, want within (0, %v]", tt.name, target, wait, tt.limit*3/2)
			}
		}
	}
}

// pacedOf tells the pacer what it needs of the watch's spec, annotations
// and status: the work the user asked for, and for a first sight after a
// start, the last sync, Ready and the cloud's Retry-After.
func TestPacedOf(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	synced := func() *swv1.ServiceWatch {
		w := testWatch()
		w.Status.ObservedGeneration = w.Generation
		w.Status.LastSyncTime = &metav1.Time{Time: now.Add(-time.Second)}
		applyResults(w, syncParts(), []partResult{pipesOK(), endpointsOK(0), alertsFetched(nil)}, DefaultStatusSizeLimit)
		return w
	}
	with := func(f func(w *swv1.ServiceWatch)) *swv1.ServiceWatch {
		w := synced()
		f(w)
		return w
	}
	key := types.NamespacedName{Namespace: "ns", Name: "w"}
	tests := []struct {
		name  string
		watch *swv1.ServiceWatch
		want  paced
	}{
		{"a Ready watch synced a second ago", synced(),
			paced{Key: key, Every: time.Minute, LastSync: now.Add(-time.Second), Ready: true}},
		{"a new watch: a new spec, never synced", testWatch(),
			paced{Key: key, Every: time.Minute, NewSpec: true}},
		{"a new generation: not Ready for it", with(func(w *swv1.ServiceWatch) { w.Generation++ }),
			paced{Key: key, Every: time.Minute, NewSpec: true, LastSync: now.Add(-time.Second)}},
		{"a requested sync", with(func(w *swv1.ServiceWatch) { w.Annotations = map[string]string{swv1.RequestedAtAnnotation: "now"} }),
			paced{Key: key, Every: time.Minute, Requested: true, LastSync: now.Add(-time.Second), Ready: true}},
		{"a requested sync already handled", with(func(w *swv1.ServiceWatch) {
			w.Annotations = map[string]string{swv1.RequestedAtAnnotation: "then"}
			w.Status.LastHandledRequestedAt = "then"
		}), paced{Key: key, Every: time.Minute, LastSync: now.Add(-time.Second), Ready: true}},
		{"the cloud's Retry-After", withRetryNotBefore(synced(), now.Add(time.Minute)),
			paced{Key: key, Every: time.Minute, LastSync: now.Add(-time.Second), Ready: true, RetryNotBefore: now.Add(time.Minute)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pacedOf(tt.watch, nil, "")
			if got.Trigger != triggerOf(tt.watch, nil) || got.Group != readHash(tt.watch, "") {
				t.Errorf("trigger %q and group %d, want triggerOf's and readHash's", got.Trigger, got.Group)
			}
			got.Trigger, got.Group = "", 0
			if got != tt.want {
				t.Errorf("pacedOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func withRetryNotBefore(w *swv1.ServiceWatch, at time.Time) *swv1.ServiceWatch {
	w = w.DeepCopy()
	w.Status.RetryNotBefore = &metav1.Time{Time: at}
	return w
}
