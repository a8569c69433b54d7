package cloudapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// An alert server that echoes the caller's own token in every string of an
// alert, as sent, in an Authorization header's base64, JSON-escaped or
// URL-encoded: the decoded alert, which goes to status, events, logs and
// metric labels, shows "<redacted>" in each of those strings and none of
// the token.
func TestGetAlertRedactsTheTokenFromEveryString(t *testing.T) {
	for _, tt := range []struct{ name, echo, want string }{
		{"as sent", testTokenValue, "seen <redacted> here"},
		{"Basic base64", "Basic " + base64.StdEncoding.EncodeToString([]byte("me:"+testTokenValue)), "seen Basic <redacted> here"},
		{"Bearer", "Bearer " + testTokenValue, "seen Bearer <redacted> here"},
		{"JSON-escaped", `\u0066ake\u002dalert\u002dtoken`, "seen <redacted> here"},
		{"URL-encoded", strings.ReplaceAll(testTokenValue, "-", "%2D"), "seen <redacted> here"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			text := "seen " + tt.echo + " here"
			ch := map[string]string{"type": text, "webhookId": text}
			data := map[string]any{
				"id": text, "name": text, "message": text, "interval": text, "thresholdType": text,
				"source": text, "state": text, "channel": ch, "channels": []any{ch, ch},
				"teamId": text, "tileId": text, "dashboardId": text, "savedSearchId": text, "groupBy": text,
				"scheduleStartAt": text, "silenced": map[string]string{"by": text, "at": text, "until": text},
				"executionErrors": []any{map[string]string{"timestamp": text, "type": text, "message": text}},
				"note":            text, "createdAt": text, "updatedAt": text,
			}
			body, err := json.Marshal(map[string]any{"data": data})
			if err != nil {
				t.Fatal(err)
			}
			srv, _ := serve(t, reply{status: 200, contentType: "application/json", body: string(body),
				header: map[string]string{"X-Request-ID": text}})
			got, err := newClient(cloudapi.Options{}).GetAlert(context.Background(), srv.URL, testToken, "a1")
			if err != nil {
				t.Fatal(err)
			}
			strs := stringsOf(reflect.ValueOf(got), nil)
			if want := 29; len(strs) != want {
				t.Errorf("the alert has %d strings, want %d (every string of the response)", len(strs), want)
			}
			for _, s := range strs {
				if s != tt.want {
					t.Errorf("a string of the alert reads %q, want %q", s, tt.want)
				}
			}
		})
	}
}

// stringsOf appends every string of v that is not empty, decimals aside,
// to out.
func stringsOf(v reflect.Value, out []string) []string {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			out = stringsOf(v.Elem(), out)
		}
	case reflect.Struct:
		for _, field := range v.Fields() {
			out = stringsOf(field, out)
		}
	case reflect.Slice:
		for i := range v.Len() {
			out = stringsOf(v.Index(i), out)
		}
	case reflect.String:
		if v.Type() != reflect.TypeFor[swv1.Decimal]() && v.String() != "" {
			out = append(out, v.String())
		}
	}
	return out
}
