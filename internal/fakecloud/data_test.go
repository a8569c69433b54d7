package fakecloud_test

import (
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

const dataFile = "../../hack/fakecloud/data.yaml"

// normalize renders data as generic JSON values, so that int and
// json.Number compare equal.
func normalize(t *testing.T, d fakecloud.Data) any {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The committed sample data file is DefaultData; regenerate it with
// `go generate ./internal/fakecloud` when DefaultData changes.
func TestDataFileIsDefaultData(t *testing.T) {
	fromFile, err := fakecloud.LoadData(dataFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := normalize(t, fromFile), normalize(t, fakecloud.DefaultData()); !reflect.DeepEqual(got, want) {
		t.Errorf("%s differs from DefaultData; run go generate ./internal/fakecloud", dataFile)
	}
}

func TestParseDataKeepsNumbersExact(t *testing.T) {
	d, err := fakecloud.ParseData([]byte(`{"alerts": {"a": {"threshold": 0.1000000000000000000001, "n": 10737418240}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Alerts["a"]["threshold"]; got != json.Number("0.1000000000000000000001") {
		t.Errorf("threshold %v (%T)", got, got)
	}
	if got := d.Alerts["a"]["n"]; got != json.Number("10737418240") {
		t.Errorf("n %v (%T)", got, got)
	}
	y, err := fakecloud.ParseData([]byte("alerts:\n  a:\n    threshold: 12.25\n    size: 10737418240\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := y.Alerts["a"]; got["threshold"] != json.Number("12.25") || got["size"] != json.Number("10737418240") {
		t.Errorf("YAML numbers %v", got)
	}
	for _, bad := range []string{"alerts: [", `{"alerts": [}`} {
		if _, err := fakecloud.ParseData([]byte(bad)); err == nil {
			t.Errorf("bad data %q accepted", bad)
		}
	}
}

// DefaultData must exercise every field of the spec and those the operator
// knows beyond it: decoded by the client, each field of each type is set in
// at least one item of the default service or of TodayServiceID.
func TestDefaultDataCoversEverySpecField(t *testing.T) {
	s := start(t)
	c := cloudapi.New(cloudapi.Options{})
	ctx := context.Background()
	creds := cloudapi.NewBasicCredentials(fakecloud.DefaultKeyID, fakecloud.DefaultKeySecret)
	pipes, err := c.ListPipes(ctx, s.URL, creds, org, svc, cloudapi.ListOptions[swv1.Pipe]{})
	if err != nil {
		t.Fatal(err)
	}
	eps, err := c.ListReversePrivateEndpoints(ctx, s.URL, creds, org, svc, cloudapi.ListOptions[swv1.ReversePrivateEndpoint]{})
	if err != nil {
		t.Fatal(err)
	}
	todayPipes, err := c.ListPipes(ctx, s.URL, creds, org, fakecloud.TodayServiceID, cloudapi.ListOptions[swv1.Pipe]{})
	if err != nil {
		t.Fatal(err)
	}
	todayEndpoints, err := c.ListReversePrivateEndpoints(ctx, s.URL, creds, org, fakecloud.TodayServiceID, cloudapi.ListOptions[swv1.ReversePrivateEndpoint]{})
	if err != nil {
		t.Fatal(err)
	}
	var alerts []swv1.AlertStatus
	for _, id := range []string{fakecloud.DefaultAlertID, fakecloud.SecondAlertID, fakecloud.CurrentShapeAlertID} {
		a, err := c.GetAlert(ctx, s.URL, cloudapi.NewBearerToken(fakecloud.DefaultAlertToken), id)
		if err != nil {
			t.Fatal(err)
		}
		alerts = append(alerts, a.Alert)
	}
	// The management API's alerts of the service, in the newest shape.
	managed, err := c.ListAlerts(ctx, cloudapi.AlertSource{API: cloudapi.APIManagement, BaseURL: s.URL, Key: creds, OrganizationID: org, ServiceID: svc},
		cloudapi.AlertPageRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range managed.Alerts {
		alerts = append(alerts, a.Alert)
	}
	allPipes := append(append([]swv1.Pipe{}, pipes.Items...), todayPipes.Items...)
	allEndpoints := append(append([]swv1.ReversePrivateEndpoint{}, eps.Items...), todayEndpoints.Items...)
	for _, v := range []any{allPipes, allEndpoints, alerts} {
		all, set := map[string]bool{}, map[string]bool{}
		fieldPaths(reflect.TypeOf(v).Elem(), "", all, map[reflect.Type]bool{})
		setPaths(reflect.ValueOf(v), "", set)
		var missing []string
		for p := range all {
			if !set[p] && !operatorOwned(p) {
				missing = append(missing, p)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("%T: default data never sets %v", v, missing)
		}
	}
	// The client redacts the credential; that the default data sets one is
	// shown by the redacted value, which only a non-empty value gets.
	if got := *pipes.Items[1].Source.ObjectStorage.ConnectionString; got != "<redacted>" {
		t.Errorf("connection string %q, want <redacted>", got)
	}
}

// operatorOwned tells whether the field at path is one of the status types'
// fields that the operator fills in, not the cloud: an alert's error and an
// item's since (issue 40), with whatever lies under it.
func operatorOwned(path string) bool {
	for _, owned := range []string{".error", ".since"} {
		if path == owned || strings.HasPrefix(path, owned+".") {
			return true
		}
	}
	return false
}

// fieldPaths lists the JSON paths of every field of struct type t.
func fieldPaths(t reflect.Type, prefix string, out map[string]bool, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	defer delete(seen, t)
	for f := range t.Fields() {
		p := prefix + "." + jsonName(f)
		out[p] = true
		fieldPaths(f.Type, p, out, seen)
	}
}

// setPaths records the JSON paths of the fields set (non-nil, non-empty) in v.
func setPaths(v reflect.Value, prefix string, out map[string]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			setPaths(v.Elem(), prefix, out)
		}
	case reflect.Slice:
		for i := range v.Len() {
			setPaths(v.Index(i), prefix, out)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Field(i)
			if (f.Kind() == reflect.Pointer || f.Kind() == reflect.Slice) && (f.IsNil() || (f.Kind() == reflect.Slice && f.Len() == 0)) {
				continue
			}
			p := prefix + "." + jsonName(v.Type().Field(i))
			out[p] = true
			setPaths(f, p, out)
		}
	}
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}
