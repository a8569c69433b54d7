package cloudapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// pageSummary is what a user of a page sees of it, in one line.
func pageSummary(p cloudapi.AlertPage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "total %d offset %d skipped %d request %q:", p.Total, p.Offset, p.Skipped, p.RequestID)
	for _, a := range p.Alerts {
		fmt.Fprintf(&b, " %s", a.Alert.ID)
		if label := a.Alert.Label(); label != "" {
			fmt.Fprintf(&b, "=%s", label)
		}
		if len(a.LeftOut) > 0 {
			fmt.Fprintf(&b, "(left out %s)", strings.Join(a.LeftOut, ","))
		}
		if a.RequestID != p.RequestID {
			fmt.Fprintf(&b, "(request %q)", a.RequestID)
		}
	}
	return b.String()
}

// Every shape the two hosts answer a page in: the alert API's data and
// meta, an older server's data without meta (the whole list), the
// management envelope's result with data and meta, and its bare-array
// result. Each alert is read as GetAlert reads one: a bad member is that
// alert's LeftOut, an item that is not an object or has no id is skipped
// and counted, and the rest of the page stays.
func TestListAlertsReadsEveryShape(t *testing.T) {
	const items = `[{"id":"a1","name":"Lag"},{"id":"a2","displayName":"Errors","threshold":"x"},7,{"name":"no id"},{"id":"a3","message":"SECRET"}]`
	tests := []struct {
		name   string
		src    func(string) cloudapi.AlertSource
		header map[string]string
		body   string
		want   string
	}{
		{"alert API, a page", alertHost, map[string]string{"X-Request-Id": "h1"},
			`{"data":` + items + `,"meta":{"total":2500,"limit":1000,"offset":1000}}`,
			`total 2500 offset 1000 skipped 2 request "h1": a1=Lag a2=Errors(left out threshold) a3`},
		{"alert API, meta first", alertHost, nil, `{"meta":{"total":3,"limit":1000,"offset":0},"data":[{"id":"a1"}]}`,
			`total 3 offset 0 skipped 0 request "": a1`},
		{"older alert API, no meta: the whole list", alertHost, nil, `{"data":` + items + `}`,
			`total -1 offset 1000 skipped 2 request "": a1=Lag a2=Errors(left out threshold) a3`},
		{"meta of another shape: as no meta", alertHost, nil, `{"data":[{"id":"a1"}],"meta":{"total":"many"}}`,
			`total -1 offset 1000 skipped 0 request "": a1`},
		{"members the page does not know are skipped", alertHost, nil, `{"links":{"next":"/x"},"data":[{"id":"a1"}],"meta":{"total":1}}`,
			`total 1 offset 1000 skipped 0 request "": a1`},
		{"null data: an empty list", alertHost, nil, `{"data":null,"meta":{"total":0}}`, `total 0 offset 1000 skipped 0 request "":`},
		{"management API, a page", managementHost, map[string]string{"X-Request-Id": "h2"},
			`{"status":200,"result":{"data":` + items + `,"meta":{"total":2500,"limit":1000,"offset":1000}},"requestId":"req-9"}`,
			`total 2500 offset 1000 skipped 2 request "req-9": a1=Lag a2=Errors(left out threshold) a3`},
		{"management API, a bare-array result: the whole list", managementHost, nil,
			`{"status":200,"requestId":"req-9","result":` + items + `}`,
			`total -1 offset 1000 skipped 2 request "req-9": a1=Lag a2=Errors(left out threshold) a3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Each host's alerts are scrubbed of the credential of the call.
			secret := testTokenValue
			if tt.src("").API == cloudapi.APIManagement {
				secret = testKeySecret
			}
			body := strings.ReplaceAll(tt.body, "SECRET", secret)
			srv, rec := serve(t, reply{status: 200, contentType: "application/json", header: tt.header, body: body})
			page, err := newClient(cloudapi.Options{}).ListAlerts(context.Background(), tt.src(srv.URL), cloudapi.AlertPageRequest{Limit: 1000, Offset: 1000})
			if err != nil {
				t.Fatal(err)
			}
			if got := pageSummary(page); got != tt.want {
				t.Errorf("page\n got %s\nwant %s", got, tt.want)
			}
			for _, a := range page.Alerts {
				if a.Alert.Message != nil && *a.Alert.Message != "<redacted>" {
					t.Errorf("alert %s shows %q, want the credential redacted", a.Alert.ID, *a.Alert.Message)
				}
			}
			req := rec.all()[0]
			wantPath := "/api/v2/alerts"
			if tt.src(srv.URL).API == cloudapi.APIManagement {
				wantPath = "/v1/organizations/" + orgID + "/services/" + svcID + "/observability/alerts"
			}
			if got := req.URL.EscapedPath() + "?" + req.URL.RawQuery; got != wantPath+"?limit=1000&offset=1000" {
				t.Errorf("requested %s", got)
			}
		})
	}
}

// A page of the host's default size sends no limit.
func TestListAlertsOfTheDefaultSizeSendsNoLimit(t *testing.T) {
	srv, rec := serve(t, reply{status: 200, contentType: "application/json", body: `{"data":[]}`})
	if _, err := newClient(cloudapi.Options{}).ListAlerts(context.Background(), alertHost(srv.URL), cloudapi.AlertPageRequest{}); err != nil {
		t.Fatal(err)
	}
	if q := rec.all()[0].URL.RawQuery; q != "offset=0" {
		t.Errorf("query %q, want offset=0 alone", q)
	}
}

// A host without the list route says so in ways the caller must tell from
// a host that lists but failed this once: a 404 that is not the API's own
// JSON (Express's "Cannot GET" page, plain text, nothing), a 405, a success
// that is not a list. Those are ErrNoListRoute, with the cloud's words; a
// 404 in the API's own JSON (the route answered: what it lists is not
// there), a 401, a 429, a 5xx, a body too large, a broken list or a spent
// work budget are not: the host may well list.
func TestListAlertsTellsANoListRouteFromAFailure(t *testing.T) {
	const jsonType = "application/json"
	express := `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Error</title></head><body><pre>Cannot GET /api/v2/alerts</pre></body></html>`
	tests := []struct {
		name   string
		src    func(string) cloudapi.AlertSource
		reply  reply
		opts   cloudapi.Options
		noList bool
		text   string
	}{
		{"Express's Cannot GET", alertHost, reply{status: 404, contentType: "text/html; charset=utf-8", body: express}, cloudapi.Options{}, true,
			"list alerts: 404 EndpointNotFound: Cannot GET /api/v2/alerts: the host has no alert list route"},
		{"the management API's own 404", managementHost, reply{status: 404, contentType: jsonType, body: `{"status":404,"error":"Service not found","requestId":"r"}`}, cloudapi.Options{}, false,
			"list alerts: 404 NotFound: Service not found (requestId r)"},
		{"the alert API's own 404", alertHost, reply{status: 404, contentType: jsonType, body: `{"message":"Not found"}`}, cloudapi.Options{}, false,
			"list alerts: 404 NotFound: Not found"},
		{"a 404 in plain text", alertHost, reply{status: 404, contentType: "text/plain", body: "Not Found"}, cloudapi.Options{}, true,
			"list alerts: 404 EndpointNotFound: Not Found: the host has no alert list route"},
		{"an empty 404", managementHost, reply{status: 404}, cloudapi.Options{}, true,
			"list alerts: 404 NotFound: the host has no alert list route"},
		{"a 405 in the API's own JSON", managementHost, reply{status: 405, contentType: jsonType, body: `{"status":405,"error":"use GET"}`}, cloudapi.Options{}, false,
			"list alerts: 405 UnexpectedStatus: use GET"},
		{"405", alertHost, reply{status: 405, contentType: "text/plain", body: "Method Not Allowed"}, cloudapi.Options{}, true,
			"list alerts: 405 UnexpectedStatus: Method Not Allowed: the host has no alert list route"},
		{"200 with one alert where the list belongs", alertHost, reply{status: 200, contentType: jsonType, body: `{"data":{"id":"a1"}}`}, cloudapi.Options{}, true,
			`list alerts: 200 InvalidResponse: the host has no alert list route: its "data" is an object, not a list`},
		{"200 without data", alertHost, reply{status: 200, contentType: jsonType, body: `{"alerts":[]}`}, cloudapi.Options{}, true,
			`list alerts: 200 InvalidResponse: the host has no alert list route: its answer has no "data" list`},
		{"200 envelope whose result is a string", managementHost, reply{status: 200, contentType: jsonType, body: `{"status":200,"result":"ok"}`}, cloudapi.Options{}, true,
			`list alerts: 200 InvalidResponse: the host has no alert list route: its "result" is neither a list nor an object`},
		{"200 an HTML page", alertHost, reply{status: 200, contentType: "text/html", body: "<html>app</html>"}, cloudapi.Options{}, true,
			`list alerts: 200 InvalidResponse: the host has no alert list route: content type "text/html" is not JSON`},
		{"200 a JSON array", alertHost, reply{status: 200, contentType: jsonType, body: `[]`}, cloudapi.Options{}, true,
			`list alerts: 200 InvalidResponse: the host has no alert list route: its answer is not a JSON object`},
		{"401", alertHost, reply{status: 401, contentType: jsonType, body: `{"message":"Unauthorized"}`}, cloudapi.Options{}, false,
			"list alerts: 401 Unauthorized: Unauthorized"},
		{"429", managementHost, reply{status: 429, contentType: jsonType, body: `{"status":429,"error":"slow down"}`}, cloudapi.Options{}, false,
			"list alerts: 429 RateLimited: slow down"},
		{"500", alertHost, reply{status: 500, contentType: jsonType, body: `{"message":"boom"}`}, cloudapi.Options{}, false,
			"list alerts: 500 ServerError: boom"},
		{"503 with Retry-After", alertHost, reply{status: 503, contentType: jsonType, header: map[string]string{"Retry-After": "120"}, body: `{"message":"maintenance"}`},
			cloudapi.Options{}, false, "list alerts: 503 ServerError: maintenance (retry after 2m0s)"},
		{"envelope status disagrees", managementHost, reply{status: 200, contentType: jsonType, body: `{"status":503,"error":"later","result":[]}`}, cloudapi.Options{}, false,
			"list alerts: 200 InvalidResponse: later: envelope status 503 disagrees with HTTP status 200"},
		{"a broken list", alertHost, reply{status: 200, contentType: jsonType, body: `{"data":[{"id":"a1"},{"id":`}, cloudapi.Options{}, false,
			"list alerts: 200 InvalidResponse: decode alert 2: unexpected EOF"},
		{"too large", alertHost, reply{status: 200, contentType: jsonType, body: `{"data":[{"id":"` + strings.Repeat("a", 2000) + `"}]}`},
			cloudapi.Options{MaxResponseBytes: 1000}, false, "list alerts: 200 InvalidResponse: response body too large: Content-Length 2020 exceeds 1000 bytes"},
		{"a spent work budget", alertHost, reply{status: 200, contentType: jsonType, body: `{"data":[` + strings.Repeat(`{},`, 5000) + `{}]}`},
			cloudapi.Options{MaxDecodeWork: 10000}, false, "list alerts: 200 DecodeBudgetExceeded: decode work budget exceeded: more than 10000 units of work (about one per byte scanned)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := serve(t, tt.reply)
			_, err := newClient(tt.opts).ListAlerts(context.Background(), tt.src(srv.URL), cloudapi.AlertPageRequest{})
			if err == nil {
				t.Fatal("no error")
			}
			_ = asError(t, err)
			if errors.Is(err, cloudapi.ErrNoListRoute) != tt.noList {
				t.Errorf("errors.Is(%q, ErrNoListRoute) = %v, want %v", err, !tt.noList, tt.noList)
			}
			if err.Error() != tt.text {
				t.Errorf("error\n got %q\nwant %q", err.Error(), tt.text)
			}
		})
	}
}

// A host that cannot be reached may well list: its error is no
// ErrNoListRoute.
func TestListAlertsOfAnUnreachableHostIsNoNoListRoute(t *testing.T) {
	srv, _ := serve(t, reply{status: 200})
	srv.Close()
	_, err := newClient(cloudapi.Options{}).ListAlerts(context.Background(), alertHost(srv.URL), cloudapi.AlertPageRequest{})
	if cloudapi.ReasonOf(err) != cloudapi.ReasonUnreachable || errors.Is(err, cloudapi.ErrNoListRoute) {
		t.Errorf("%v: want Unreachable, not ErrNoListRoute", err)
	}
}

// Reading a page's alerts is charged to the answer's decode work budget,
// not only its bytes: a page of real alerts costs about 10 units per byte,
// so a budget of 8 per byte fails it, as a list of pipes would fail.
func TestListAlertsChargesTheReadingOfEachAlert(t *testing.T) {
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(readFile(t, "testdata/alert_current.json")), &env); err != nil {
		t.Fatal(err)
	}
	body := `{"data":[` + strings.TrimSuffix(strings.Repeat(string(env.Data)+",", 10), ",") + `]}`
	srv, _ := serve(t, reply{status: 200, contentType: "application/json", body: body})
	for perByte, want := range map[int64]cloudapi.Reason{8: cloudapi.ReasonDecodeBudgetExceeded, 14: ""} {
		_, err := newClient(cloudapi.Options{MaxDecodeWork: perByte * int64(len(body))}).ListAlerts(context.Background(), alertHost(srv.URL), cloudapi.AlertPageRequest{})
		if cloudapi.ReasonOf(err) != want {
			t.Errorf("a budget of %d units per byte: %v, want %q", perByte, err, want)
		}
	}
}

// A host that ignores the limit asked for, sending a page of 20,000 tiny
// alerts for a limit of 10 (or of MaxAlertPageLimit when none is given),
// gets at most the limit read and kept: the rest is skipped unread and
// counted, so that paging stays truthful.
func TestListAlertsKeepsAtMostTheLimitAsked(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"data":[`)
	const sent = 20_000
	for i := range sent {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"a%d"}`, i)
	}
	b.WriteString(`],"meta":{"total":20000}}`)
	srv, _ := serve(t, reply{status: 200, contentType: "application/json", body: b.String()})
	for _, limit := range []int{10, 0} {
		want := limit
		if limit == 0 {
			want = cloudapi.MaxAlertPageLimit
		}
		page, err := newClient(cloudapi.Options{}).ListAlerts(context.Background(), alertHost(srv.URL), cloudapi.AlertPageRequest{Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Alerts) != want || page.Read != want || page.Beyond != sent-want || page.Alerts[want-1].Alert.ID != fmt.Sprintf("a%d", want-1) {
			t.Errorf("limit %d: kept %d alerts (read %d, beyond %d), want the first %d and %d beyond", limit, len(page.Alerts), page.Read, page.Beyond, want, sent-want)
		}
	}
}

// With Each, a page hands each alert to the caller as it streams and keeps
// none; what Each says its look cost is charged with the decoding, and the
// answer's whole work is told to Work.
func TestListAlertsHandsEachAlertAndTellsItsWork(t *testing.T) {
	srv, _ := serve(t, reply{status: 200, contentType: "application/json",
		body: `{"data":[{"id":"a1","name":"Lag"},7,{"id":"a2"},{"id":"a3"}],"meta":{"total":4}}`})
	var handed []string
	var told int64
	page, err := newClient(cloudapi.Options{}).ListAlerts(context.Background(), alertHost(srv.URL), cloudapi.AlertPageRequest{Limit: 3,
		Each: func(a *cloudapi.AlertResult) int { handed = append(handed, a.Alert.ID); return 1000 },
		Work: func(units int64) { told += units }})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(handed, ",") != "a1,a2" || len(page.Alerts) != 0 || page.Read != 2 || page.Skipped != 1 || page.Beyond != 1 {
		t.Errorf("handed %v, kept %d, read %d, skipped %d, beyond %d; want a1,a2 handed, none kept, 1 skipped, 1 beyond",
			handed, len(page.Alerts), page.Read, page.Skipped, page.Beyond)
	}
	if told < 2000 {
		t.Errorf("the answer's work told is %d units, want at least Each's 2000", told)
	}
}
