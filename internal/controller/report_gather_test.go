package controller

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// GatheredSeries are the series of the metric family name that g gathers,
// none when g has no such family; for the tests of this package and of
// controller_test that read what the manager's metrics endpoint would serve.
func GatheredSeries(t testing.TB, g prometheus.Gatherer, name string) []*dto.Metric {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()
		}
	}
	return nil
}
