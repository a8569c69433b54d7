package controller

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// BenchmarkSync measures what one sync costs the manager apart from the API
// server: three calls to an in-process fake cloud over loopback HTTP,
// decoding, conversion into status types, redaction, sorting, conditions and
// truncation. Run: go test -run=^$ -bench=BenchmarkSync -benchmem ./internal/controller/
func BenchmarkSync(b *testing.B) {
	for _, pipes := range []int{4, 1000, 5000} {
		b.Run(fmt.Sprintf("pipes=%d", pipes), func(b *testing.B) {
			data := fakecloud.DefaultData()
			svc := data.Organizations[fakecloud.DefaultOrganizationID][fakecloud.DefaultServiceID]
			svc.Pipes = replicatePipes(svc.Pipes, pipes)
			data.Organizations[fakecloud.DefaultOrganizationID][fakecloud.DefaultServiceID] = svc
			fake := fakecloud.Start(data)
			defer fake.Close()

			cloud := cloudapi.New(cloudapi.Options{Budgets: cloudapi.NewBudgets(ratebudget.RateLimit{Requests: -1}, ratebudget.RateLimit{Requests: -1})})
			watch := benchWatch(fake.URL)
			in := &syncScope{
				watch:            watch,
				management:       newManagementAccess(fake.URL, cloudapi.NewBasicCredentials(fakecloud.DefaultKeyID, fakecloud.DefaultKeySecret)),
				alerts:           newAlertAccess(fake.URL, cloudapi.NewBearerToken(fakecloud.DefaultAlertToken)),
				alertConcurrency: 4,
			}
			parts := syncParts()
			ctx := context.Background()

			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				in.parts = parts
				results := readCloud(ctx, cloud, in)
				for _, res := range results {
					if res.failure != nil {
						b.Fatal(res.failure)
					}
				}
				w := watch.DeepCopy()
				applyResults(w, parts, results, DefaultStatusSizeLimit)
			}
		})
	}
}

func benchWatch(url string) *swv1.ServiceWatch {
	return &swv1.ServiceWatch{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: "default", Generation: 1},
		Spec: swv1.ServiceWatchSpec{
			OrganizationID: fakecloud.DefaultOrganizationID,
			ServiceID:      fakecloud.DefaultServiceID,
			AlertIDs:       []string{fakecloud.DefaultAlertID, fakecloud.SecondAlertID},
			Interval:       metav1.Duration{Duration: 5 * time.Minute},
			ManagementAPI:  swv1.ManagementAPISpec{URL: url},
			AlertAPI:       &swv1.AlertAPISpec{URL: url},
		},
	}
}

// replicatePipes returns n pipes cycling through the given ones, each with
// its own id.
func replicatePipes(pipes []map[string]any, n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		p := maps.Clone(pipes[i%len(pipes)])
		p["id"] = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		out[i] = p
	}
	return out
}
