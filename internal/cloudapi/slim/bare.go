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
	return s.identityCharge(item, true)
}

// IdentityCharge is bound.Charge of item as Identity cuts it: its identity
// members alone, without an omitted record. A record is a map, about 300
// bytes decoded however few its entries: twice the identity of a pipe.
func (s *Slimmer[T]) IdentityCharge(item *T) (int, error) {
	return s.identityCharge(item, false)
}

// Identity is item cut to its identity members alone, without an omitted
// record (see IdentityCharge), and its charge: the last resort of a list
// too long for its items' identities with their records, so that it lists
// as many items as the budget holds. The item as it is, when that is no
// larger.
func (s *Slimmer[T]) Identity(item *T) (identity T, charge int, err error) {
	s.plan()
	if s.omitted == nil {
		return *item, 0, ErrNoOmittedRecord
	}
	v := ptrValue(item)
	out := reflect.New(s.root.typ).Elem()
	for _, f := range s.identity {
		out.FieldByIndex(f.index).Set(v.FieldByIndex(f.index))
	}
	identity, _ = reflect.TypeAssert[T](out)
	sized, err := s.measure(out, math.MaxInt, math.MaxInt, nil)
	if err != nil {
		return *item, 0, err
	}
	if whole := bound.Charge(item); whole <= sized.charge {
		return *item, whole, s.charge(ValueWork * len(s.root.fields))
	}
	return identity, sized.charge, s.charge(ValueWork * len(s.root.fields))
}

// identityCharge counts item cut to its identity, with its omitted record
// or without.
func (s *Slimmer[T]) identityCharge(item *T, withRecord bool) (int, error) {
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
	j, h := 0, 0
	if withRecord {
		j, h = bareRecordSize(omitted, whole, prev)
	}
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
// are at their floor (MinCap) and the list still does not fit. When its
// items cut to their identities with their omitted records (BareCharge)
// would fit, as many as it takes are cut so, those that save most first
// (among equals, from the end of the list, where whole items would go: the
// same items always give the same list), and true. Else the longest prefix
// of the list whose items' identities alone (IdentityCharge, no record)
// fit is cut to them likewise (Identity), and false: the items after it go
// whole (the caller's bound.Prefix), so that the list keeps as many items
// as the budget holds. Whether identities fit is counted from their charges
// first. charges are the items' charges, and are kept up to date.
func (s *Slimmer[T]) Identities(items []T, charges []int, budget int) (bool, error) {
	withRecords := func(item *T) (T, int, error) { return s.Slim(item, 0) }
	n, bares, err := s.identityPrefix(items, charges, budget, s.BareCharge)
	if err != nil || n == len(items) {
		return true, s.cutToIdentities(items[:n], charges, bares, budget, withRecords)
	}
	n, bares, err = s.identityPrefix(items, charges, budget, s.IdentityCharge)
	if err != nil {
		return false, err
	}
	return false, s.cutToIdentities(items[:n], charges, bares, budget, s.Identity)
}

// identityPrefix is the longest prefix of items whose identities, as
// charge counts them, fit budget, and their charges so.
func (s *Slimmer[T]) identityPrefix(items []T, charges []int, budget int, charge func(*T) (int, error)) (n int, bares []int, err error) {
	total := 0
	bares = make([]int, 0, len(items))
	for i := range items {
		c, err := charge(&items[i])
		if err != nil {
			return 0, nil, err
		}
		bare := min(c+1, charges[i]) // and its comma
		if total+bare > budget {
			break
		}
		total += bare
		bares = append(bares, bare)
	}
	return len(bares), bares, nil
}

// cutToIdentities cuts items (a prefix of the list) by cut until their
// charges fit budget, those that save most first.
func (s *Slimmer[T]) cutToIdentities(items []T, charges, bares []int, budget int, cut func(*T) (T, int, error)) error {
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if d := (charges[b] - bares[b]) - (charges[a] - bares[a]); d != 0 {
			return d
		}
		return b - a // from the end, where whole items would go
	})
	used := sum(charges[:len(items)])
	for _, i := range order {
		if used <= budget || charges[i] <= bares[i] {
			break
		}
		bare, charge, err := cut(&items[i])
		if err != nil {
			return err
		}
		used += charge + 1 - charges[i]
		items[i], charges[i] = bare, charge+1
	}
	return nil
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
