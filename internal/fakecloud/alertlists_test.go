package fakecloud_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/alerts"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

var (
	alertListPath     = "/api/v2/alerts"
	serviceAlertsPath = "/v1/organizations/" + org + "/services/" + svc + "/observability/alerts"
	serviceAlertPath  = serviceAlertsPath + "/" + fakecloud.ServiceOnlyAlertID
	alertHostSource   = func(s *fakecloud.Server) cloudapi.AlertSource {
		return cloudapi.AlertSource{API: cloudapi.APIAlert, BaseURL: s.URL, Token: cloudapi.NewBearerToken(fakecloud.DefaultAlertToken)}
	}
	managementHostSource = func(s *fakecloud.Server) cloudapi.AlertSource {
		return cloudapi.AlertSource{API: cloudapi.APIManagement, BaseURL: s.URL, OrganizationID: org, ServiceID: svc,
			Key: cloudapi.NewBasicCredentials(fakecloud.DefaultKeyID, fakecloud.DefaultKeySecret)}
	}
)

// listBody is a list answer of either host, its envelope unwrapped.
type listBody struct {
	Data []struct {
		ID string `json:"id"`
	} `json:"data"`
	Meta *struct{ Total, Limit, Offset int } `json:"meta"`
}

// pageOf reads a list answer as "ids (total/limit/offset)".
func pageOf(t *testing.T, r result, managed bool) string {
	t.Helper()
	raw := json.RawMessage(r.body)
	if managed {
		var env struct {
			Status    int             `json:"status"`
			RequestID string          `json:"requestId"`
			Result    json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(r.body, &env); err != nil || env.Status != 200 {
			t.Fatalf("envelope %s", r.body)
		}
		assertUUIDv4(t, env.RequestID)
		raw = env.Result
		if strings.HasPrefix(string(raw), "[") {
			raw = json.RawMessage(`{"data":` + string(raw) + `}`)
		}
	}
	var body listBody
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("list body %s: %v", r.body, err)
	}
	var ids []string
	for _, a := range body.Data {
		ids = append(ids, a.ID[len(a.ID)-3:])
	}
	out := strings.Join(ids, ",")
	if body.Meta != nil {
		out += fmt.Sprintf(" (%d/%d/%d)", body.Meta.Total, body.Meta.Limit, body.Meta.Offset)
	}
	return out
}

// Both hosts list alerts in pages as today's servers do, and in each older
// way behind a switch: unpaged, the management API's bare array, a host
// ignoring offset; limit and offset are checked as the services check them.
func TestAlertListsPageOnBothHosts(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		managed bool
		route   fakecloud.AlertListRoute
		want    string
	}{
		{"alert API, the default page", alertListPath, false, fakecloud.AlertListPaged, "a3b,a3c,a3e (3/1000/0)"},
		{"alert API, a page", alertListPath + "?limit=2&offset=1", false, fakecloud.AlertListPaged, "a3c,a3e (3/2/1)"},
		{"alert API, past the end", alertListPath + "?limit=2&offset=5", false, fakecloud.AlertListPaged, " (3/2/5)"},
		{"alert API, older: unpaged", alertListPath + "?limit=1&offset=1", false, fakecloud.AlertListUnpaged, "a3b,a3c,a3e"},
		{"alert API, ignoring offset", alertListPath + "?limit=2&offset=2", false, fakecloud.AlertListIgnoresOffset, "a3b,a3c (3/2/0)"},
		{"management API, a page in the envelope", serviceAlertsPath + "?limit=3&offset=1", true, fakecloud.AlertListPaged, "a3c,a3e,a3f (4/3/1)"},
		{"management API, the bare-array result", serviceAlertsPath + "?limit=1", true, fakecloud.AlertListUnpaged, "a3b,a3c,a3e,a3f"},
		{"management API, ignoring offset", serviceAlertsPath + "?limit=1&offset=3", true, fakecloud.AlertListIgnoresOffset, "a3b (4/1/0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t)
			s.SetAlertListRoute(tt.route)
			s.SetServiceAlertListRoute(tt.route)
			auth := bearerAuth
			if tt.managed {
				auth = basicAuth
			}
			r := get(t, s, tt.path, auth)
			if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
				t.Fatalf("%d %s %s", r.status, r.header.Get("Content-Type"), r.body)
			}
			if got := pageOf(t, r, tt.managed); got != tt.want {
				t.Errorf("page %q, want %q", got, tt.want)
			}
		})
	}
	s := start(t)
	for _, q := range []string{"limit=0", "limit=1001", "limit=x", "offset=-1"} {
		if r := get(t, s, alertListPath+"?"+q, bearerAuth); r.status != 400 || !strings.Contains(string(r.body), "Params validation failed") {
			t.Errorf("%s: %d %s, want 400", q, r.status, r.body)
		}
		if r := get(t, s, serviceAlertsPath+"?"+q, basicAuth); r.status != 400 || decode(t, r).Status != 400 {
			t.Errorf("management %s: %d %s, want 400 in the envelope", q, r.status, r.body)
		}
	}
}

// The management API serves one alert of a service in its envelope, with
// the key, under the key's budget; each call is logged with its path and
// query.
func TestServiceAlertsAreTheManagementAPIs(t *testing.T) {
	s := start(t)
	r := get(t, s, serviceAlertPath, basicAuth)
	var env struct {
		Status int            `json:"status"`
		Result map[string]any `json:"result"`
	}
	if r.status != 200 || json.Unmarshal(r.body, &env) != nil || env.Status != 200 || env.Result["displayName"] != "Pipe paused" {
		t.Errorf("one alert: %d %s", r.status, r.body)
	}
	for path, want := range map[string]int{
		serviceAlertsPath + "/65f1a2b3c4d5e6f708192fff":                                                404,
		"/v1/organizations/" + org + "/services/nope/observability/alerts/" + fakecloud.DefaultAlertID: 404,
		"/v1/organizations/" + org + "/services/nope/observability/alerts":                             404,
	} {
		if r := get(t, s, path, basicAuth); r.status != want || decode(t, r).Status != want {
			t.Errorf("%s: %d %s, want %d in the envelope", path, r.status, r.body, want)
		}
	}
	for path, auth := range map[string]string{serviceAlertPath: bearerAuth, serviceAlertsPath: bearerAuth, alertListPath: basicAuth} {
		if r := get(t, s, path, auth); r.status != 401 {
			t.Errorf("%s with the other API's credential: %d, want 401", path, r.status)
		}
	}

	s.ResetCalls()
	s.SetManagementBudget(fakecloud.Budget{Requests: 2, Window: time.Hour})
	statuses := []int{get(t, s, pipesPath, basicAuth).status, get(t, s, serviceAlertsPath+"?limit=10&offset=0", basicAuth).status,
		get(t, s, serviceAlertPath, basicAuth).status, get(t, s, alertListPath, bearerAuth).status}
	if want := []int{200, 200, 429, 200}; !slices.Equal(statuses, want) {
		t.Errorf("statuses %v, want %v: the service's alerts spend the key's budget, the alert API's list the token's", statuses, want)
	}
	var log []string
	for _, c := range s.CallLog() {
		log = append(log, fmt.Sprintf("%s %s?%s %d", c.Operation, c.Path[strings.LastIndex(c.Path, "/")+1:], c.Query, c.Status))
	}
	want := []string{"list_pipes pipes? 200", "list_service_alerts alerts?limit=10&offset=0 200",
		"get_service_alert " + fakecloud.ServiceOnlyAlertID + "? 429", "list_alerts alerts? 200"}
	if !slices.Equal(log, want) {
		t.Errorf("call log\n%s\nwant\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
	}
}

// A host without the list route answers as Express does, and a list route
// answering one alert is no list: the client reads both as a host that
// does not list, while the single GET still answers.
func TestAlertListRoutesThatDoNotList(t *testing.T) {
	for _, route := range []fakecloud.AlertListRoute{fakecloud.AlertListNone, fakecloud.AlertListNotAList} {
		for name, src := range map[string]func(*fakecloud.Server) cloudapi.AlertSource{"alert API": alertHostSource, "management API": managementHostSource} {
			t.Run(string(route)+" "+name, func(t *testing.T) {
				s := start(t)
				s.SetAlertListRoute(route)
				s.SetServiceAlertListRoute(route)
				c := cloudapi.New(cloudapi.Options{})
				_, err := c.ListAlerts(t.Context(), src(s), cloudapi.AlertPageRequest{})
				if !errors.Is(err, cloudapi.ErrNoListRoute) {
					t.Errorf("list: %v, want ErrNoListRoute", err)
				}
				if route == fakecloud.AlertListNone && !strings.Contains(err.Error(), "404 EndpointNotFound: Cannot GET /") {
					t.Errorf("list: %v, want Express's words", err)
				}
				if _, err := c.GetAlertFrom(t.Context(), src(s), fakecloud.DefaultAlertID); err != nil {
					t.Errorf("single GET: %v", err)
				}
			})
		}
	}
}

// The faults of a moving list and of a host ignoring offset, read whole
// through the client as a watch reads them: an alert created or deleted
// between two page reads neither doubles nor loses another alert, and a
// host ignoring offset stops at its first repeated page.
func TestAlertListFaultsReadWhole(t *testing.T) {
	many := func() []map[string]any {
		out := make([]map[string]any, 25)
		for i := range out {
			out[i] = map[string]any{"id": fmt.Sprintf("65f1a2b3c4d5e6f7081930%02d", i), "name": fmt.Sprintf("alert %d", i)}
		}
		return out
	}
	tests := []struct {
		name    string
		op      fakecloud.Operation
		change  *fakecloud.AlertListChange
		route   fakecloud.AlertListRoute
		want    int
		pages   int
		stopped string
	}{
		{"management, steady", fakecloud.OpListServiceAlerts, nil, "", 25, 3, ""},
		{"management, an alert created first between pages", fakecloud.OpListServiceAlerts,
			&fakecloud.AlertListChange{BeforeCall: 2, Create: map[string]any{"id": "65f1a2b3c4d5e6f708193099"}}, "", 25, 3, ""},
		{"management, an alert of the first page deleted between pages", fakecloud.OpListServiceAlerts,
			&fakecloud.AlertListChange{BeforeCall: 2, Delete: "65f1a2b3c4d5e6f708193003"}, "", 25, 4, ""},
		{"alert API, an alert deleted between pages", fakecloud.OpListAlerts,
			&fakecloud.AlertListChange{BeforeCall: 2, Delete: "65f1a2b3c4d5e6f708193003"}, "", 25, 4, ""},
		{"alert API, ignoring offset", fakecloud.OpListAlerts, nil, fakecloud.AlertListIgnoresOffset, 10, 2,
			"the host repeated the page at offset 9: it ignores offset; read 10 alerts of a list of 25"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t)
			src := managementHostSource(s)
			if tt.op == fakecloud.OpListAlerts {
				src = alertHostSource(s)
				d := s.Data()
				d.Alerts = map[string]map[string]any{}
				for _, a := range many() {
					d.Alerts[fmt.Sprint(a["id"])] = a
				}
				s.SetData(d)
			} else {
				s.SetServiceAlerts(org, svc, many())
			}
			s.SetAlertListRoute(tt.route)
			if tt.change != nil {
				s.SetAlertListChange(tt.op, *tt.change)
			}
			c := cloudapi.New(cloudapi.Options{})
			seen := map[string]bool{}
			got, err := alerts.ReadAll(t.Context(), 10, func(ctx context.Context, offset int, each func(*cloudapi.AlertResult) int) (cloudapi.AlertPage, error) {
				return c.ListAlerts(ctx, src, cloudapi.AlertPageRequest{Limit: 10, Offset: offset, Each: each})
			}, func(a *cloudapi.AlertResult) int {
				if seen[a.Alert.ID] {
					t.Errorf("%s read twice", a.Alert.ID)
				}
				seen[a.Alert.ID] = true
				return 0
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(seen) != tt.want || got.Read != tt.want || got.Pages != tt.pages || got.Stopped != tt.stopped || s.Calls(tt.op) != tt.pages {
				t.Errorf("read %d alerts in %d pages (%d calls), stopped %q; want %d in %d, %q", len(seen), got.Pages, s.Calls(tt.op), got.Stopped, tt.want, tt.pages, tt.stopped)
			}
		})
	}
}
