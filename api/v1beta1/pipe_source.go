package v1beta1

import (
	"reflect"
	"strings"
)

// The kinds of pipe source are the members of PipeSource, derived from the
// type: a member added to PipeSource is a known kind, named in sourceKind
// and in the state metrics' source_kind label, with no list to edit
// elsewhere.

// PipeSourceKinds are the kinds of source the operator knows: the JSON names
// of PipeSource's members, in the type's order.
func PipeSourceKinds() []string {
	t := reflect.TypeFor[PipeSource]()
	kinds := make([]string, t.NumField())
	for i := range kinds {
		kinds[i] = jsonName(t.Field(i))
	}
	return kinds
}

// Kinds names the members the source has, in the order of PipeSource (see
// PipeSourceKinds); none for a nil source.
func (s *PipeSource) Kinds() []string {
	if s == nil {
		return nil
	}
	v := reflect.ValueOf(s).Elem()
	var kinds []string
	for i := range v.NumField() {
		if !v.Field(i).IsNil() {
			kinds = append(kinds, jsonName(v.Type().Field(i)))
		}
	}
	return kinds
}

// jsonName is the name a struct field has in JSON.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}
