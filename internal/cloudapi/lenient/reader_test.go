package lenient_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
)

// One odd value costs its field only; the rest of the item is read, the
// value is kept as sent in otherFields, and its path is reported.
func TestReadPipeLeavesOutOnlyTheOddValue(t *testing.T) {
	raw := `{"id":"p1","name":"n","state":"Running","scaling":{"replicas":"two","replicaCpuMillicores":"500m"},` +
		`"source":{"kafka":{"brokers":"b:9092"},"cassandra":{"hosts":"h"}},"newField":{"a":1},` +
		`"password":"hunter22","destination":{"url":"https://u:pw@db.example.com/x?sig=s"}}`
	var p swv1.Pipe
	report, err := lenient.ReadPipe(lenient.NewStrict(), []byte(raw), &p)
	if err != nil {
		t.Fatal(err)
	}
	if p.ID == nil || *p.ID != "p1" || p.Scaling == nil || p.Scaling.ReplicaCPUMillicores == nil || *p.Scaling.ReplicaCPUMillicores != 500 {
		t.Errorf("pipe = %+v, want id p1 and 500 millicores", p)
	}
	if p.Scaling.Replicas != nil {
		t.Errorf("replicas = %v, want left out", *p.Scaling.Replicas)
	}
	if report.Count != 1 || !slices.Equal(report.LeftOut, []string{"scaling.replicas"}) {
		t.Errorf("report = %+v, want scaling.replicas left out", report)
	}
	if p.SourceKind == nil || *p.SourceKind != "kafka,cassandra" {
		t.Errorf("sourceKind = %v, want kafka,cassandra", p.SourceKind)
	}
	other := strings.Join(p.OtherFields, "\n")
	for _, want := range []string{`scaling.replicas: "two"`, `newField.a: 1`, `password: "<redacted>"`, `source.cassandra.hosts: "h"`} {
		if !strings.Contains(other, want) {
			t.Errorf("otherFields %q lack %q", p.OtherFields, want)
		}
	}
	if strings.Contains(other, "hunter22") {
		t.Errorf("otherFields show a password: %q", p.OtherFields)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "u:pw") || strings.Contains(string(b), "sig=s") {
		t.Errorf("pipe keeps a URL's user info or query: %s", b)
	}
}

func TestReadEndpointRefusesWhatIsNotAnObject(t *testing.T) {
	var e swv1.ReversePrivateEndpoint
	if _, err := lenient.ReadEndpoint(lenient.NewStrict(), []byte(`[1]`), &e); !errors.Is(err, lenient.ErrNotObject) {
		t.Errorf("err = %v, want ErrNotObject", err)
	}
	report, err := lenient.ReadEndpoint(lenient.NewStrict(), []byte(`{"id":"e1"}`), &e)
	if err != nil || e.ID == nil || *e.ID != "e1" || report.Count != 0 {
		t.Errorf("ReadEndpoint = %+v, %+v, %v", e, report, err)
	}
}

// An alert names what it leaves out, in the order of its type's fields, and
// reads a renamed member under either name, the new one winning.
func TestReadAlert(t *testing.T) {
	a, leftOut := lenient.ReadAlert([]byte(`{"id":"a1","threshold":"high","teamId":"t-new","team":"t-old","unknown":1}`))
	if a.ID != "a1" || a.Team == nil || *a.Team != "t-new" {
		t.Errorf("alert = %+v, want id a1 and team t-new", a)
	}
	if !slices.Equal(leftOut, []string{"threshold"}) {
		t.Errorf("leftOut = %q, want threshold", leftOut)
	}
}

func TestJSONKinds(t *testing.T) {
	if lenient.FirstByte([]byte(" \n{}")) != '{' || lenient.FirstByte(nil) != 0 {
		t.Error("FirstByte")
	}
	if s, ok := lenient.String([]byte(`"a\"b"`)); !ok || s != `a"b` {
		t.Errorf("String = %q, %v", s, ok)
	}
	if _, ok := lenient.Object([]byte(`[]`)); ok {
		t.Error("Object([]) is an object")
	}
}

// omitted is the operator's record of what it cut: a cloud that sends a
// member of that name cannot fake it.
func TestReadPipeOmittedIsTheOperators(t *testing.T) {
	for _, raw := range []string{`{"id":"p1","omitted":{"tableMappings":5}}`, `{"id":"p1","omitted":{"tableMappings":"x"},"scaling":{"replicas":"two"}}`} {
		var p swv1.Pipe
		if _, err := lenient.ReadPipe(lenient.NewStrict(), []byte(raw), &p); err != nil {
			t.Fatal(err)
		}
		if p.Omitted != nil || !strings.Contains(strings.Join(p.OtherFields, "\n"), "omitted.tableMappings") {
			t.Errorf("%s: omitted %v, otherFields %q; want it kept in otherFields only", raw, p.Omitted, p.OtherFields)
		}
	}
}

// Every kind of source the API type has is named in the sourceKind of a pipe
// that has it, as the cloud names it: the reader knows each member of
// swv1.PipeSource, added or not since this test was written.
func TestReadPipeNamesEveryKindOfSource(t *testing.T) {
	for _, kind := range swv1.PipeSourceKinds() {
		var p swv1.Pipe
		if _, err := lenient.ReadPipe(lenient.NewStrict(), []byte(`{"id":"p1","source":{"`+kind+`":{}}}`), &p); err != nil {
			t.Fatal(err)
		}
		if p.SourceKind == nil || *p.SourceKind != kind || len(p.OtherFields) != 0 {
			t.Errorf("a pipe of source %s reads sourceKind %v and otherFields %q, want %s and none", kind, p.SourceKind, p.OtherFields, kind)
		}
	}
}
