package slim

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"time"
)

// A plan is an item type's shape as encoding/json writes it, by position:
// which members hold lists, at which JSON path, and how each member is
// omitted. Slimming reads the typed item through it, so that it can size
// and cut an item without encoding it (a round trip through JSON cost 7 to
// 15 times the decoding of the list). It is built once per Slimmer.
type node struct {
	typ    reflect.Type
	kind   nodeKind
	elem   *node   // pointer, slice: the element; map: the value
	fields []field // struct: the members encoding/json writes, in order
	// list is the index of a slice's JSON path in the plan's paths.
	list int
	// hasList: a list is at or below this node, so a cut may change it.
	hasList bool
	// lists are the indexes of the lists at or below this node: a cut that
	// left nothing out of them leaves it as it is.
	lists [2]int
}

type nodeKind uint8

const (
	kindScalar nodeKind = iota // string, bool, integer
	kindPointer
	kindStruct
	kindSlice
	kindMap // of string keys
	// kindOther is sized by encoding it (json.Marshaler, floats, anything
	// encoding/json writes its own way): none of it is ever cut.
	kindOther
)

// field is one member of a struct as encoding/json writes it.
type field struct {
	index []int // through embedded structs
	// nameBytes is the length of `"name":`.
	nameBytes int
	name      string
	omit      omitRule
	// isZeroer: the member's type says itself when it is zero (omitzero).
	isZeroer bool
	node     *node
}

type omitRule uint8

const (
	omitNever omitRule = iota
	omitEmpty
	omitZero
)

var (
	marshalerType = reflect.TypeFor[json.Marshaler]()
	isZeroerType  = reflect.TypeFor[interface{ IsZero() bool }]()
	timeType      = reflect.TypeFor[time.Time]()
)

// planner builds the plan of one item type.
type planner struct {
	paths []string       // JSON path of each list, by node.list
	stack []reflect.Type // types being planned: a recursive type is not cut
	// unplanned, when set, names the top-level members whose type is not
	// planned (a plan only of what BareCharge reads: the whole plan of a
	// pipe is a thousand allocations).
	unplanned func(name string) bool
}

// plan is the plan of t, whose JSON path is path.
func (p *planner) plan(t reflect.Type, path string) *node {
	n := &node{typ: t, list: -1}
	n.lists[0] = len(p.paths)
	defer func() { n.lists[1] = len(p.paths) }()
	if t == timeType || t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) || slices.Contains(p.stack, t) {
		n.kind = kindOther
		return n
	}
	p.stack = append(p.stack, t)
	defer func() { p.stack = p.stack[:len(p.stack)-1] }()
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n.kind = kindScalar
	case reflect.Pointer:
		n.kind, n.elem = kindPointer, p.plan(t.Elem(), path)
		n.hasList = n.elem.hasList
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 { // []byte is base64
			n.kind = kindOther
			break
		}
		n.kind, n.list, n.hasList = kindSlice, len(p.paths), true
		p.paths = append(p.paths, path)
		n.elem = p.plan(t.Elem(), path+"[]")
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			n.kind = kindOther
			break
		}
		n.kind, n.elem = kindMap, p.plan(t.Elem(), path+"{}")
		n.elem.hasList = false // a map's values are never cut
	case reflect.Struct:
		n.kind, n.fields = kindStruct, p.fields(t, path)
		for _, f := range n.fields {
			n.hasList = n.hasList || f.node.hasList
		}
	default:
		n.kind = kindOther
	}
	return n
}

// fields are the members encoding/json writes of struct t: exported fields
// by their JSON names, embedded structs without a name inlined, and of
// several members with one name the shallowest, if it is alone at its
// depth (encoding/json's rule without its tie-break by tags).
func (p *planner) fields(t reflect.Type, path string) []field {
	type candidate struct {
		field
		depth int
	}
	var all []candidate
	var walk func(t reflect.Type, index []int)
	walk = func(t reflect.Type, index []int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			at := append(slices.Clone(index), i)
			if sf.Anonymous && name == "" && sf.Type.Kind() == reflect.Struct {
				walk(sf.Type, at)
				continue
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			rule := omitNever
			for o := range strings.SplitSeq(opts, ",") {
				switch o {
				case "omitempty":
					rule = max(rule, omitEmpty)
				case "omitzero":
					rule = omitZero
				}
			}
			all = append(all, candidate{field: field{index: at, name: name, nameBytes: quotedLen(name) + 1, omit: rule}, depth: len(at)})
		}
	}
	walk(t, nil)
	var out []field
	for i, c := range all {
		shadowed := false
		for j, d := range all {
			if i != j && d.name == c.name && (d.depth < c.depth || d.depth == c.depth) {
				shadowed = true
			}
		}
		if !shadowed {
			ft := t.FieldByIndex(c.index).Type
			c.isZeroer = ft.Implements(isZeroerType)
			if path == "" && p.unplanned != nil && p.unplanned(c.name) {
				c.node = &node{typ: ft, kind: kindOther, list: -1}
			} else {
				c.node = p.plan(ft, join(path, c.name))
			}
			out = append(out, c.field)
		}
	}
	// encoding/json writes fields in the order of their index sequences.
	slices.SortStableFunc(out, func(a, b field) int { return slices.Compare(a.index, b.index) })
	return out
}

// emitted reports whether encoding/json writes member f of value v.
func (f *field) emitted(v reflect.Value) bool {
	switch f.omit {
	case omitEmpty:
		switch v.Kind() {
		case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
			reflect.Float32, reflect.Float64, reflect.Pointer, reflect.Interface:
			return !v.IsZero()
		case reflect.String, reflect.Slice, reflect.Map, reflect.Array:
			return v.Len() > 0
		}
		return true
	case omitZero:
		if f.isZeroer && (v.Kind() != reflect.Pointer || !v.IsNil()) {
			z, _ := reflect.TypeAssert[interface{ IsZero() bool }](v)
			return !z.IsZero()
		}
		return !v.IsZero()
	}
	return true
}

// join is the JSON path of member name under path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
