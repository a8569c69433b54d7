// Package metrics holds every Prometheus series the manager exports, as one
// definition the controller, the manager and the monitoring tests share.
// It knows no Kubernetes client.
//
//   - Sync is the operator's own metrics: cloud calls and their latency,
//     syncs by result, items per watch, deferrals, budget demand, read-slot
//     waits and status write conflicts.
//   - State is what the ServiceWatches show, in the style of
//     kube-state-metrics: one snapshot per watch, turned into metrics only
//     when Prometheus scrapes. Because nothing is kept between scrapes but
//     the snapshots, a pipe that went away, a state that changed or a watch
//     that was deleted leaves no stale series behind.
//
// metrics.go is what the controller records; collect.go is what a scrape
// reads of the snapshots.
package metrics
