package cloudapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

func getAlertFrom(t *testing.T, body string) (cloudapi.AlertResult, error) {
	t.Helper()
	srv, _ := serve(t, reply{status: 200, contentType: "application/json", body: body})
	return newClient(cloudapi.Options{}).GetAlert(context.Background(), srv.URL, testToken, "65f5e4a3b9e77c001a123456")
}

// An alert of the shape alert API servers send since early 2026: teamId and
// savedSearchId land in team and savedSearch, a not_between range keeps both
// bounds exactly, the channels, the silence, the schedule and the latest
// five execution errors are kept, cleaned.
func TestGetAlertDecodesTheCurrentShape(t *testing.T) {
	got, err := getAlertFrom(t, readFile(t, "testdata/alert_current.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := cloudapi.AlertResult{Alert: swv1.AlertStatus{
		ID:            "65f5e4a3b9e77c001a123456",
		Name:          ptr("Ingest latency out of range"),
		DisplayName:   ptr("Ingest latency out of range"),
		Tags:          []string{"ingest"},
		Message:       ptr("p95 ingest latency left 100..500.5 ms"),
		Note:          ptr("Runbook: https://wiki.example.invalid/runbooks/ingest-latency"),
		Threshold:     dec("100"),
		ThresholdMax:  dec("500.5"),
		Interval:      ptr("15m"),
		ThresholdType: ptr("not_between"),
		Source:        ptr("saved_search"),
		State:         ptr("ALERT"),
		Channel:       &swv1.AlertChannel{Type: ptr("webhook"), WebhookID: ptr("65f5e4a3b9e77c001a789012")},
		Channels: []swv1.AlertChannel{
			{Type: ptr("webhook"), WebhookID: ptr("65f5e4a3b9e77c001a789012")},
			{Type: ptr("webhook"), WebhookID: ptr("65f5e4a3b9e77c001a789013")},
		},
		Team:                  ptr("65f5e4a3b9e77c001a345678"),
		SavedSearch:           ptr("65f5e4a3b9e77c001a345679"),
		GroupBy:               ptr("ServiceName"),
		NumConsecutiveWindows: ptr[int64](3),
		ScheduleOffsetMinutes: ptr[int64](5),
		ScheduleStartAt:       ptr("2026-03-01T00:00:00.000Z"),
		Silenced: &swv1.AlertSilence{By: ptr("65f5e4a3b9e77c001a111111"),
			At: ptr("2026-03-02T10:00:00.000Z"), Until: ptr("2026-03-02T18:00:00.000Z")},
		ExecutionErrors: []swv1.AlertExecutionError{
			{Timestamp: ptr("2026-03-02T09:30:00.000Z"), Type: ptr("WEBHOOK_ERROR"), Message: ptr("Request failed with status code 500")},
			{Timestamp: ptr("2026-03-02T09:45:00.000Z"), Type: ptr("WEBHOOK_ERROR"), Message: ptr("getaddrinfo ENOTFOUND hooks.chat.example.invalid")},
			{Timestamp: ptr("2026-03-02T10:00:00.000Z"), Type: ptr("INVALID_ALERT"), Message: ptr("Saved search not found")},
			{Timestamp: ptr("2026-03-02T10:15:00.000Z"), Type: ptr("UNKNOWN"), Message: ptr("unexpected error with spaces")},
			{Timestamp: ptr("2026-03-02T10:30:00.000Z"), Type: ptr("WEBHOOK_ERROR"), Message: ptr("Request failed with status code 401 (Bearer <redacted>)")},
		},
		CreatedAt: ptr("2026-02-20T08:00:00.000Z"),
		UpdatedAt: ptr("2026-03-02T10:00:00.000Z"),
	}}
	assertEqual(t, got, want)
}

// Both shapes read into one field each; when a server sends both names, the
// ...Id one wins, and a name whose value cannot be used does not hide the
// other.
func TestGetAlertReadsBothNamesOfARenamedField(t *testing.T) {
	tests := []struct {
		name    string
		members string
		want    *string
		leftOut []string
	}{
		{"older servers: team", `"team":"t-old"`, ptr("t-old"), nil},
		{"newer servers: teamId", `"teamId":"t-new"`, ptr("t-new"), nil},
		{"both: teamId wins", `"team":"t-old","teamId":"t-new"`, ptr("t-new"), nil},
		{"both, in the other order: teamId wins", `"teamId":"t-new","team":"t-old"`, ptr("t-new"), nil},
		{"teamId null: team", `"teamId":null,"team":"t-old"`, ptr("t-old"), nil},
		{"team as the referenced document", `"team":{"_id":"t-doc","name":"Data"}`, ptr("t-doc"), nil},
		{"teamId of an unusable type: team, and teamId named", `"teamId":42,"team":"t-old"`, ptr("t-old"), []string{"teamId"}},
		{"neither", `"name":"x"`, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := getAlertFrom(t, `{"data":{`+tt.members+`}}`)
			if err != nil {
				t.Fatal(err)
			}
			assertEqual(t, got.Alert.Team, tt.want)
			assertEqual(t, got.LeftOut, tt.leftOut)
		})
	}
	// The same rule for the dashboard and the saved search.
	got, err := getAlertFrom(t, `{"data":{"dashboard":"d-old","dashboardId":"d-new","savedSearch":"s-old","savedSearchId":"s-new"}}`)
	if err != nil {
		t.Fatal(err)
	}
	if *got.Alert.Dashboard != "d-new" || *got.Alert.SavedSearch != "s-new" {
		t.Errorf("dashboard %q, savedSearch %q: want the ...Id values", *got.Alert.Dashboard, *got.Alert.SavedSearch)
	}
	if b := mustJSON(t, got.Alert, ""); string(b) != `{"id":"","dashboard":"d-new","savedSearch":"s-new"}` {
		t.Errorf("status shows %s", b)
	}
}

// One odd member leaves out that member only: the alert and its other
// fields stay, and the member is named. Numbers may come as JSON numbers
// or numeric strings.
func TestGetAlertLeavesOutOnlyTheOddField(t *testing.T) {
	tests := []struct {
		name    string
		members string
		want    swv1.AlertStatus
		leftOut []string
	}{
		{"threshold as a numeric string", `"threshold":"500.5","thresholdMax":" 1e3 "`,
			swv1.AlertStatus{Threshold: dec("500.5"), ThresholdMax: dec("1000")}, nil},
		{"threshold that is no number", `"threshold":"high","thresholdMax":[1]`,
			swv1.AlertStatus{}, []string{"threshold", "thresholdMax"}},
		{"threshold out of range", `"threshold":1e400`, swv1.AlertStatus{}, []string{"threshold"}},
		{"integers from numbers and strings", `"numConsecutiveWindows":"3","scheduleOffsetMinutes":2.0`,
			swv1.AlertStatus{NumConsecutiveWindows: ptr[int64](3), ScheduleOffsetMinutes: ptr[int64](2)}, nil},
		{"an integer with a fraction", `"numConsecutiveWindows":2.5,"scheduleOffsetMinutes":"0x10"`,
			swv1.AlertStatus{}, []string{"numConsecutiveWindows", "scheduleOffsetMinutes"}},
		{"a string of another type", `"state":true,"interval":5`, swv1.AlertStatus{}, []string{"interval", "state"}},
		{"a channel with an odd member keeps the rest", `"channel":{"type":"webhook","webhookId":7}`,
			swv1.AlertStatus{Channel: &swv1.AlertChannel{Type: ptr("webhook")}}, []string{"channel.webhookId"}},
		{"an odd channel among channels", `"channels":[{"type":"webhook","webhookId":"w1"},"slack",null,{"type":"email"}]`,
			swv1.AlertStatus{Channels: []swv1.AlertChannel{{Type: ptr("webhook"), WebhookID: ptr("w1")}, {Type: ptr("email")}}},
			[]string{"channels[1]"}},
		{"channels that are no list", `"channels":{"type":"webhook"}`, swv1.AlertStatus{}, []string{"channels"}},
		{"no channels is kept as none", `"channels":[],"executionErrors":[]`,
			swv1.AlertStatus{Channels: []swv1.AlertChannel{}, ExecutionErrors: []swv1.AlertExecutionError{}}, nil},
		{"silenced with nulls is silenced", `"silenced":{"by":null,"until":null}`, swv1.AlertStatus{Silenced: &swv1.AlertSilence{}}, nil},
		{"silenced null is not", `"silenced":null`, swv1.AlertStatus{}, nil},
		{"silenced that is no object", `"silenced":"yes"`, swv1.AlertStatus{}, []string{"silenced"}},
		{"an execution error of another shape", `"executionErrors":["boom",{"type":"QUERY_ERROR","timestamp":1767254400}]`,
			swv1.AlertStatus{ExecutionErrors: []swv1.AlertExecutionError{{Type: ptr("QUERY_ERROR")}}},
			[]string{"executionErrors[0]", "executionErrors[1].timestamp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := getAlertFrom(t, `{"data":{"name":"kept",`+tt.members+`}}`)
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Name = ptr("kept")
			assertEqual(t, got.Alert, tt.want)
			assertEqual(t, got.LeftOut, tt.leftOut)
		})
	}
}

// The cloud's words in execution errors and the note are bounded, and a
// webhook URL in them (whose path is often its secret) shows only its host.
func TestGetAlertBoundsAndScrubsTheCloudsWords(t *testing.T) {
	long := strings.Repeat("é", 3000)
	var errs []map[string]string
	for i := range 20 {
		errs = append(errs, map[string]string{"timestamp": "2026-03-02T10:" + twoDigits(i) + ":00Z", "type": strings.Repeat("T", 100), "message": long[:600]})
	}
	errs = append(errs, map[string]string{"message": "https://user:pw@hooks.chat.example.invalid:8443/services/T0/B0/s3cret?token=abc#x said 403"})
	body, err := json.Marshal(map[string]any{"data": map[string]any{"note": long, "executionErrors": errs}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := getAlertFrom(t, string(body))
	if err != nil {
		t.Fatal(err)
	}
	a := got.Alert
	if n := utf8.RuneCountInString(*a.Note); n > 1024 {
		t.Errorf("note has %d runes, want at most 1024", n)
	}
	if len(a.ExecutionErrors) != 5 {
		t.Fatalf("%d execution errors kept, want the latest 5", len(a.ExecutionErrors))
	}
	if first, last := *a.ExecutionErrors[0].Timestamp, *a.ExecutionErrors[4].Timestamp; first != "2026-03-02T10:15:00Z" || last != "2026-03-02T10:19:00Z" {
		t.Errorf("kept errors from %s to %s, want the latest five, oldest first (10:15 to 10:19)", first, last)
	}
	for _, e := range a.ExecutionErrors {
		if n := utf8.RuneCountInString(*e.Message); n > 200 {
			t.Errorf("a message has %d runes, want at most 200", n)
		}
		if n := utf8.RuneCountInString(*e.Type); n > 64 {
			t.Errorf("a type has %d runes, want at most 64", n)
		}
	}
	// The error without a timestamp counts as the oldest, so it was not kept;
	// read it alone.
	body, err = json.Marshal(map[string]any{"data": map[string]any{"executionErrors": errs[20:]}})
	if err != nil {
		t.Fatal(err)
	}
	got, err = getAlertFrom(t, string(body))
	if err != nil {
		t.Fatal(err)
	}
	if msg := *got.Alert.ExecutionErrors[0].Message; msg != "https://hooks.chat.example.invalid:8443/… said 403" {
		t.Errorf("message = %q, want the URL reduced to its host", msg)
	}
}

func twoDigits(i int) string { return string(rune('0'+i/10)) + string(rune('0'+i%10)) }

// An alert of either shape marshals back into status and decodes to the
// same value, so that an unchanged cloud writes nothing.
func TestGetAlertRoundTripsThroughStatus(t *testing.T) {
	for _, file := range []string{"testdata/alert.json", "testdata/alert_current.json", "testdata/alert_sparse.json"} {
		got, err := getAlertFrom(t, readFile(t, file))
		if err != nil {
			t.Fatal(err)
		}
		again, err := getAlertFrom(t, `{"data":`+string(mustJSON(t, got.Alert, ""))+`}`)
		if err != nil {
			t.Fatal(err)
		}
		assertEqual(t, again.Alert, got.Alert)
	}
}
