package controller

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/pacing"
)

func TestEventsFor(t *testing.T) {
	synced := func() []partResult { return []partResult{pipesOK(), endpointsOK(0), alertsFetched(nil)} }
	pipesDown := func(reason string) []partResult {
		return []partResult{failed(reason, "list pipes: boom"), endpointsOK(0), alertsFetched(nil)}
	}
	tests := []struct {
		name   string
		before [][]partResult // syncs applied before
		after  []partResult
		// suspend marks the watch suspended instead of applying after.
		suspend bool
		want    []string // "Type/Reason"
	}{
		{"first successful sync: Ready only", nil, synced(), false, []string{"Normal/Ready"}},
		{"an unchanged sync is quiet", [][]partResult{synced()}, synced(), false, nil},
		{"a part starts failing", [][]partResult{synced()}, pipesDown(swv1.ReasonServerError), false, []string{"Warning/ServerError"}},
		{"the same failure again is quiet", [][]partResult{synced(), pipesDown(swv1.ReasonServerError)}, pipesDown(swv1.ReasonServerError), false, nil},
		{"a failure with a new reason is told", [][]partResult{synced(), pipesDown(swv1.ReasonServerError)}, pipesDown(swv1.ReasonRateLimited), false, []string{"Warning/RateLimited"}},
		{"recovery: the part and Ready", [][]partResult{synced(), pipesDown(swv1.ReasonServerError)}, synced(), false, []string{"Normal/PipesSynced", "Normal/Ready"}},
		{"suspended", [][]partResult{synced()}, nil, true, []string{"Normal/Suspended"}},
		{"the budget starts stretching the interval", [][]partResult{synced()}, nil, false, []string{"Warning/BudgetExceeded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := testWatch()
			parts := syncParts()
			for _, results := range tt.before {
				applyResults(w, parts, results, DefaultStatusSizeLimit)
			}
			before := w.DeepCopy()
			switch {
			case tt.suspend:
				markSuspended(w)
			case tt.after == nil:
				setIntervalMetCondition(w, pacing.Allowance{Every: 2 * w.Spec.SyncInterval()})
			default:
				applyResults(w, parts, tt.after, DefaultStatusSizeLimit)
			}
			var got []string
			for _, e := range (&episodes{}).events(before, w, parts) {
				got = append(got, e.eventType+"/"+e.reason)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("events = %v, want %v", got, tt.want)
			}
		})
	}
}

// The events API refuses notes over 1 KiB, and the event is then lost: a
// watch with ten missing alerts with long IDs must still get its warning.
func TestEventNotesFitTheEventsAPI(t *testing.T) {
	ids := make([]string, 10)
	fs := make([]*failure, 10)
	for i := range ids {
		ids[i] = strings.Repeat(string(rune('a'+i)), 128)
		fs[i] = &failure{reason: swv1.ReasonNotFound, message: "get alert: 404 Not Found: alert not found; check the ID in spec.alertIds"}
	}
	w := testWatch(ids...)
	parts := syncParts()
	before := w.DeepCopy()
	applyResults(w, parts, []partResult{pipesOK(), endpointsOK(0), alertsFetched(ids, fs...)}, DefaultStatusSizeLimit)
	events := eventsFor(before, w, parts, episode{})
	if len(events) == 0 || events[0].eventType != corev1.EventTypeWarning {
		t.Fatalf("no warning event for ten missing alerts: %+v", events)
	}
	for _, e := range events {
		if len(e.note) > maxEventNoteBytes {
			t.Errorf("%s note is %d bytes, over %d", e.reason, len(e.note), maxEventNoteBytes)
		}
	}
}

// A cloud that fails every other management call makes the failing part
// alternate between pipes and endpoints while Ready stays False: the
// episode tells each failure once, and the recovery once, not two events a
// sync (7 to 11 per watch in 2 minutes before).
func TestEventsAreBoundedPerFailureEpisode(t *testing.T) {
	synced := []partResult{pipesOK(), endpointsOK(0), alertsFetched(nil)}
	pipesDown := []partResult{failed(swv1.ReasonServerError, "list pipes: 502"), endpointsOK(0), alertsFetched(nil)}
	endpointsDown := []partResult{pipesOK(), failed(swv1.ReasonServerError, "list endpoints: 502"), alertsFetched(nil)}
	w := testWatch()
	parts := syncParts()
	var e episodes
	sync := func(results []partResult) []string {
		before := w.DeepCopy()
		applyResults(w, parts, results, DefaultStatusSizeLimit)
		var got []string
		for _, ev := range e.events(before, w, parts) {
			got = append(got, ev.eventType+"/"+ev.reason)
		}
		return got
	}
	sync(synced)
	// 2 minutes of backoff (5, 10, 20, 40 s, then the interval): the syncs
	// alternate, some see the same part fail twice.
	flapping := [][]partResult{pipesDown, endpointsDown, pipesDown, pipesDown, endpointsDown, pipesDown, endpointsDown, endpointsDown, pipesDown}
	var episode []string
	for _, results := range flapping {
		episode = append(episode, sync(results)...)
	}
	episode = append(episode, sync(synced)...)
	want := "Warning/ServerError,Warning/ServerError,Normal/PipesSynced,Normal/Ready"
	if got := strings.Join(episode, ","); got != want {
		t.Errorf("events of the episode = %s, want %s", got, want)
	}
	if len(episode) > 6 {
		t.Errorf("%d events in one failure episode, want at most 6", len(episode))
	}
	// The next episode tells its failures again.
	if got := strings.Join(sync(pipesDown), ","); got != "Warning/ServerError" {
		t.Errorf("the first failure after Ready: events %s, want Warning/ServerError", got)
	}
}
