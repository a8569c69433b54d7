package controller

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// BenchmarkBudgetBookKeys is the controller's side of the budget book at
// scale: 10,000 watches, each on a key of its own, noted as their syncs
// start (noteDemand, the budget metric included), then deleted (forget).
// create-s and delete-s are the seconds each phase takes. It runs the same
// on the tree before issue 17 (see docs/benchmarks.md).
func BenchmarkBudgetBookKeys(b *testing.B) {
	const keys = 10000
	var create, del time.Duration
	for b.Loop() {
		syncMetrics, err := metrics.NewSync(prometheus.NewRegistry())
		if err != nil {
			b.Fatal(err)
		}
		budgets := cloudapi.NewBudgets(ratebudget.RateLimit{}, ratebudget.RateLimit{})
		r := &ServiceWatchReconciler{Metrics: syncMetrics, Cloud: cloudapi.New(cloudapi.Options{Budgets: budgets}), Budgets: budgets}
		r.defaults()
		key := func(i int) types.NamespacedName {
			return types.NamespacedName{Namespace: "ns", Name: fmt.Sprint("w", i)}
		}
		inputs := make([]*syncScope, keys)
		for i := range inputs {
			w := testWatch()
			w.Name = key(i).Name
			inputs[i] = &syncScope{watch: w, management: managementAccess{apiAccess: apiAccess{url: "https://api.example.com",
				digest: cloudapi.DigestOf(cloudapi.NewBasicCredentials(fmt.Sprint("key-", i), "secret"))}}}
		}
		start := time.Now()
		for _, in := range inputs {
			r.demandEvery(pacedOf(in.watch, nil, ""), in)
		}
		create += time.Since(start)
		start = time.Now()
		for i := range inputs {
			r.forget(key(i))
		}
		del += time.Since(start)
	}
	b.ReportMetric(create.Seconds()/float64(b.N), "create-s")
	b.ReportMetric(del.Seconds()/float64(b.N), "delete-s")
}
