// Package monitoring checks the alerting rules and the Grafana dashboard
// against the code: every PromQL expression parses, and every metric it reads
// is one the manager exports.
package monitoring

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/promql/parser"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	"sigs.k8s.io/yaml"

	"github.com/servicewatch/servicewatch/internal/metrics"
)

func root() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "..", "..")
}

// query is one PromQL expression and where it is written.
type query struct{ where, expr string }

func TestRulesAndDashboardReadExportedMetrics(t *testing.T) {
	exported := exportedMetrics(t)
	queries := append(ruleQueries(t), dashboardQueries(t)...)
	if len(queries) < 10 {
		t.Fatalf("found only %d queries in the rules and the dashboard", len(queries))
	}
	for _, q := range queries {
		for _, problem := range check(q.expr, exported) {
			t.Errorf("%s: %s\n    %s", q.where, problem, q.expr)
		}
	}
}

// TestCheckFindsProblems shows the check above can fail.
func TestCheckFindsProblems(t *testing.T) {
	exported := map[string]dto.MetricType{"servicewatch_items": dto.MetricType_GAUGE, "lat_seconds": dto.MetricType_HISTOGRAM}
	for _, tt := range []struct{ expr, want string }{
		{`servicewatch_itemz{kind="pipes"}`, "servicewatch_itemz"},
		{`sum(rate(servicewatch_items_bucket[5m]))`, "servicewatch_items_bucket"},
		{`sum(servicewatch_items`, "parse"},
	} {
		problems := check(tt.expr, exported)
		if len(problems) != 1 || !strings.Contains(problems[0], tt.want) {
			t.Errorf("check(%s) = %q, want one problem naming %s", tt.expr, problems, tt.want)
		}
	}
	if p := check(`histogram_quantile(0.9, sum by (le) (rate(lat_seconds_bucket[5m]))) + servicewatch_items`, exported); len(p) != 0 {
		t.Errorf("a valid query: %q", p)
	}
}

// check parses expr, with Grafana's variables replaced, and returns what is
// wrong with it.
func check(expr string, exported map[string]dto.MetricType) []string {
	parsed, err := parser.NewParser(parser.Options{}).ParseExpr(grafanaVariables().Replace(expr))
	if err != nil {
		return []string{"does not parse: " + err.Error()}
	}
	var problems []string
	parser.Inspect(parsed, func(node parser.Node, _ []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		if !isExported(vs.Name, exported) {
			problems = append(problems, "reads "+vs.Name+", which the manager does not export")
		}
		return nil
	})
	return problems
}

// grafanaVariables are the dashboard's variables as Grafana would fill them
// in; $namespace only appears inside label values, where it parses as is.
func grafanaVariables() *strings.Replacer {
	return strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h")
}

// isExported accepts a family's name, and the series names Prometheus
// derives from a histogram's or summary's.
func isExported(name string, exported map[string]dto.MetricType) bool {
	if _, ok := exported[name]; ok {
		return true
	}
	for suffix, types := range map[string][]dto.MetricType{
		"_bucket": {dto.MetricType_HISTOGRAM},
		"_sum":    {dto.MetricType_HISTOGRAM, dto.MetricType_SUMMARY},
		"_count":  {dto.MetricType_HISTOGRAM, dto.MetricType_SUMMARY},
	} {
		if base, ok := strings.CutSuffix(name, suffix); ok && slices.Contains(types, exported[base]) {
			return true
		}
	}
	return false
}

func ruleQueries(t *testing.T) []query {
	t.Helper()
	var rule struct {
		Spec struct {
			Groups []struct {
				Name  string `json:"name"`
				Rules []struct {
					Alert  string `json:"alert"`
					Record string `json:"record"`
					Expr   string `json:"expr"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	const rel = "config/prometheus/rules.yaml"
	if err := yaml.Unmarshal(read(t, rel), &rule); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	var qs []query
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			qs = append(qs, query{where: rel + " " + r.Alert + r.Record, expr: r.Expr})
		}
	}
	return qs
}

func dashboardQueries(t *testing.T) []query {
	t.Helper()
	const rel = "config/grafana/servicewatch.json"
	var d struct {
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(read(t, rel), &d); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	var qs []query
	var walk func([]panel)
	walk = func(panels []panel) {
		for _, p := range panels {
			for _, target := range p.Targets {
				qs = append(qs, query{where: rel + " panel " + p.Title + " " + target.RefID, expr: target.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	// label_values(metric, label) is Grafana's, not PromQL: its metric is
	// checked as a selector.
	labelValues := regexp.MustCompile(`^label_values\(\s*([^,]+),\s*\w+\s*\)$`)
	for _, v := range d.Templating.List {
		var q struct {
			Query string `json:"query"`
		}
		if json.Unmarshal(v.Query, &q) != nil || q.Query == "" {
			continue
		}
		m := labelValues.FindStringSubmatch(q.Query)
		if m == nil {
			t.Errorf("%s: variable %s: query %q is not label_values(metric, label)", rel, v.Name, q.Query)
			continue
		}
		qs = append(qs, query{where: rel + " variable " + v.Name, expr: m[1]})
	}
	return qs
}

type panel struct {
	Title   string `json:"title"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

func read(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// exportedMetrics are the metric families the manager exports, with their
// types: the operator's own metrics, the state metrics, and
// controller-runtime's registry after one reconcile of a controller named
// like the operator's.
func exportedMetrics(t *testing.T) map[string]dto.MetricType {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	m, err := metrics.NewSync(reg)
	if err != nil {
		t.Fatal(err)
	}
	// Every family gets a series, so that Gather shows it with its type.
	m.ObserveRequest("management", "listPipes", "200", time.Second)
	m.RecordDeferral("management")
	state := metrics.NewState(true)
	state.Set(metrics.Watch{
		Namespace: "data", Name: "prod", Interval: time.Minute, LastSyncTime: time.Now(),
		Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Synced"}},
		Pipes:      []metrics.Pipe{{ID: "p"}},
		Endpoints:  []metrics.Endpoint{{ID: "e"}},
		Alerts: []metrics.Alert{{ID: "a", FetchFailed: true, Silenced: true, SilencedUntil: time.Now().Add(time.Hour),
			ExecutionErrors: 1, LastExecutionError: time.Now()}},
	})
	reg.MustRegister(state)

	exported := map[string]dto.MetricType{}
	gather(t, reg, exported)
	// Families without a series yet (recordSync and recordItems are the
	// controller's own) are known by their descriptors.
	for _, name := range describedNames(t) {
		if _, ok := exported[name]; !ok {
			exported[name] = dto.MetricType_UNTYPED
		}
	}
	reconcileOnce(t)
	gather(t, ctrlmetrics.Registry, exported)
	return exported
}

func gather(t *testing.T, g prometheus.Gatherer, into map[string]dto.MetricType) {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		into[f.GetName()] = f.GetType()
	}
}

// describedNames are the names of every descriptor controller.NewMetrics
// registers. A Desc tells its name only through String.
func describedNames(t *testing.T) []string {
	t.Helper()
	var rec recorder
	if _, err := metrics.NewSync(&rec); err != nil {
		t.Fatal(err)
	}
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	var names []string
	for _, c := range rec.collectors {
		ch := make(chan *prometheus.Desc, 16)
		c.Describe(ch)
		close(ch)
		for d := range ch {
			m := fqName.FindStringSubmatch(d.String())
			if m == nil {
				t.Fatalf("cannot read the name of %s", d)
			}
			names = append(names, m[1])
		}
	}
	return names
}

// recorder is a Registerer that keeps what is registered with it.
type recorder struct{ collectors []prometheus.Collector }

func (r *recorder) Register(c prometheus.Collector) error {
	r.collectors = append(r.collectors, c)
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	r.collectors = append(r.collectors, cs...)
}

func (r *recorder) Unregister(prometheus.Collector) bool { return false }

// reconcileOnce runs a controller named servicewatch through one reconcile,
// so that controller-runtime's registry holds the series of its reconcile
// metrics and work queue as the manager's does.
func reconcileOnce(t *testing.T) {
	t.Helper()
	var once sync.Once
	done := make(chan struct{})
	c, err := controller.NewTypedUnmanaged("servicewatch", controller.TypedOptions[reconcile.Request]{
		SkipNameValidation: ptr.To(true),
		Reconciler: reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			once.Do(func() { close(done) })
			return reconcile.Result{}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan event.GenericEvent, 1)
	if err := c.Watch(source.Channel(events, &handler.EnqueueRequestForObject{})); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan error, 1)
	go func() { started <- c.Start(ctx) }()
	events <- event.GenericEvent{Object: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "data", Name: "prod"}}}
	select {
	case <-done:
	case err := <-started:
		t.Fatalf("the controller stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no reconcile within 30s")
	}
}
