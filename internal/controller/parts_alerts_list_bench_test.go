package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/alerts"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// BenchmarkAlertsOf100Watches is the manager's CPU and memory for the
// alerts of 100 watches with 10 alert IDs each, 1,000 alerts of one host
// and token (issue 29), through the real client against canned answers on
// loopback: before, each watch's 10 single GETs, each answer decoded, and
// its entries applied to its status; after, one list of the 1,000 alerts
// decoded once, and each watch's entries picked from it and applied.
//
//	go test -short -run='^$' -bench=AlertsOf100Watches -benchmem -count=5 ./internal/controller/
func BenchmarkAlertsOf100Watches(b *testing.B) {
	const watches, perWatch = 100, 10
	// The answers are rendered once, so that only the manager's side is
	// measured: the fake cloud, in this process, would add its own.
	single, page := map[string][]byte{}, []any{}
	for i := range watches * perWatch {
		a := map[string]any{"id": benchAlertID(i), "name": fmt.Sprintf("alert %d", i), "state": "OK", "interval": "5m",
			"threshold": 1, "thresholdType": "above", "source": "tile", "channel": map[string]any{"type": "webhook", "webhookId": "w"}}
		single["/api/v2/alerts/"+benchAlertID(i)] = mustJSON(b, map[string]any{"data": a})
		page = append(page, a)
	}
	list := mustJSON(b, map[string]any{"data": page, "meta": map[string]any{"total": len(page), "limit": 1000, "offset": 0}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/v2/alerts" {
			_, _ = w.Write(list)
			return
		}
		_, _ = w.Write(single[r.URL.Path])
	}))
	b.Cleanup(srv.Close)
	client := cloudapi.New(cloudapi.Options{Timeout: time.Minute})
	src := cloudapi.AlertSource{API: cloudapi.APIAlert, BaseURL: srv.URL, Token: cloudapi.NewBearerToken("token")}
	ctx := context.Background()
	ids := func(w int) []string {
		out := make([]string, perWatch)
		for j := range out {
			out[j] = benchAlertID(w*perWatch + j)
		}
		return out
	}
	apply := func(entries []alerts.Entry) {
		s := swv1.ServiceWatchStatus{Summary: &swv1.Summary{}}
		alerts.Apply(&s, entries, 0, "")
	}
	b.Run("before", func(b *testing.B) {
		for b.Loop() {
			for w := range watches {
				var entries []alerts.Entry
				for _, id := range ids(w) {
					got, err := client.GetAlertFrom(ctx, src, id)
					if err != nil {
						b.Fatal(err)
					}
					entries = append(entries, alerts.Entry{ID: id, SelectedBy: swv1.SelectedByID, Alert: &got.Alert})
				}
				apply(entries)
			}
		}
	})
	b.Run("after", func(b *testing.B) {
		for b.Loop() {
			needs := make([]alerts.Need, watches)
			for w := range needs {
				needs[w].IDs = ids(w)
			}
			c := alerts.NewFilter(needs, 2*DefaultStatusSizeLimit).Collect()
			listing, err := alerts.ReadAll(ctx, cloudapi.MaxAlertPageLimit, func(ctx context.Context, offset int, each func(*cloudapi.AlertResult) int) (cloudapi.AlertPage, error) {
				return client.ListAlerts(ctx, src, cloudapi.AlertPageRequest{Limit: cloudapi.MaxAlertPageLimit, Offset: offset, Each: each})
			}, c.Keep)
			if err != nil {
				b.Fatal(err)
			}
			idx := c.Index(listing.Read, listing.Seen.Has, listing.Stopped) // once, shared by the watches
			for w := range watches {
				apply(alerts.Pick(ids(w), nil, idx).Entries)
			}
		}
	})
}

func benchAlertID(i int) string { return fmt.Sprintf("78%022d", i) }

func mustJSON(b *testing.B, v any) []byte {
	b.Helper()
	out, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	return out
}
