package cloudapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
)

// Real services send more than the spec lists, and not always in the type it
// lists: a ninth kind of source, a scaling value as a Kubernetes quantity, a
// timestamp as a string. So an item of a list is not decoded with
// encoding/json, which fails the whole item (and with it the list) on one
// odd value, but read member by member against the api/v1alpha1 types:
//
//   - a member of a known field is read into it when its value can be used
//     as the field's type (numbers also from numeric strings, strings also
//     from numbers and booleans);
//   - a value that cannot be used is left out of its field, kept as sent in
//     the item's otherFields, and its path reported (itemReport);
//   - a member the types do not have is kept as sent in otherFields;
//   - null is absent, as before.
//
// Credential rules apply to everything read: a field or member named like a
// credential reads "<redacted>", a PEM private key reads "<redacted>", and
// URLs lose their user info and query (see sanitizeString).

// itemReader reads one item. Its zero value is not ready: use newItemReader.
type itemReader struct {
	other otherFields
	// leftOut are the paths of known fields whose value could not be used,
	// at most maxLeftOutPaths of them; leftOutCount counts them all.
	leftOut      []string
	leftOutCount int
	// kinds are the members of a pipe's source, in the order sent.
	kinds []string
}

// maxLeftOutPaths bounds the paths an item reports as left out.
const maxLeftOutPaths = 4

// itemReport says what of one item could not be read.
type itemReport struct {
	// leftOut are the first paths left out; count counts them all.
	leftOut []string
	count   int
}

func (r *itemReader) report() itemReport {
	return itemReport{leftOut: r.leftOut, count: r.leftOutCount}
}

// leaveOut records that the value raw of the known field at path could not
// be used, and keeps it as sent.
func (r *itemReader) leaveOut(path string, raw []byte) {
	r.leftOutCount++
	if len(r.leftOut) < maxLeftOutPaths {
		r.leftOut = append(r.leftOut, path)
	}
	r.other.add(path, raw)
}

// errNotObject: a list item that is not a JSON object cannot be read at all.
var errNotObject = errors.New("not a JSON object")

// readPipe reads one pipe of a list.
func readPipe(raw []byte) (swv1.Pipe, itemReport, error) {
	var p swv1.Pipe
	r := &itemReader{}
	if kindOf(raw) != '{' {
		return p, itemReport{}, errNotObject
	}
	r.object(reflect.ValueOf(&p).Elem(), raw, "")
	if len(r.kinds) > 0 {
		kind := truncateBytes(strings.Join(r.kinds, ","), maxSourceKindBytes)
		p.SourceKind = &kind
	}
	p.OtherFields = r.other.entries()
	return p, r.report(), nil
}

// maxSourceKindBytes bounds Pipe.SourceKind (its CRD MaxLength).
const maxSourceKindBytes = 256

// readEndpoint reads one reverse private endpoint of a list.
func readEndpoint(raw []byte) (swv1.ReversePrivateEndpoint, itemReport, error) {
	var e swv1.ReversePrivateEndpoint
	r := &itemReader{}
	if kindOf(raw) != '{' {
		return e, itemReport{}, errNotObject
	}
	r.object(reflect.ValueOf(&e).Elem(), raw, "")
	e.OtherFields = r.other.entries()
	return e, r.report(), nil
}

// kindOf returns the first byte of a JSON value: '{', '[', '"', 't', 'f',
// 'n', or a digit or '-' for a number; 0 for nothing.
func kindOf(raw []byte) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// object reads the JSON object raw into the struct v; path is v's path in
// the item ("" for the item itself).
func (r *itemReader) object(v reflect.Value, raw []byte, path string) {
	fields := schemaOf(v.Type())
	_ = eachMember(raw, func(name string, value json.RawMessage) {
		p := joinPath(path, name)
		if kindOf(value) == 'n' {
			return // null: absent
		}
		if v.Type() == pipeSourceType {
			r.kinds = append(r.kinds, name)
		}
		if hook := hookFor(v.Type(), name); hook != nil {
			hook(r, v, value, p)
			return
		}
		index, ok := fields[name]
		if !ok {
			r.other.add(p, value)
			return
		}
		r.field(v.FieldByIndex(index), name, value, p)
	})
}

// eachMember calls f for each member of the JSON object raw, in order. raw
// has been read as one valid JSON value by a decoder, so only the shape can
// surprise.
func eachMember(raw []byte, f func(name string, value json.RawMessage)) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return readObject(dec, func(name string) error {
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return err
		}
		f(name, value)
		return nil
	})
}

// eachElement calls f for each element of the JSON array raw, in order.
func eachElement(raw []byte, f func(i int, value json.RawMessage)) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // [
		return err
	}
	for i := 0; dec.More(); i++ {
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return err
		}
		f(i, value)
	}
	return nil
}

// field reads raw into the field v named name.
func (r *itemReader) field(v reflect.Value, name string, raw []byte, path string) {
	switch v.Kind() {
	case reflect.Pointer:
		r.pointer(v, name, raw, path)
	case reflect.Slice:
		r.slice(v, raw, path)
	default:
		// The schema holds only pointers and slices (every field is optional).
		r.leaveOut(path, raw)
	}
}

var (
	decimalType    = reflect.TypeFor[swv1.Decimal]()
	pipeSourceType = reflect.TypeFor[swv1.PipeSource]()
)

// pointer reads raw into the pointer field v.
func (r *itemReader) pointer(v reflect.Value, name string, raw []byte, path string) {
	elem := v.Type().Elem()
	var out reflect.Value
	switch {
	case elem == decimalType:
		d, ok := readDecimal(raw)
		if !ok {
			r.leaveOut(path, raw)
			return
		}
		out = reflect.ValueOf(&d)
	case elem.Kind() == reflect.String:
		s, ok := readString(raw)
		if !ok {
			r.leaveOut(path, raw)
			return
		}
		if isCredentialName(name) && s != "" {
			s = redacted
		}
		out = reflect.ValueOf(&s)
	case elem.Kind() == reflect.Int64:
		n, ok := readInt(raw)
		if !ok {
			r.leaveOut(path, raw)
			return
		}
		out = reflect.ValueOf(&n)
	case elem.Kind() == reflect.Bool:
		b, ok := readBool(raw)
		if !ok {
			r.leaveOut(path, raw)
			return
		}
		out = reflect.ValueOf(&b)
	case elem.Kind() == reflect.Struct:
		if kindOf(raw) != '{' {
			r.leaveOut(path, raw)
			return
		}
		out = reflect.New(elem)
		r.object(out.Elem(), raw, path)
	default:
		r.leaveOut(path, raw)
		return
	}
	v.Set(out)
}

// slice reads the JSON array raw into the slice field v. Elements that
// cannot be used are left out one by one; null elements are skipped.
func (r *itemReader) slice(v reflect.Value, raw []byte, path string) {
	r.sliceWithin(v, raw, path, -1)
}

// sliceWithin is slice keeping at most limit elements (< 0: all); the
// elements past it are counted in otherFields.
func (r *itemReader) sliceWithin(v reflect.Value, raw []byte, path string, limit int) {
	if kindOf(raw) != '[' {
		r.leaveOut(path, raw)
		return
	}
	elem := v.Type().Elem()
	out := reflect.MakeSlice(v.Type(), 0, 0)
	dropped := 0
	_ = eachElement(raw, func(i int, value json.RawMessage) {
		p := fmt.Sprintf("%s[%d]", path, i)
		if kindOf(value) == 'n' {
			return
		}
		if limit >= 0 && out.Len() >= limit {
			dropped++
			return
		}
		switch elem.Kind() {
		case reflect.String:
			s, ok := readString(value)
			if !ok {
				r.leaveOut(p, value)
				return
			}
			out = reflect.Append(out, reflect.ValueOf(s))
		case reflect.Struct:
			if kindOf(value) != '{' {
				r.leaveOut(p, value)
				return
			}
			item := reflect.New(elem).Elem()
			r.object(item, value, p)
			out = reflect.Append(out, item)
		default:
			r.leaveOut(p, value)
		}
	})
	if dropped > 0 {
		r.other.put(path, fmt.Sprintf("%d more not shown", dropped))
	}
	v.Set(out)
}

// memberKey names a member of a struct type.
type memberKey struct {
	t    reflect.Type
	name string
}

// memberHook reads a member that needs more than its field's type says. v is
// the struct the member belongs to.
type memberHook func(r *itemReader, v reflect.Value, raw []byte, path string)

// maxDNSMappings bounds ReversePrivateEndpoint.CustomPrivateDNSMappings (its
// CRD MaxItems).
const maxDNSMappings = 32

// hookFor returns how the member name of a struct of type t is read when
// its field's type is not enough to say; nil otherwise.
func hookFor(t reflect.Type, name string) memberHook {
	switch (memberKey{t, name}) {
	case memberKey{scalingType, "replicaCpuMillicores"}:
		return readCPUMember
	case memberKey{scalingType, "replicaMemoryGb"}:
		return readMemoryMember
	case memberKey{mongoDBType, "uri"}:
		return readMongoURIMember
	case memberKey{endpointType, "customPrivateDnsMappings"}:
		return readDNSMappingsMember
	}
	return nil
}

var (
	scalingType  = reflect.TypeFor[swv1.PipeScaling]()
	mongoDBType  = reflect.TypeFor[swv1.MongoDBSource]()
	endpointType = reflect.TypeFor[swv1.ReversePrivateEndpoint]()
)

// readCPUMember reads scaling.replicaCpuMillicores, also as a quantity.
func readCPUMember(r *itemReader, v reflect.Value, raw []byte, path string) {
	n, ok := readMillicores(raw)
	if !ok {
		r.leaveOut(path, raw)
		return
	}
	v.Addr().Interface().(*swv1.PipeScaling).ReplicaCPUMillicores = &n
}

// readMemoryMember reads scaling.replicaMemoryGb, also as a quantity.
func readMemoryMember(r *itemReader, v reflect.Value, raw []byte, path string) {
	d, ok := readGigabytes(raw)
	if !ok {
		r.leaveOut(path, raw)
		return
	}
	v.Addr().Interface().(*swv1.PipeScaling).ReplicaMemoryGb = &d
}

// readMongoURIMember reads the host and database of a MongoDB source's
// connection URI; the URI itself, which may hold a password, is not kept.
func readMongoURIMember(r *itemReader, v reflect.Value, raw []byte, path string) {
	s, ok := readRawString(raw)
	if !ok {
		// Whatever its shape, it may hold a password: not kept as sent.
		r.leaveOut(path, []byte(strconv.Quote(redacted)))
		return
	}
	src := v.Addr().Interface().(*swv1.MongoDBSource)
	host, database := mongoHostAndDatabase(s)
	if host != "" {
		src.Host = &host
	}
	if database != "" {
		src.Database = &database
	}
}

// readDNSMappingsMember reads an endpoint's customPrivateDnsMappings, at most
// maxDNSMappings of them.
func readDNSMappingsMember(r *itemReader, v reflect.Value, raw []byte, path string) {
	r.sliceWithin(v.FieldByName("CustomPrivateDNSMappings"), raw, path, maxDNSMappings)
}

// operatorFields are fields of the item types that the operator sets: a
// member of that name in the cloud's answer is not theirs, and is kept in
// otherFields like any other member the types do not have.
var operatorFields = map[string]bool{"sourceKind": true, "otherFields": true}

// schemas maps each struct type of the items to its fields by JSON name
// (through inline embedded structs). Built once, here, and never changed.
var schemas = buildSchemas(reflect.TypeFor[swv1.Pipe](), reflect.TypeFor[swv1.ReversePrivateEndpoint]())

func schemaOf(t reflect.Type) map[string][]int { return schemas[t] }

func buildSchemas(roots ...reflect.Type) map[reflect.Type]map[string][]int {
	out := map[reflect.Type]map[string][]int{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		if _, done := out[t]; done {
			return
		}
		fields := map[string][]int{}
		out[t] = fields
		var add func(t reflect.Type, prefix []int)
		add = func(t reflect.Type, prefix []int) {
			for i := range t.NumField() {
				f := t.Field(i)
				index := append(append([]int(nil), prefix...), i)
				name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
				if f.Anonymous && name == "" && strings.Contains(opts, "inline") {
					add(f.Type, index)
					continue
				}
				if name == "" || name == "-" || operatorFields[name] {
					continue
				}
				fields[name] = index
				ft := f.Type
				for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft)
				}
			}
		}
		add(t, nil)
	}
	for _, t := range roots {
		walk(t)
	}
	return out
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
