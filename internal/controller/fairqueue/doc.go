// Package fairqueue adapts controller-runtime's priority workqueue to the
// order in which the controller serves its work: by level (a user's work,
// then a Secret's change, then periodic refreshes; see pacing.Level),
// within a level with the namespaces whose work waits taking turns, and
// with no level starving the ones below it.
//
// It exists because controller-runtime's priorityqueue orders by priority
// and then first in first out, and its handlers name a priority only for
// the initial list and resyncs (handler.WithLowPriorityWhenUnchanged; the
// queue wrapper that sets a default priority, workqueueWithDefaultPriority,
// is unexported). The queue itself is controller-runtime's; this package
// chooses the priority each item waits at: WithPriority for events whose
// handler names none; New and NewQueue for the namespaces' turns (issue 17:
// one namespace's burst of 1,500 new watches held another's new watch
// behind all of them), for a Secret change's share of a namespace's items
// and for aging (issue 27: one namespace that rewrote a Secret referenced
// by 400 watches once a second held another's periodic refresh back for as
// long as it went on). To give every ready item its turn it parks the items
// added for later at the lowest priority and adds them again when they are
// due. Time comes from an injected clock: the rules have table tests that
// need no control plane and no sleep.
package fairqueue
