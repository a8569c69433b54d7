// Package fairqueue adapts controller-runtime's priority workqueue to the
// order in which the controller serves its work: by level (a user's work,
// then a Secret's change, then periodic refreshes; see pacing.Level), and
// within a level with the namespaces whose work waits taking turns.
//
// It exists because controller-runtime's priorityqueue orders by priority
// and then first in first out, and its handlers name a priority only for
// the initial list and resyncs (handler.WithLowPriorityWhenUnchanged; the
// queue wrapper that sets a default priority, workqueueWithDefaultPriority,
// is unexported). The queue itself is controller-runtime's; this package
// only chooses the priority each item is added at: WithPriority for events
// whose handler names none, New for the namespaces' turns (issue 17: one
// namespace's burst of 1,500 new watches held another's new watch behind
// all of them), and ages the items it holds so that no level starves the
// ones below it (issue 27: one namespace that rewrote a Secret referenced
// by 400 watches once a second held another's periodic refresh back for as
// long as it went on). Ages are kept by an injected clock: the rules have
// table tests that need no control plane and no sleep.
package fairqueue
