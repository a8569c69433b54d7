package lenient_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
)

// Issue 28: status keeps every field of a pipe at the spec's type. Each
// integer, boolean and decimal field of swv1.Pipe is read from its spec-typed
// value, from a form that converts without loss, and from one that does not
// convert: that one is left out of its field, kept as sent in otherFields and
// reported, and the pipe is kept.
func TestReadPipeKeepsEveryFieldAtTheSpecsType(t *testing.T) {
	forms := map[string]struct{ spec, lossless, unusable, want string }{
		"integer": {spec: `42`, lossless: `"42"`, unusable: `"forty-two"`, want: `42`},
		"boolean": {spec: `true`, lossless: `"true"`, unusable: `"yes"`, want: `true`},
		"number":  {spec: `1.5`, lossless: `"1.5"`, unusable: `"lots"`, want: `1.5`},
	}
	fields := typedLeaves(reflect.TypeFor[swv1.Pipe](), nil)
	// The fields the spec (and the publish-subscribe service) type as
	// integers, which managers before issue 28 showed as strings.
	for _, must := range []string{"source.kinesis.timestamp", "source.pubsub.ackDeadline"} {
		if !slices.ContainsFunc(fields, func(f typedLeaf) bool { return f.path() == must && f.jsonType == "integer" }) {
			t.Errorf("%s is not an integer field of the pipe", must)
		}
	}
	for _, f := range fields {
		form := forms[f.jsonType]
		for _, c := range []struct{ name, value string }{{"spec-typed", form.spec}, {"lossless", form.lossless}} {
			t.Run(f.path()+"/"+c.name, func(t *testing.T) {
				p, report := readPipeWith(t, f, c.value)
				if report.Count != 0 || len(p.OtherFields) != 0 {
					t.Errorf("left out %v, otherFields %q; want none", report.LeftOut, p.OtherFields)
				}
				if got := valueAt(t, p, f); got != form.want {
					t.Errorf("status shows %s, want %s", got, form.want)
				}
			})
		}
		t.Run(f.path()+"/unusable", func(t *testing.T) {
			p, report := readPipeWith(t, f, form.unusable)
			if got := valueAt(t, p, f); got != "" {
				t.Errorf("status shows %s, want the field absent", got)
			}
			if want := f.path() + ": " + form.unusable; !slices.Contains(p.OtherFields, want) {
				t.Errorf("otherFields %q lack %q", p.OtherFields, want)
			}
			if !slices.Equal(report.LeftOut, []string{f.path()}) {
				t.Errorf("left out %v, want [%s]", report.LeftOut, f.path())
			}
			if p.Name == nil || *p.Name != "kept" {
				t.Errorf("the pipe lost its name: %+v", p)
			}
		})
	}
}

// typedLeaf is a field of a non-string scalar type, reached through the
// JSON members in steps (a list's element is its first).
type typedLeaf struct {
	steps    []string
	inList   []bool
	jsonType string
}

func (f typedLeaf) path() string {
	var b strings.Builder
	for i, s := range f.steps {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
		if f.inList[i] {
			b.WriteString("[0]")
		}
	}
	return b.String()
}

// typedLeaves lists the integer, boolean and decimal fields reachable from
// t, by their JSON names, the operator's own fields left out.
func typedLeaves(t reflect.Type, prefix []typedLeaf) []typedLeaf {
	var at typedLeaf
	if len(prefix) > 0 {
		at = prefix[0]
	}
	var out []typedLeaf
	for sf := range t.Fields() {
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		ft := sf.Type
		if sf.Anonymous {
			out = append(out, typedLeaves(ft, []typedLeaf{at})...)
			continue
		}
		if name == "sourceKind" || name == "otherFields" || name == "" {
			continue
		}
		list := false
		if ft.Kind() == reflect.Slice {
			list, ft = true, ft.Elem()
		}
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		next := typedLeaf{steps: append(slices.Clone(at.steps), name), inList: append(slices.Clone(at.inList), list)}
		switch {
		case ft == reflect.TypeFor[swv1.Decimal]():
			next.jsonType = "number"
		case ft.Kind() == reflect.Int64:
			next.jsonType = "integer"
		case ft.Kind() == reflect.Bool:
			next.jsonType = "boolean"
		case ft.Kind() == reflect.Struct:
			out = append(out, typedLeaves(ft, []typedLeaf{next})...)
			continue
		default:
			continue
		}
		if !list { // lists of scalars are lists of strings only
			out = append(out, next)
		}
	}
	return out
}

// readPipeWith reads a pipe named "kept" whose field f holds value.
func readPipeWith(t *testing.T, f typedLeaf, value string) (swv1.Pipe, lenient.Report) {
	t.Helper()
	doc := value
	for i, step := range slices.Backward(f.steps) {
		if f.inList[i] {
			doc = "[" + doc + "]"
		}
		doc = fmt.Sprintf(`{%q:%s}`, step, doc)
	}
	doc = `{"name":"kept",` + doc[1:]
	var p swv1.Pipe
	report, err := lenient.ReadPipe(lenient.NewStrict(), []byte(doc), &p)
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return p, report
}

// valueAt is the JSON of field f of p as status shows it ("" when absent).
func valueAt(t *testing.T, p swv1.Pipe, f typedLeaf) string {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	for i, s := range f.steps {
		m, _ := v.(map[string]any)
		v = m[s]
		if f.inList[i] {
			l, _ := v.([]any)
			if len(l) == 0 {
				return ""
			}
			v = l[0]
		}
	}
	if v == nil {
		return ""
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// The kinesis and pubsub sources decode themselves (so that a status of an
// earlier manager still decodes); a pipe of theirs still keeps what the
// types lack in otherFields, not nowhere.
func TestReadPipeKeepsUnknownMembersOfSelfDecodingSources(t *testing.T) {
	for _, kind := range []string{"kinesis", "pubsub"} {
		t.Run(kind, func(t *testing.T) {
			raw := fmt.Sprintf(`{"name":"kept","source":{%q:{"futureMember":"x"}}}`, kind)
			var p swv1.Pipe
			if _, err := lenient.ReadPipe(lenient.NewStrict(), []byte(raw), &p); err != nil {
				t.Fatal(err)
			}
			if want := "source." + kind + `.futureMember: "x"`; !slices.Contains(p.OtherFields, want) {
				t.Errorf("otherFields %q lack %q", p.OtherFields, want)
			}
		})
	}
}

// An alert keeps its numbers at their types the same way; an alert has no
// otherFields, so a value that does not convert is named as left out, and
// the alert is kept.
func TestReadAlertKeepsEveryFieldAtItsType(t *testing.T) {
	forms := map[string]struct{ spec, lossless, unusable, want string }{
		"integer": {spec: `3`, lossless: `"3"`, unusable: `"three"`, want: `3`},
		"number":  {spec: `12.25`, lossless: `"12.25"`, unusable: `"high"`, want: `12.25`},
	}
	fields := typedLeaves(reflect.TypeFor[swv1.AlertStatus](), nil)
	if len(fields) < 4 {
		t.Fatalf("%d typed alert fields, want threshold, thresholdMax and two integers at least", len(fields))
	}
	for _, f := range fields {
		form, ok := forms[f.jsonType]
		if !ok {
			t.Fatalf("%s: no forms for a %s", f.path(), f.jsonType)
		}
		for _, c := range []struct{ name, value, want string }{{"spec-typed", form.spec, form.want}, {"lossless", form.lossless, form.want}, {"unusable", form.unusable, ""}} {
			t.Run(f.path()+"/"+c.name, func(t *testing.T) {
				doc := fmt.Sprintf(`{"id":"a1",%q:%s}`, f.path(), c.value)
				a, leftOut := lenient.ReadAlert([]byte(doc))
				b, err := json.Marshal(a)
				if err != nil {
					t.Fatal(err)
				}
				var m map[string]json.RawMessage
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				if got := string(m[f.path()]); got != c.want {
					t.Errorf("status shows %q, want %q", got, c.want)
				}
				if wantLeftOut := c.want == ""; wantLeftOut != slices.Equal(leftOut, []string{f.path()}) {
					t.Errorf("left out %v", leftOut)
				}
				if a.ID != "a1" {
					t.Errorf("the alert lost its id: %s", b)
				}
			})
		}
	}
}
