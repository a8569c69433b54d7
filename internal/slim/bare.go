package slim

import (
	"math"
	"reflect"
	"slices"

	"github.com/servicewatch/servicewatch/internal/bound"
)

// BareCharge is bound.Charge of item cut to its identity with its omitted
// record, as Slim cuts it when nothing else fits (Slim keeps the item as it
// is instead when that is no larger). It is counted, not built, so that a list can
// tell from the charges alone whether its items' identities would fit
// before it cuts any item to one: a list whose identities do not fit anyway
// (the worst answer for memory: thousands of pipes of nothing but an id)
// pays a walk of each item's top members and no allocation.
func (s *Slimmer[T]) BareCharge(item *T) (int, error) {
	top, omitted := s.topPlan()
	if omitted == nil {
		return 0, ErrNoOmittedRecord
	}
	v := ptrValue(item)
	prev, _ := reflect.TypeAssert[map[string]int32](v.FieldByIndex(omitted.index))
	m := &meter{k: math.MaxInt, limit: math.MaxInt, heap: int(top.typ.Size())}
	m.json = len("{}")
	written, whole := 0, make([]string, 0, 8)
	for i := range top.fields {
		f := &top.fields[i]
		if f == omitted {
			continue
		}
		fv := v.FieldByIndex(f.index)
		if !f.emitted(fv) {
			continue
		}
		if !slices.Contains(s.shape.Identity, f.name) {
			whole = append(whole, f.name)
			continue
		}
		if written > 0 {
			m.json++
		}
		written++
		m.json += f.nameBytes
		m.value(f.node, fv)
	}
	j, h := bareRecordSize(omitted, whole, prev)
	if j > 0 && written > 0 {
		j++ // its comma
	}
	bare := max(m.json+j, m.heap+h)
	if err := s.charge(ValueWork * (len(top.fields) + m.values)); err != nil {
		return 0, err
	}
	return bare, nil
}

// bareRecordSize is the JSON (member name included) and heap size of the
// omitted record bare writes: each member left out whole counted once, and
// of prev what is outside those members.
func bareRecordSize(omitted *field, whole []string, prev map[string]int32) (jsonBytes, heap int) {
	entries := 0
	for _, name := range whole {
		entries++
		jsonBytes += quotedLen(name) + 1 + intLen(wholeMember)
		heap += len(name)
	}
	for path, n := range prev {
		if !slices.Contains(whole, topMember(path)) {
			entries++
			jsonBytes += quotedLen(path) + 1 + intLen(int64(n))
			heap += len(path)
		}
	}
	if entries == 0 {
		return 0, 0
	}
	mapType := omitted.node.typ
	jsonBytes += omitted.nameBytes + len("{}") + entries - 1
	heap += bound.MapBytes(entries, int(mapType.Key().Size()), int(mapType.Elem().Size()))
	return jsonBytes, heap
}

// Identities is the last step of slimming a list to budget, once its items
// are at their floor (MinCap) and the list still does not fit: of the
// longest prefix of the list whose items cut to their identities would fit
// (all of it, when they all fit), as many items as it takes are cut, those
// that save most first (among equals, from the end of the list, where
// whole items would go: the same items always give the same list), so that
// the prefix fits; the items after it are then cut by whole items (the
// caller's bound.Prefix). It reports whether the whole list fits so, and
// false, cutting nothing, when not even the first identity fits. Whether
// identities fit is counted from their charges first (no identity is built
// for an item after the prefix). charges are the items' charges, and are
// kept up to date.
func (s *Slimmer[T]) Identities(items []T, charges []int, budget int) (bool, error) {
	n, total := 0, 0
	bares := make([]int, 0, len(items))
	for i := range items {
		c, err := s.BareCharge(&items[i])
		if err != nil {
			return false, err
		}
		bare := min(c+1, charges[i]) // and its comma
		if total+bare > budget {
			break
		}
		total += bare
		bares = append(bares, bare)
		n++
	}
	if n == 0 {
		return false, nil
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if d := (charges[b] - bares[b]) - (charges[a] - bares[a]); d != 0 {
			return d
		}
		return b - a // from the end, where whole items would go
	})
	used := sum(charges[:n])
	for _, i := range order {
		if used <= budget || charges[i] <= bares[i] {
			break
		}
		bare, charge, err := s.Slim(&items[i], 0)
		if err != nil {
			return false, err
		}
		used += charge + 1 - charges[i]
		items[i], charges[i] = bare, charge+1
	}
	return n == len(items), nil
}

// topPlan is T's plan with its identity members and omitted record planned
// and its other members not (see planner.unplanned), and the omitted
// record's member (nil: T has none of the right type): the whole plan when
// slimming built it already, else one of its own, so that a list none of
// whose items is slimmed does not pay for the whole plan to count
// identities.
func (s *Slimmer[T]) topPlan() (top *node, omitted *field) {
	if s.planned {
		return s.root, s.omitted
	}
	if s.top == nil {
		p := &planner{unplanned: func(name string) bool { return name != OmittedField && !slices.Contains(s.shape.Identity, name) }}
		s.top = p.plan(reflect.TypeFor[T](), "")
		for i := range s.top.fields {
			if f := &s.top.fields[i]; f.name == OmittedField && f.node.typ == reflect.TypeFor[map[string]int32]() {
				s.topOmitted = f
			}
		}
	}
	return s.top, s.topOmitted
}
