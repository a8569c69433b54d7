package v1beta1

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// Every member of PipeSource is a known kind, named as the cloud names it
// (its JSON member), in the type's order; a source with one member set names
// that member, and only it. A member the derived list did not know would get
// no sourceKind.
func TestEveryPipeSourceMemberIsAKnownKind(t *testing.T) {
	typ := reflect.TypeFor[PipeSource]()
	kinds := PipeSourceKinds()
	if len(kinds) != typ.NumField() {
		t.Fatalf("PipeSourceKinds() = %v: %d kinds for the %d members of PipeSource", kinds, len(kinds), typ.NumField())
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		src := &PipeSource{}
		reflect.ValueOf(src).Elem().Field(i).Set(reflect.New(f.Type.Elem()))
		raw, _ := json.Marshal(src) // a struct of pointers to structs: no error
		var members map[string]json.RawMessage
		if err := json.Unmarshal(raw, &members); err != nil {
			t.Fatal(err)
		}
		if len(members) != 1 {
			t.Fatalf("PipeSource with only %s set marshals as %s, want one member", f.Name, raw)
		}
		for member := range members {
			if kinds[i] != member {
				t.Errorf("member %d of PipeSource (%s) is %q in JSON, PipeSourceKinds() names it %q", i, f.Name, member, kinds[i])
			}
			if got := src.Kinds(); !slices.Equal(got, []string{member}) {
				t.Errorf("a source with only %s set has Kinds() %v, want [%s]", f.Name, got, member)
			}
		}
	}
	if got := (*PipeSource)(nil).Kinds(); got != nil {
		t.Errorf("a nil source has kinds %v, want none", got)
	}
}
