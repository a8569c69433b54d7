package kubectlplugin

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// row is one item of one watch, as get prints it.
type row struct {
	namespace, watch string
	id, name, state  string
	// since is when the item's state was first seen with its value; nil:
	// unknown.
	since *metav1.Time
	// kind is the pipe's source kind, the endpoint's type or the alert's
	// source: what sets the item apart from its siblings.
	kind string
	// wide are the values of the kind's wide columns, in their order.
	wide []string
	// item is the status entry itself, for -o json and -o yaml.
	item any
}

// itemKind is one kind of item get lists: its words, its columns and how
// to read its rows from a watch's status.
type itemKind struct {
	// plural is how the user names it and how messages do.
	plural string
	// aliases are the other names the user may type.
	aliases []string
	// kindColumn heads the column of row.kind; its lower case is the
	// member name in -o json.
	kindColumn string
	// wideColumns head the columns of row.wide (-o wide).
	wideColumns []string
	rows        func(w *serviceWatch) []row
	// counts are how many items the watch's status lists and how many its
	// summary counts: fewer listed when the status was cut to its size.
	counts func(w *serviceWatch) (listed, total int)
	// metric is the state metric that shows the items of the kind.
	metric string
}

// itemKinds are the kinds get knows, in the order its help lists them.
func itemKinds() []itemKind {
	return []itemKind{
		{plural: "pipes", aliases: []string{"pipe"}, kindColumn: "SOURCE", wideColumns: []string{"DESTINATION", "REPLICAS", "UPDATED"}, rows: pipeRows,
			metric: "servicewatch_pipe_info", counts: func(w *serviceWatch) (int, int) { return len(w.Status.Pipes), summaryCount(w, summaryPipes) }},
		{plural: "endpoints", aliases: []string{"endpoint", "reverseprivateendpoints", "rpe"}, kindColumn: "TYPE", wideColumns: []string{"ENDPOINT ID", "DNS NAMES"}, rows: endpointRows,
			metric: "servicewatch_reverse_private_endpoint_info", counts: func(w *serviceWatch) (int, int) {
				return len(w.Status.ReversePrivateEndpoints), summaryCount(w, summaryEndpoints)
			}},
		{plural: "alerts", aliases: []string{"alert"}, kindColumn: "SOURCE", wideColumns: []string{"THRESHOLD", "SILENCED UNTIL", "ERROR"}, rows: alertRows,
			metric: "servicewatch_alert_info", counts: func(w *serviceWatch) (int, int) { return len(w.Status.Alerts), summaryCount(w, summaryAlerts) }},
	}
}

// findKind is the kind the user named, or false.
func findKind(name string) (itemKind, bool) {
	name = strings.ToLower(name)
	for _, k := range itemKinds() {
		if k.plural == name || slices.Contains(k.aliases, name) {
			return k, true
		}
	}
	return itemKind{}, false
}

func pipeRows(w *serviceWatch) []row {
	rows := make([]row, 0, len(w.Status.Pipes))
	for i := range w.Status.Pipes {
		p := &w.Status.Pipes[i]
		rows = append(rows, row{
			namespace: w.Namespace, watch: w.Name,
			id: str(p.ID), name: str(p.Name), state: str(p.State), since: p.Since, kind: str(p.SourceKind),
			wide: []string{destination(p), replicas(p), str(p.UpdatedAt)},
			item: p,
		})
	}
	return rows
}

// destination is the pipe's target table as database.table.
func destination(p *pipe) string {
	if p.Destination == nil {
		return ""
	}
	db, table := str(p.Destination.Database), str(p.Destination.Table)
	if db == "" || table == "" {
		return db + table
	}
	return db + "." + table
}

func replicas(p *pipe) string {
	if p.Scaling == nil || p.Scaling.Replicas == nil {
		return ""
	}
	return strconv.FormatInt(*p.Scaling.Replicas, 10)
}

func endpointRows(w *serviceWatch) []row {
	rows := make([]row, 0, len(w.Status.ReversePrivateEndpoints))
	for i := range w.Status.ReversePrivateEndpoints {
		e := &w.Status.ReversePrivateEndpoints[i]
		rows = append(rows, row{
			namespace: w.Namespace, watch: w.Name,
			id: str(e.ID), name: str(e.Description), state: str(e.Status), since: e.Since, kind: str(e.Type),
			wide: []string{str(e.EndpointID), strings.Join(e.DNSNames, ",")},
			item: e,
		})
	}
	return rows
}

func alertRows(w *serviceWatch) []row {
	rows := make([]row, 0, len(w.Status.Alerts))
	for i := range w.Status.Alerts {
		a := &w.Status.Alerts[i]
		rows = append(rows, row{
			namespace: w.Namespace, watch: w.Name,
			id: a.ID, name: a.Label(), state: str(a.State), since: a.Since, kind: str(a.Source),
			wide: []string{threshold(a), silencedUntil(a), a.Error},
			item: a,
		})
	}
	return rows
}

func threshold(a *alertStatus) string {
	if a.Threshold == nil {
		return ""
	}
	t := string(*a.Threshold)
	if a.ThresholdType != nil {
		t = *a.ThresholdType + " " + t
	}
	return t
}

func silencedUntil(a *alertStatus) string {
	if a.Silenced == nil {
		return ""
	}
	return str(a.Silenced.Until)
}

// str is the value of an optional string, empty when absent.
func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// The counts of a watch's summary, by kind.
const (
	summaryPipes = iota
	summaryEndpoints
	summaryAlerts
)

// summaryCount is the summary's count of one kind of item (0 without a
// summary).
func summaryCount(w *serviceWatch, kind int) int {
	sum := w.Status.Summary
	if sum == nil {
		return 0
	}
	return int([]int32{sum.Pipes, sum.ReversePrivateEndpoints, sum.Alerts}[kind])
}

// leftOutNotes say, for each watch whose status lists fewer items of kind
// than its summary counts (its status was cut to its size limit), how many
// are left out and where to look for them.
func leftOutNotes(watches []serviceWatch, kind itemKind) []string {
	var notes []string
	for i := range watches {
		w := &watches[i]
		if listed, total := kind.counts(w); listed < total {
			notes = append(notes, fmt.Sprintf("%s/%s lists %d of its %d %s (its status was cut to fit; those that need attention are kept first): "+
				"the others are in the %s metric and the cloud console", w.Namespace, w.Name, listed, total, kind.plural, kind.metric))
		}
	}
	return notes
}

// inState is how long the item has been in its state, as kubectl shows an
// AGE: "5m", "3d2h"; empty when unknown.
func inState(since *metav1.Time, now time.Time) string {
	if since == nil {
		return ""
	}
	return duration.HumanDuration(now.Sub(since.Time))
}
