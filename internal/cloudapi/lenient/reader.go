package lenient

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
)

// Real services send more than the spec lists, and not always in the type it
// lists: a ninth kind of source, a scaling value as a Kubernetes quantity, a
// timestamp as a string, an alert's team under a new name. So an item of a
// list, and an alert (alert.go, with its own itemRules), is not decoded with
// encoding/json, which fails the whole item (and with it the list) on one
// odd value, but read member by member against the api/v1beta1 types:
//
//   - a member of a known field is read into it when its value can be used
//     as the field's type (numbers also from numeric strings; a list
//     item's strings also from numbers and booleans);
//   - a value that cannot be used is left out of its field, kept as sent in
//     the item's otherFields, and its path reported (Report);
//   - a member the types do not have is kept as sent in otherFields;
//   - null is absent, as before.
//
// Credential rules apply to everything a list item holds: a field or member
// named like a credential reads "<redacted>", a PEM private key reads
// "<redacted>", and URLs lose their user info and query (see
// redact.Value); so do the member names kept in otherFields and sourceKind
// (redact.Name). An alert keeps no member it does not know, and its
// strings are scrubbed by the cloud client, which knows the call's token.

// itemRules are what differs between the kinds of item one itemReader reads.
type itemRules struct {
	// maxLeftOut bounds the paths an item reports as left out.
	maxLeftOut int
	// onlyStringsAreStrings: a string field takes a JSON string only, not a
	// number's or a boolean's text.
	onlyStringsAreStrings bool
	// inFieldOrder: an object's members are read in the order of its type's
	// fields (so that what is left out is named in an order the server's
	// member order cannot change), and members the types do not have are
	// not read at all; otherwise in the order sent, the others kept in
	// otherFields.
	inFieldOrder bool
}

// listItemRules read the items of the management API's lists.
var listItemRules = itemRules{maxLeftOut: 4}

// itemReader reads one item.
type itemReader struct {
	rules itemRules
	// work counts what reading the item costs (see Work); nil for an alert
	// read alone (ReadAlert), the list's for an alert of a list.
	work  *Work
	other otherFields
	// leftOut are the paths of known fields whose value could not be used,
	// at most rules.maxLeftOut of them; leftOutCount counts them all.
	leftOut      []string
	leftOutCount int
	// unknownKinds are the members of a pipe's source the types do not
	// have, in the order sent.
	unknownKinds []string
}

// Report says what of one item could not be read, and what the item
// holds beyond its types.
type Report struct {
	// LeftOut are the first paths of the known fields whose values were left
	// out (at most 4); Count counts them all.
	LeftOut []string
	Count   int
	// other are the item's otherFields.
	other []string
	// unknownKinds are the members of a pipe's source the types lack.
	unknownKinds []string
}

func (r *itemReader) report() Report {
	return Report{LeftOut: r.leftOut, Count: r.leftOutCount, unknownKinds: r.unknownKinds}
}

// leaveOut records that the value raw of the known field at path could not
// be used, and keeps it as sent.
func (r *itemReader) leaveOut(path string, raw []byte) {
	_ = r.work.Charge(FlattenByteWork*len(raw) + MemberWork) // a spent budget fails the item once it is read
	r.leftOutCount++
	if len(r.leftOut) < r.rules.maxLeftOut {
		r.leftOut = append(r.leftOut, path)
	}
	r.other.add(path, raw)
}

// ErrNotObject is the error of an item that is not a JSON object: it cannot
// be read at all.
var ErrNotObject = errors.New("not a JSON object")

// ReadPipe reads one pipe of a list, raw, with strict, into p (which it
// clears first: a list reads all its items into one value, rather than
// allocating each): its values that cannot be used are left out, kept as
// sent in its otherFields and named in the Report; its credentials are
// redacted, and every string it holds is scrubbed of the call's own
// credential (see NewStrictFor); its sourceKind names the kinds of its
// source. It fails with ErrWorkBudget once the list's work budget is spent.
func ReadPipe(strict *Strict, raw []byte, p *swv1.Pipe) (Report, error) {
	report, err := readItem(strict, raw, p, func(p *swv1.Pipe) bool {
		return p.SourceKind != nil || p.OtherFields != nil || p.Omitted != nil || lostBySelfDecodingSource(p, raw) || hasMongoURI(p)
	})
	if err != nil {
		return report, err
	}
	if kinds := sourceKinds(p.Source, report.unknownKinds); kinds != "" {
		kinds = strict.scrubbed(kinds, maxSourceKindBytes)
		p.SourceKind = &kinds
	}
	p.OtherFields = report.other
	return report, strict.work.Charge(0)
}

// lostBySelfDecodingSource reports whether the strict decode of the pipe
// raw, which read into p, may have lost a value of a source whose type
// decodes itself (api/v1beta1's earlier_forms.go): that decoder reads a
// string integer as absent and ignores members it lacks, as a client reading
// a stored status must, so the strict decode cannot tell. A scan of that
// source's members can: a member the type lacks, or its integer sent as a
// string. Such a pipe is read member by member, which converts a numeric
// string and keeps any other value, and any unknown member, in otherFields.
func lostBySelfDecodingSource(p *swv1.Pipe, raw []byte) bool {
	if p.Source == nil || (p.Source.Kinesis == nil && p.Source.PubSub == nil) {
		return false
	}
	lost := false
	_ = eachMember(raw, func(name string, value json.RawMessage) {
		if name != "source" || FirstByte(value) != '{' {
			return
		}
		_ = eachMember(value, func(kind string, src json.RawMessage) {
			t, integer := selfDecodingSource(kind)
			if t == nil || FirstByte(src) != '{' {
				return
			}
			_ = eachMember(src, func(member string, v json.RawMessage) {
				if _, known := schemas[t].fields[member]; !known || (member == integer && FirstByte(v) == '"') {
					lost = true
				}
			})
		})
	})
	return lost
}

// hasMongoURI reports whether p has a document-database source with a
// connection URI: its host and database are read from the URI as sent, by
// the member's hook (readMongoURIMember), which only the member-by-member
// read runs; the strict decode would show the URI alone.
func hasMongoURI(p *swv1.Pipe) bool {
	return p.Source != nil && p.Source.MongoDB != nil && p.Source.MongoDB.URI != nil
}

// selfDecodingSource is the type of the source member kind when that type
// decodes itself, and the name of the integer it reads as absent when sent
// as a string; nil otherwise.
func selfDecodingSource(kind string) (t reflect.Type, integer string) {
	switch kind {
	case "kinesis":
		return kinesisType, "timestamp"
	case "pubsub":
		return pubSubType, "ackDeadline"
	}
	return nil, ""
}

var (
	kinesisType = reflect.TypeFor[swv1.KinesisSource]()
	pubSubType  = reflect.TypeFor[swv1.PubSubSource]()
)

// ReadEndpoint reads one reverse private endpoint of a list, raw, with
// strict, into e, as ReadPipe reads a pipe.
func ReadEndpoint(strict *Strict, raw []byte, e *swv1.ReversePrivateEndpoint) (Report, error) {
	report, err := readItem(strict, raw, e, func(e *swv1.ReversePrivateEndpoint) bool { return e.OtherFields != nil || e.Omitted != nil })
	e.OtherFields = report.other
	if err == nil {
		err = strict.work.Charge(0)
	}
	return report, err
}

// readItem reads one item into item, which it clears first. Most items are
// what the types say, and a strict decode (no member the types lack, every
// value of its field's type) reads them at the speed of encoding/json; any
// other item is read member by member. Either way, the credential rules are
// applied to the result in one place, redactStrings, and the entries of its
// otherFields are scrubbed like its strings.
// setsOperatorFields reports whether a strict decode put a value in one of
// the operator's own fields (then the cloud sent a member of that name,
// which is not the operator's and is read member by member into otherFields)
// or may have left out a value it could not use: then the item is read
// member by member too.
func readItem[T any](strict *Strict, raw []byte, item *T, setsOperatorFields func(*T) bool) (Report, error) {
	var zero T
	*item = zero
	if FirstByte(raw) != '{' {
		return Report{}, ErrNotObject
	}
	if err := strict.decode(raw, item); err == nil && !setsOperatorFields(item) {
		strict.redactStrings(reflect.ValueOf(item).Elem(), false)
		return Report{}, nil
	}
	*item = zero
	r := &itemReader{rules: listItemRules, work: strict.work}
	r.object(reflect.ValueOf(item).Elem(), raw, "")
	strict.redactStrings(reflect.ValueOf(item).Elem(), false)
	report := r.report()
	report.other = r.other.entries()
	for i, entry := range report.other {
		report.other[i] = strict.scrubbed(entry, maxOtherFieldBytes)
	}
	for i, path := range report.LeftOut {
		report.LeftOut[i] = strict.scrubbed(path, math.MaxInt)
	}
	return report, nil
}

// Strict decodes the items of one list strictly, one after the other,
// with one json.Decoder: a decoder per item would cost an allocation of its
// buffer each, which a list of millions of tiny items pays millions of times.
//
// It also carries what every item of the list is read with: the scrubber of
// the call's credential, and the list's work budget.
type Strict struct {
	feed  feed
	dec   *json.Decoder
	scrub *redact.Scrubber
	work  *Work
}

// NewStrict returns a Strict for the items of one list, which scrubs no
// credential of its own and has no work budget.
func NewStrict() *Strict { return NewStrictFor(nil, nil) }

// NewStrictFor returns a Strict for the items of one list read with the
// credential scrub finds (nil: none): every string an item holds, its
// otherFields and the paths its Report names included, is scrubbed of it in
// any encoding the scrubber knows (raw, JSON-escaped, the base64 of an
// Authorization header). The reading and the scrubbing are charged to
// work (nil: unbounded).
func NewStrictFor(scrub *redact.Scrubber, work *Work) *Strict {
	s := &Strict{scrub: scrub, work: work}
	s.dec = json.NewDecoder(&s.feed)
	s.dec.DisallowUnknownFields()
	return s
}

// scrubbed is text scrubbed of the call's credential and cut back to n
// bytes, which "<redacted>" may have pushed it past.
func (s *Strict) scrubbed(text string, n int) string {
	if s.scrub == nil || text == "" {
		return text
	}
	_ = s.work.Charge(len(text) + scrubCallWork) // a spent budget fails the item once it is read
	if head, cut := strings.CutSuffix(text, bound.Ellipsis); cut {
		// Cut by the reader: its end may be the start of a secret, which
		// the scrubber finds at the end of a text only.
		return bound.Cut(s.scrub.Redact(head)+bound.Ellipsis, n)
	}
	clean := s.scrub.Redact(text)
	if clean == text {
		return bound.Cut(text, n) // the common case: one scan, no copy
	}
	// Whole as the cloud sent it: its end is no secret's start ("vpce-0fake"
	// is not the start of the key "fake-key-id"). A NUL, which no
	// credential holds, ends the text for the scrubber.
	return bound.Cut(strings.TrimSuffix(s.scrub.Redact(text+"\x00"), "\x00"), n)
}

// scrubCallWork is what one call of the scrubber costs beyond the bytes it
// reads.
const scrubCallWork = 16

// decode decodes raw, one complete JSON object (the list's decoder read it
// as such), into v, refusing members v does not have. The decoder reads a
// value to its end before it decodes it, and knows an object has ended at
// its closing brace, so it has consumed all of raw whether it succeeds or
// not, and asks for nothing more: the feed never has to say EOF, which would
// end the decoder for good. (A number, which ends only where something else
// begins, could not be decoded so; readItem passes objects alone.)
func (s *Strict) decode(raw []byte, v any) error {
	s.feed.b = raw
	err := s.dec.Decode(v)
	s.feed.b = nil
	return err
}

// feed hands out the bytes it holds.
type feed struct{ b []byte }

func (f *feed) Read(p []byte) (int, error) {
	if len(f.b) == 0 {
		return 0, io.ErrNoProgress // never asked for: see Strict.decode
	}
	n := copy(p, f.b)
	f.b = f.b[n:]
	return n, nil
}

// sourceKinds names the members of a pipe's source: the known ones present,
// in the order of swv1.PipeSource (swv1.PipeSourceKinds, derived from the
// type), then those of kinds the operator does not know, in the order sent;
// joined by commas, bounded.
func sourceKinds(src *swv1.PipeSource, unknown []string) string {
	kinds := append(src.Kinds(), unknown...)
	return bound.Cut(strings.Join(kinds, ","), maxSourceKindBytes)
}

// maxSourceKindBytes bounds Pipe.SourceKind (its CRD MaxLength).
const maxSourceKindBytes = 256

// redactStrings applies the credential rules to every string of the struct
// v: a non-empty field named like a credential reads "<redacted>", and every
// other string is sanitized (see redact.Value) and scrubbed of the call's
// credential. The operator's own fields are left alone: otherFields is
// built by those same rules, and scrubbed by readItem.
func (s *Strict) redactStrings(v reflect.Value, credential bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			s.redactStrings(v.Elem(), credential)
		}
	case reflect.Struct:
		for _, f := range stringFields[v.Type()] {
			s.redactStrings(v.Field(f.index), f.credential)
		}
	case reflect.Slice:
		for i := range v.Len() {
			s.redactStrings(v.Index(i), credential)
		}
	case reflect.String:
		if v.Type() == decimalType {
			return
		}
		text := v.String()
		switch {
		case credential && text != "":
			v.SetString(redact.Placeholder)
		default:
			// A value's length is the cloud's (the CRD bounds none of these
			// strings): the scrubber's placeholder needs no cut.
			if clean := s.scrubbed(redact.Value(text), math.MaxInt); clean != text {
				v.SetString(clean)
			}
		}
	}
}

// stringField is a field of a struct that holds strings, directly or below.
type stringField struct {
	index int
	// credential: the field is named like a credential.
	credential bool
}

// stringFields maps each struct type of the items to its fields that hold
// strings, the operator's own left out. Built once, here, and never changed.
var stringFields = buildStringFields(reflect.TypeFor[swv1.Pipe](), reflect.TypeFor[swv1.ReversePrivateEndpoint]())

func buildStringFields(roots ...reflect.Type) map[reflect.Type][]stringField {
	out := map[reflect.Type][]stringField{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		if _, done := out[t]; done {
			return
		}
		out[t] = nil
		var fields []stringField
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if operatorFields[name] {
				continue
			}
			ft := f.Type
			for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
				ft = ft.Elem()
			}
			switch ft.Kind() {
			case reflect.Struct:
				walk(ft)
			case reflect.String:
			default:
				continue
			}
			fields = append(fields, stringField{index: i, credential: redact.IsCredentialName(name)})
		}
		out[t] = fields
	}
	for _, t := range roots {
		walk(t)
	}
	return out
}

// object reads the JSON object raw into the struct v; path is v's path in
// the item ("" for the item itself).
func (r *itemReader) object(v reflect.Value, raw []byte, path string) {
	// Each nested object is scanned again: charged again.
	if r.work.Charge(ObjectByteWork*len(raw)) != nil {
		return
	}
	if !r.rules.inFieldOrder {
		_ = eachMember(raw, func(name string, value json.RawMessage) { r.member(v, name, value, path) })
		return
	}
	members, _ := Object(raw)
	for _, name := range schemas[v.Type()].order {
		if value, sent := members[name]; sent {
			r.member(v, name, value, path)
		}
	}
}

// member reads the member name of the struct v, of value raw.
func (r *itemReader) member(v reflect.Value, name string, raw []byte, path string) {
	if r.work.Charge(MemberWork) != nil {
		return // the item fails as a whole (see ReadPipe)
	}
	p := joinPath(path, name)
	if FirstByte(raw) == 'n' {
		return // null: absent
	}
	if hook := hookFor(v.Type(), name); hook != nil {
		hook(r, v, raw, p)
		return
	}
	index, ok := schemas[v.Type()].fields[name]
	if !ok {
		_ = r.work.Charge(FlattenByteWork * len(raw)) // flattened into otherFields: scanned once more
		r.unknown(v.Type(), path, name, raw)
		return
	}
	r.field(v.FieldByIndex(index), raw, p)
}

// str reads a string field by the reader's rules.
func (r *itemReader) str(raw []byte) (string, bool) {
	if r.rules.onlyStringsAreStrings {
		return String(raw)
	}
	return readString(raw)
}

// field reads raw into the field v.
func (r *itemReader) field(v reflect.Value, raw []byte, path string) {
	switch v.Kind() {
	case reflect.Pointer:
		r.pointer(v, raw, path)
	case reflect.Slice:
		r.slice(v, raw, path)
	case reflect.String: // a required string, such as an alert's id
		s, ok := r.str(raw)
		if !ok {
			r.leaveOut(path, raw)
			return
		}
		v.SetString(s)
	default:
		r.leaveOut(path, raw)
	}
}

var (
	decimalType    = reflect.TypeFor[swv1.Decimal]()
	pipeSourceType = reflect.TypeFor[swv1.PipeSource]()
)

// pointer reads raw into the pointer field v.
func (r *itemReader) pointer(v reflect.Value, raw []byte, path string) {
	elem := v.Type().Elem()
	out := reflect.New(elem)
	var ok bool
	switch {
	case elem == decimalType:
		var d swv1.Decimal
		d, ok = readDecimal(raw)
		out.Elem().SetString(string(d))
	case elem.Kind() == reflect.String:
		var s string
		s, ok = r.str(raw)
		out.Elem().SetString(s)
	case elem.Kind() == reflect.Int64:
		var n int64
		n, ok = readInt(raw)
		out.Elem().SetInt(n)
	case elem.Kind() == reflect.Bool:
		var b bool
		b, ok = readBool(raw)
		out.Elem().SetBool(b)
	case elem.Kind() == reflect.Struct:
		ok = FirstByte(raw) == '{'
		if ok {
			r.object(out.Elem(), raw, path)
		}
	default:
		ok = false
	}
	if !ok {
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
	if FirstByte(raw) != '[' {
		r.leaveOut(path, raw)
		return
	}
	elem := v.Type().Elem()
	out := reflect.MakeSlice(v.Type(), 0, 0)
	dropped := 0
	_ = eachElement(raw, func(i int, value json.RawMessage) {
		p := fmt.Sprintf("%s[%d]", path, i)
		if FirstByte(value) == 'n' {
			return
		}
		if limit >= 0 && out.Len() >= limit {
			dropped++
			return
		}
		switch elem.Kind() {
		case reflect.String:
			s, ok := r.str(value)
			if !ok {
				r.leaveOut(p, value)
				return
			}
			out = reflect.Append(out, reflect.ValueOf(s))
		case reflect.Struct:
			if FirstByte(value) != '{' {
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
	return alertHookFor(t, name)
}

var (
	scalingType  = reflect.TypeFor[swv1.PipeScaling]()
	mongoDBType  = reflect.TypeFor[swv1.MongoDBSource]()
	endpointType = reflect.TypeFor[swv1.ReversePrivateEndpoint]()
)

// Hooks that read a member with a reader of its own. Built once, here, and
// never changed.
var (
	// readCPUMember reads scaling.replicaCpuMillicores, also as a quantity.
	readCPUMember = readInto("replicaCpuMillicores", readMillicores, true)
	// readMemoryMember reads scaling.replicaMemoryGb, also as a quantity.
	readMemoryMember = readInto("replicaMemoryGb", readGigabytes, true)
)

// readInto returns a hook that reads a member with read into the pointer
// field whose JSON name is field (of the struct the member belongs to), or
// leaves it out when read cannot use it. A member that does not win (see
// renamedAlertMembers) only fills the field while nothing else has.
func readInto[V any](field string, read func([]byte) (V, bool), wins bool) memberHook {
	return func(r *itemReader, v reflect.Value, raw []byte, path string) {
		value, ok := read(raw)
		if !ok {
			r.leaveOut(path, raw)
			return
		}
		dst := v.FieldByIndex(schemas[v.Type()].fields[field])
		if wins || dst.IsNil() {
			dst.Set(reflect.ValueOf(&value))
		}
	}
}

// readMongoURIMember reads a MongoDB source's connection URI, and its host
// and database on their own. The URI may hold a password: it is kept here as
// sent, and scrubbed with every other string of the item (see readItem).
func readMongoURIMember(r *itemReader, v reflect.Value, raw []byte, path string) {
	s, ok := String(raw)
	if !ok {
		// Whatever its shape, it may hold a password: not kept as sent.
		r.leaveOut(path, []byte(strconv.Quote(redact.Placeholder)))
		return
	}
	src, isMongoDB := reflect.TypeAssert[*swv1.MongoDBSource](v.Addr())
	if !isMongoDB {
		return
	}
	src.URI = &s
	host, database := redact.MongoHostAndDatabase(s)
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

// operatorFields are fields of the item types that the operator sets (a
// pipe's sourceKind, an item's otherFields, omitted and since, an alert's
// error): a
// member of that name in the cloud's answer is not theirs, and is kept in
// otherFields like any other member the types do not have (an alert keeps
// none).
var operatorFields = map[string]bool{"sourceKind": true, "otherFields": true, "error": true, "omitted": true, "since": true}

// schema is a struct type's members: its fields by JSON name (through
// inline embedded structs), and the names to read, in the order of the
// fields, each field's other names (see otherNamesOf) before its own.
type schema struct {
	fields map[string][]int
	order  []string
}

// schemas maps each struct type of the items to its schema. Built once,
// here, and never changed.
var schemas = buildSchemas(reflect.TypeFor[swv1.Pipe](), reflect.TypeFor[swv1.ReversePrivateEndpoint](), reflect.TypeFor[swv1.AlertStatus]())

func buildSchemas(roots ...reflect.Type) map[reflect.Type]*schema {
	out := map[reflect.Type]*schema{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		if _, done := out[t]; done {
			return
		}
		fields := map[string][]int{}
		sc := &schema{fields: fields}
		out[t] = sc
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
				sc.order = append(sc.order, otherNamesOf(t, name)...)
				sc.order = append(sc.order, name)
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
