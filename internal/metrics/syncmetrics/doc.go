// Package syncmetrics holds the operator's own Prometheus metrics: cloud
// calls and their latency, syncs by result, items per watch, deferrals,
// budget demand, read-slot waits and status write conflicts. (The state
// metrics, what each watch's status says, are internal/metrics/statemetrics.)
//
// It is apart from the controller because it is only Prometheus
// bookkeeping: it knows no ServiceWatch and no Kubernetes client, and the
// controller, the manager and the monitoring tests share one definition of
// every series.
package syncmetrics
