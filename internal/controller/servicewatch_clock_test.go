package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/servicewatch/servicewatch/internal/pacing"
)

// A step of the wall clock moves the reconciler's schedules: a watch synced
// a minute before a step of -1h is due four minutes later, not 64.
func TestAWallClockStepMovesTheSchedules(t *testing.T) {
	wall := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	var mono time.Duration
	r := &ServiceWatchReconciler{pacer: pacing.New[types.NamespacedName, readKey](), now: func() time.Time { return wall }, jitter: func(time.Duration) time.Duration { return 0 }}
	r.clock = pacing.NewClock(r.now, func() time.Duration { return mono })
	w := testWatch() // interval 1m
	w.Spec.Interval = metav1.Duration{Duration: 5 * time.Minute}
	w.Status.ObservedGeneration = w.Generation
	p := paced{key: types.NamespacedName{Namespace: w.Namespace, Name: w.Name}, trigger: "t", every: interval(w)}

	// dueIn is when the watch's sync is due, as a reconcile (which
	// rechecks its slot every half interval) sees it.
	dueIn := func() time.Duration {
		r.recheckAfter(w, p)
		e, _ := r.pacer.Schedules.Get(p.key)
		return e.Plan.Due(r.phaseOf(p)).Sub(r.now())
	}
	r.scheduleNext(p, fetched{every: 5 * time.Minute, startedAt: wall, reachedCloud: true, level: pacing.Periodic}, pacing.Outcome{})
	wall, mono = wall.Add(time.Minute), mono+time.Minute
	before := dueIn()
	wall = wall.Add(-time.Hour)
	if after := dueIn(); after != before {
		t.Errorf("after a step of -1h the watch is due in %s; %s before the step", after, before)
	}
	wall = wall.Add(2 * time.Hour)
	if after := dueIn(); after != before {
		t.Errorf("after a step of +1h the watch is due in %s; %s before the step", after, before)
	}
}
