package slim

import (
	"encoding/json"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/servicewatch/servicewatch/internal/bound"
)

// meter sizes a typed item as if every list in it were cut to its first k
// entries: the bytes of its JSON as encoding/json writes it, and its decoded
// size as bound.GoSize counts it, without encoding or copying anything. It
// stops once either passes limit: a size past the target is not needed.
type meter struct {
	k     int
	limit int
	json  int
	heap  int // bound.GoSize
	// left counts, per list path, the entries the cut leaves out.
	left []int64
	// values counts the values visited, the work done.
	values int
	// longest is the longest list the walk met: when it is at most k,
	// the cut cuts nothing.
	longest int
	// written is how many members the struct sized last writes: once the
	// item is sized, the item's own.
	written int
}

// over reports whether the item no longer fits the limit.
func (m *meter) over() bool { return m.json > m.limit || m.heap > m.limit }

// value adds v's JSON and what it points to (its inline size is its
// parent's), returning false once over the limit.
func (m *meter) value(n *node, v reflect.Value) bool {
	m.values++
	switch n.kind {
	case kindScalar:
		m.json += scalarLen(v)
		if v.Kind() == reflect.String {
			m.heap += v.Len()
		}
	case kindPointer:
		if v.IsNil() {
			m.json += len("null")
			return true
		}
		m.heap += int(n.elem.typ.Size())
		return m.value(n.elem, v.Elem())
	case kindStruct:
		return m.object(n, v)
	case kindSlice:
		return m.list(n, v)
	case kindMap:
		return m.dict(n, v)
	default:
		m.other(v)
	}
	return !m.over()
}

// object adds a struct's members.
func (m *meter) object(n *node, v reflect.Value) bool {
	m.json += len("{}")
	written := 0
	for i := range n.fields {
		f := &n.fields[i]
		fv := v.FieldByIndex(f.index)
		if f.node.kind == kindSlice && m.k == 0 && fv.Len() > 0 {
			m.longest = max(m.longest, fv.Len())
			// Cut to nothing, a list is absent (cutter.list): null, or not
			// written at all.
			m.left[f.node.list] += int64(fv.Len())
			fv = reflect.Zero(fv.Type())
		}
		if !f.emitted(fv) {
			continue // empty or zero: nothing on the heap either
		}
		if written > 0 {
			m.json++ // the comma
		}
		written++
		m.json += f.nameBytes
		if !m.value(f.node, fv) {
			return false
		}
	}
	m.written = written
	return !m.over()
}

// list adds a slice's first k entries and counts the rest as left out.
func (m *meter) list(n *node, v reflect.Value) bool {
	if v.IsNil() {
		m.json += len("null")
		return true
	}
	kept := min(v.Len(), m.k)
	m.longest = max(m.longest, v.Len())
	m.left[n.list] += int64(v.Len() - kept)
	m.json += len("[]") + max(0, kept-1)
	m.heap += kept * int(n.elem.typ.Size())
	for i := range kept {
		if !m.value(n.elem, v.Index(i)) {
			return false
		}
	}
	return !m.over()
}

// dict adds a map of string keys, whole.
func (m *meter) dict(n *node, v reflect.Value) bool {
	if v.IsNil() {
		m.json += len("null")
		return true
	}
	m.json += len("{}") + max(0, v.Len()-1)
	m.heap += bound.MapBytes(v.Len(), int(n.typ.Key().Size()), int(n.elem.typ.Size()))
	for it := v.MapRange(); it.Next(); {
		key := it.Key().String()
		m.json += quotedLen(key) + 1
		m.heap += len(key)
		if !m.value(n.elem, it.Value()) {
			return false
		}
	}
	return !m.over()
}

// other sizes a value encoding/json writes its own way by encoding it
// (a decimal's few bytes, in practice).
func (m *meter) other(v reflect.Value) {
	raw, err := json.Marshal(v.Interface())
	if err != nil {
		m.json = m.limit + 1 // never fits: bound.Charge says the same
		return
	}
	m.json += len(raw)
	m.heap += bound.HeapSize(v)
}

// scalarLen is the length of a string, bool or integer in JSON.
func scalarLen(v reflect.Value) int {
	switch v.Kind() {
	case reflect.String:
		return quotedLen(v.String())
	case reflect.Bool:
		if v.Bool() {
			return len("true")
		}
		return len("false")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intLen(v.Int())
	default:
		return uintLen(v.Uint())
	}
}

func intLen(n int64) int {
	if n < 0 {
		return 1 + uintLen(uint64(-(n+1))+1)
	}
	return uintLen(uint64(n))
}

func uintLen(n uint64) int {
	var buf [20]byte
	return len(strconv.AppendUint(buf[:0], n, 10))
}

// quotedLen is the length of s as encoding/json writes it, quotes and
// escapes included (HTML-safe, as json.Marshal and a default Encoder).
func quotedLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += len(`\u0000`)
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += len(`\ufffd`)
		case r == '\u2028' || r == '\u2029':
			n += len(`\u2028`)
		default:
			n += size
		}
		i += size
	}
	return n
}
