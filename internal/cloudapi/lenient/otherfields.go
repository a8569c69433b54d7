package lenient

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
)

// Bounds of an item's otherFields (see swv1.Pipe.OtherFields, which
// documents them to users, and its CRD markers).
const (
	maxOtherFields     = 16
	maxOtherFieldBytes = 256
)

// otherFields collects what an item holds that has no typed field, flattened
// to "path: value" entries, within the bounds above.
type otherFields struct {
	list []string
	more bool // entries were left out for want of room
}

// entries returns the collected entries, nil when there are none, with a
// last entry saying so when some were left out.
func (o *otherFields) entries() []string {
	if o.more {
		return append(o.list, "… more fields not shown")
	}
	return o.list
}

// put adds one entry whose value is already rendered.
func (o *otherFields) put(path, value string) {
	if len(o.list) >= maxOtherFields {
		o.more = true
		return
	}
	o.list = append(o.list, bound.Cut(path+": "+value, maxOtherFieldBytes))
}

// add flattens the JSON value raw found at path into entries. A member named
// like a credential is one "<redacted>" entry, never descended into; null
// adds nothing.
func (o *otherFields) add(path string, raw []byte) {
	if len(o.list) >= maxOtherFields {
		o.more = true
		return
	}
	if isCredentialMember(lastSegment(path)) {
		if FirstByte(raw) != 'n' {
			o.put(path, quoteValue(redact.Placeholder))
		}
		return
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	_ = o.walk(dec, path)
}

// isCredentialMember reports whether the member name, as sent or as shown
// (redact.Name), holds a credential: a name that is itself one pairs with
// a value that is one too.
func isCredentialMember(name string) bool {
	return name == redact.Placeholder || redact.IsCredentialName(name) || redact.Name(name) == redact.Placeholder
}

// unknown keeps the member name of a struct of type t, at path, which the
// types lack, in otherFields; a member of a pipe's source also names a kind
// of source. The name shows as redact.Name shows it: a name can carry a
// credential (a URL with user info, a token) as well as a value can.
func (r *itemReader) unknown(t reflect.Type, path, name string, raw []byte) {
	shown := redact.Name(name)
	if t == pipeSourceType {
		r.unknownKinds = append(r.unknownKinds, shown)
	}
	r.other.add(joinPath(path, shown), raw)
}

// fullError stops a walk once no entry fits any more.
type fullError struct{}

func (fullError) Error() string { return "otherFields full" }

// walk flattens the next value of dec, token by token, so that a large value
// costs no more memory than its tokens, and stops once no entry fits.
func (o *otherFields) walk(dec *json.Decoder, path string) error {
	if len(o.list) >= maxOtherFields {
		o.more = true
		return fullError{}
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return o.walkObject(dec, path)
		}
		return o.walkArray(dec, path)
	case string:
		o.put(path, quoteValue(redact.Value(t)))
	case json.Number:
		o.put(path, t.String())
	case bool:
		o.put(path, strconv.FormatBool(t))
	}
	return nil // null: left out
}

func (o *otherFields) walkObject(dec *json.Decoder, path string) error {
	empty := true
	for dec.More() {
		empty = false
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		p := joinPath(path, redact.Name(name))
		if isCredentialMember(name) {
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return err
			}
			if FirstByte(v) != 'n' {
				o.put(p, quoteValue(redact.Placeholder))
			}
			continue
		}
		if err := o.walk(dec, p); err != nil {
			return err
		}
	}
	if empty {
		o.put(path, "{}")
	}
	_, err := dec.Token()
	return err
}

func (o *otherFields) walkArray(dec *json.Decoder, path string) error {
	i := 0
	for ; dec.More(); i++ {
		if err := o.walk(dec, path+"["+strconv.Itoa(i)+"]"); err != nil {
			return err
		}
	}
	if i == 0 {
		o.put(path, "[]")
	}
	_, err := dec.Token()
	return err
}

// quoteValue renders a string as JSON (quoted, control characters escaped,
// but <, > and & as they are: the entry is read by people, not by browsers).
func quoteValue(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return strconv.Quote(s)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func lastSegment(path string) string {
	path = strings.TrimRight(path, "]0123456789[")
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}
