package slim

import "reflect"

// cutter copies a typed item with every list cut to its first k entries,
// sharing with the original what it does not change: a list is resliced,
// and only the structs and pointers on the way to a cut list are copied.
type cutter struct {
	k int
	// left counts, per list, what the cut leaves out (meter.left).
	left []int64
	// values counts the values copied or looked at, the work done.
	values int
}

// value returns v cut, and whether that changed it.
func (c *cutter) value(n *node, v reflect.Value) (reflect.Value, bool) {
	if !n.hasList || !c.cuts(n.lists[0], n.lists[1]) {
		return v, false
	}
	c.values++
	switch n.kind {
	case kindPointer:
		if v.IsNil() {
			return v, false
		}
		elem, changed := c.value(n.elem, v.Elem())
		if !changed {
			return v, false
		}
		p := reflect.New(n.elem.typ)
		p.Elem().Set(elem)
		return p, true
	case kindStruct:
		return c.object(n, v)
	case kindSlice:
		return c.list(n, v)
	}
	return v, false
}

// object copies a struct whose members' lists were cut.
func (c *cutter) object(n *node, v reflect.Value) (reflect.Value, bool) {
	var out reflect.Value // a copy, once a member changed
	for i := range n.fields {
		f := &n.fields[i]
		member, changed := c.value(f.node, v.FieldByIndex(f.index))
		if !changed {
			continue
		}
		if !out.IsValid() {
			out = reflect.New(n.typ).Elem()
			out.Set(v)
		}
		out.FieldByIndex(f.index).Set(member)
	}
	if !out.IsValid() {
		return v, false
	}
	return out, true
}

// list is a slice's first k entries, each cut. An entry that changed makes
// the kept entries a new slice; else they are the old one's, resliced so
// that an append cannot write into it.
func (c *cutter) list(n *node, v reflect.Value) (reflect.Value, bool) {
	if v.IsNil() {
		return v, false
	}
	kept := min(v.Len(), c.k)
	var out reflect.Value
	for i := range kept * btoi(c.cuts(n.elem.lists[0], n.elem.lists[1])) {
		entry, changed := c.value(n.elem, v.Index(i))
		if !changed {
			continue
		}
		if !out.IsValid() {
			out = reflect.MakeSlice(n.typ, kept, kept)
			reflect.Copy(out, v.Slice(0, kept))
		}
		out.Index(i).Set(entry)
	}
	switch {
	case out.IsValid():
		return out, true
	case kept == v.Len():
		return v, false
	case kept == 0:
		return reflect.Zero(n.typ), true // absent, as an empty list is
	}
	return v.Slice3(0, kept, kept), true
}

// cuts reports whether the cut leaves out anything of the lists from to to.
func (c *cutter) cuts(from, to int) bool {
	for _, n := range c.left[from:to] {
		if n > 0 {
			return true
		}
	}
	return false
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
