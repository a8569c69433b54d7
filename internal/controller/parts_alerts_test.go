package controller

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/servicewatch/servicewatch/internal/alerts"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/metrics"
	"github.com/servicewatch/servicewatch/internal/pacing"
	"github.com/servicewatch/servicewatch/internal/tenancy"
)

// Alert pages are decoded on the namespace's share of decode work, as
// pipes and endpoints are (issue 37): a namespace whose host answers the
// costliest alert pages waits before its next sync until it has earned the
// work back, and another namespace is not held back by it.
func TestAlertPagesAreChargedToTheNamespacesDecodeShare(t *testing.T) {
	var page strings.Builder
	page.WriteString(`{"data":[`)
	for i := range 1000 {
		if i > 0 {
			page.WriteByte(',')
		}
		fmt.Fprintf(&page, `{"id":"a%d","name":"%s"}`, i, strings.Repeat("x", 200))
	}
	page.WriteString(`],"meta":{"total":1000}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(page.String()))
	}))
	defer srv.Close()

	clock := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	syncMetrics, err := metrics.NewSync(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	cloud := cloudapi.New(cloudapi.Options{})
	budgets := &budgetCloud{}
	const rate = 100_000 // units a second
	r := &ServiceWatchReconciler{Cloud: cloud, Budgets: budgets, Metrics: syncMetrics, clock: pacing.NewClock(now, nil),
		WorkShares: tenancy.NewWorkShares(rate, rate, now)}
	r.defaults()
	r.credentials.Secrets = noSecrets{}
	r.pacer = testPacer(r.clock.Now)
	scopeIn := func(namespace string) *syncScope {
		w := testWatch()
		w.Namespace = namespace
		w.Spec.AlertIDs = []string{"a7"}
		in := r.newScope(context.Background(), w)
		in.management = newManagementAccess("https://api.example.com", cloudapi.NewBasicCredentials("k-"+namespace, "s"))
		in.alerts = newAlertAccess(srv.URL, cloudapi.NewBearerToken("t-"+namespace))
		in.routes, in.alertsByList = alerts.NewRoutes(now, time.Minute), true
		return in
	}
	hostile, victim := scopeIn("hostile"), scopeIn("victim")

	if res := readAlerts(context.Background(), cloud, hostile); res.failure != nil || res.deferred != nil {
		t.Fatalf("the read failed: %+v", res)
	}
	a := r.admitAt(hostile, pacing.User)
	if a.wait < time.Second || !a.overShare {
		t.Errorf("the namespace whose alert page cost 1000 alerts of work waits %s (for its share: %t), want it to wait for its share", a.wait, a.overShare)
	}
	if a := r.admitAt(victim, pacing.Periodic); a.wait != 0 {
		t.Errorf("the victim namespace waits %s for the hostile one's alert pages", a.wait)
	}
}
