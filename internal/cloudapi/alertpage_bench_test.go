package cloudapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
	"github.com/servicewatch/servicewatch/internal/ratebudget"
)

// alertBodies returns n alerts of the current shape (testdata's, about 2
// KB each) under ids of their own: each as a get-alert answer, and all as
// one page of the alert API's list.
func alertBodies(tb testing.TB, n int) (singles [][]byte, ids []string, page []byte) {
	tb.Helper()
	raw, err := os.ReadFile("testdata/alert_current.json")
	if err != nil {
		tb.Fatal(err)
	}
	var env struct {
		Data map[string]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		tb.Fatal(err)
	}
	var list bytes.Buffer
	list.WriteString(`{"data":[`)
	for i := range n {
		id := fmt.Sprintf("65f5e4a3b9e77c001a%06d", i)
		env.Data["id"] = json.RawMessage(`"` + id + `"`)
		one, err := json.Marshal(env)
		if err != nil {
			tb.Fatal(err)
		}
		singles, ids = append(singles, one), append(ids, id)
		if i > 0 {
			list.WriteByte(',')
		}
		alert, err := json.Marshal(env.Data)
		if err != nil {
			tb.Fatal(err)
		}
		list.Write(alert)
	}
	fmt.Fprintf(&list, `],"meta":{"total":%d,"limit":1000,"offset":0}}`, n)
	return singles, ids, list.Bytes()
}

// BenchmarkAlertsListVsGets reads 1,000 alerts (what 100 watches of 10
// alert IDs each fetch every interval today) as 1,000 single GETs, as
// before issue 29, and as one page of the list, side by side: the
// decoding alone, and the whole client call against an in-process server
// (HTTP included). Each op is all 1,000 alerts.
func BenchmarkAlertsListVsGets(b *testing.B) {
	const n = 1000
	singles, ids, page := alertBodies(b, n)
	token := NewBearerToken("a-bearer-token-of-the-operator")
	own := redact.NewScrubber(token.secrets())
	b.Run("decode/gets", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, body := range singles {
				scrub := own.Within(context.Background(), redact.DefaultWork)
				if _, _, err := decodeAlert(body, scrub); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("decode/list", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r := newAlertPageReader(context.Background(), bytes.NewReader(page), http.StatusOK, false, own, redact.DefaultWork, DefaultDecodeWorkPerByte*DefaultMaxResponseBytes)
			got, err := r.read(0)
			if err != nil || len(got.Alerts) != n {
				b.Fatalf("%d alerts, %v", len(got.Alerts), err)
			}
		}
	})
	byID := make(map[string][]byte, n)
	for i, id := range ids {
		byID[id] = singles[i]
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/alerts") {
			_, _ = w.Write(page)
			return
		}
		_, _ = w.Write(byID[r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]])
	}))
	b.Cleanup(srv.Close)
	off := ratebudget.RateLimit{Requests: -1}
	c := New(Options{Budgets: NewBudgets(off, off)})
	src := AlertSource{API: APIAlert, BaseURL: srv.URL, Token: token}
	b.Run("client/gets", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, id := range ids {
				if _, err := c.GetAlert(context.Background(), srv.URL, token, id); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("client/list", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			got, err := c.ListAlerts(context.Background(), src, AlertPageRequest{Limit: n})
			if err != nil || len(got.Alerts) != n {
				b.Fatalf("%d alerts, %v", len(got.Alerts), err)
			}
		}
	})
}
