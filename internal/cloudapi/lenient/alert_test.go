package lenient_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
)

// controlIn is the first C0 or C1 control or DEL of s, if any, but for
// the newline and tab a value's lines are made of (redact.Printable).
func controlIn(s string) (rune, bool) {
	for _, r := range s {
		if unicode.Is(unicode.Cc, r) && r != '\n' && r != '\t' {
			return r, true
		}
	}
	return 0, false
}

// A hostile host's strings reach status without the characters a terminal
// acts on, whichever kind of item carries them and wherever in it they are;
// the newlines and tabs of a multi-line value stay, and a CR goes.
func TestItemsKeepNoControlCharacters(t *testing.T) {
	const osc52, erase, c1 = `\u001b]52;c;aGk=\u0007`, `\u001b[1A\u001b[2K`, `\u009b2J\u007f`
	pipe := `{"id":"p1","name":"logs` + osc52 + `","state":"Failed` + erase + `","source":{"kafka":{"brokers":"b` + c1 + `:9092"}},` +
		`"destination":{"database":"db\n","table":"t\r"},"new` + osc52 + `":"x` + c1 + `"}`
	endpoint := `{"id":"e1","description":"msk` + erase + `","dnsNames":["a` + c1 + `.example.com"],"status":"Ready` + osc52 + `"}`
	alert := `{"id":"a1","name":"lag` + osc52 + `","state":"ALERT` + erase + `","tags":["t` + c1 + `"],` +
		`"channels":[{"type":"webhook","webhookId":"w` + c1 + `"}],"source":"tile\t"}`

	var p swv1.Pipe
	if _, err := lenient.ReadPipe(lenient.NewStrict(), []byte(pipe), &p); err != nil {
		t.Fatal(err)
	}
	var e swv1.ReversePrivateEndpoint
	if _, err := lenient.ReadEndpoint(lenient.NewStrict(), []byte(endpoint), &e); err != nil {
		t.Fatal(err)
	}
	a, _ := lenient.ReadAlert([]byte(alert))
	for name, item := range map[string]any{"pipe": p, "endpoint": e, "alert": a} {
		b, err := json.Marshal(item)
		if err != nil {
			t.Fatal(err)
		}
		var decoded any
		if err := json.Unmarshal(b, &decoded); err != nil {
			t.Fatal(err)
		}
		eachString(decoded, func(s string) {
			if r, ok := controlIn(s); ok {
				t.Errorf("%s keeps %U in %q", name, r, s)
			}
		})
	}
	if p.Name == nil || *p.Name != "logs]52;c;aGk=" || a.Name == nil || *a.Name != "lag]52;c;aGk=" {
		t.Errorf("names %v and %v: want the text around the controls kept", p.Name, a.Name)
	}
	if p.Destination == nil || p.Destination.Table == nil || *p.Destination.Table != "t" {
		t.Errorf("destination %+v: want the table without its CR", p.Destination)
	}
	if got := strings.Join(p.OtherFields, ","); strings.Contains(got, "\x1b") {
		t.Errorf("otherFields %q keep ESC", got)
	}
}

// eachString calls f with every string of v, a decoded JSON value, member
// names included.
func eachString(v any, f func(string)) {
	switch t := v.(type) {
	case string:
		f(t)
	case []any:
		for _, e := range t {
			eachString(e, f)
		}
	case map[string]any:
		for k, e := range t {
			f(k)
			eachString(e, f)
		}
	}
}

// An alert shows each name under the cloud's own member name, as status
// shows it to a user: displayName as displayName, a null or absent name
// absent (never filled from displayName), and the one label a person
// reads (swv1.AlertStatus.Label) the name, else the display name.
func TestReadAlertKeepsTheCloudsNames(t *testing.T) {
	tests := []struct {
		name, raw, wantJSON, label string
	}{
		{"null name, displayName", `{"id":"a1","name":null,"displayName":"Checkout error rate (inline)"}`,
			`{"id":"a1","displayName":"Checkout error rate (inline)"}`, "Checkout error rate (inline)"},
		{"displayName only", `{"id":"a1","displayName":"Ingest lag"}`, `{"id":"a1","displayName":"Ingest lag"}`, "Ingest lag"},
		{"both, displayName first", `{"id":"a1","displayName":"Ingest lag","name":"ingest_lag"}`,
			`{"id":"a1","name":"ingest_lag","displayName":"Ingest lag"}`, "ingest_lag"},
		{"empty name, displayName", `{"id":"a1","name":"","displayName":"Ingest lag"}`,
			`{"id":"a1","name":"","displayName":"Ingest lag"}`, "Ingest lag"},
		{"name only", `{"id":"a1","name":"ingest_lag","displayName":null}`, `{"id":"a1","name":"ingest_lag"}`, "ingest_lag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, leftOut := lenient.ReadAlert([]byte(tt.raw))
			got, err := json.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.wantJSON || len(leftOut) > 0 {
				t.Errorf("ReadAlert(%s) shows %s (left out %v), want %s", tt.raw, got, leftOut, tt.wantJSON)
			}
			if label := a.Label(); label != tt.label {
				t.Errorf("Label() = %q, want %q", label, tt.label)
			}
		})
	}
}
