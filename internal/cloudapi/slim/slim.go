package slim

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/servicewatch/servicewatch/internal/bound"
)

// OmittedField is the JSON member of an item where slimming counts what it
// left out, by JSON path.
const OmittedField = "omitted"

// wholeMember counts 1 in the omitted record for a member of an item left out
// whole, when the item is cut down to its identity.
const wholeMember = 1

// ValueWork is the work (in the decode work's units, about 10 ns each)
// charged per value slimming sizes or copies: a struct, a member, a list
// entry, a string. Measured with BenchmarkSlimWork.
const ValueWork = 12

// ItemWork is the fixed work charged per item slimming looks at.
const ItemWork = 300

// ErrNoOmittedRecord is the error of slimming a type without an omitted
// record of the form map[string]int32: what was cut could not be told.
var ErrNoOmittedRecord = errors.New("the item type has no omitted record")

// Shape says how items of one type are slimmed: Identity are the top-level
// JSON members an item keeps when nothing more of it fits.
type Shape struct {
	Identity []string
}

// Pipes, Endpoints and Alerts are the shapes of the status lists: what a
// user needs to see of every item, whatever else is cut.
var (
	Pipes     = Shape{Identity: []string{"id", "name", "state", "since", "sourceKind"}}
	Endpoints = Shape{Identity: []string{"id", "description", "type", "status", "since"}}
	Alerts    = Shape{Identity: []string{"id", "error", "name", "displayName", "state", "since"}}
)

// Slimmer slims items of one type. It reads the typed item through a plan
// of its type (which members are lists, at which JSON path), so that sizing
// an item cut to k entries per list is a walk of what it keeps, and cutting
// it reslices lists (copying only the structs on the way to a cut list):
// nothing is encoded or decoded. The work it does is charged to the work
// function, when one is set: the answer's decode work budget, in a list
// call.
type Slimmer[T any] struct {
	shape    Shape
	planned  bool  // the plan below is built (on first use)
	root     *node // T, without its omitted record
	paths    []string
	omitted  *field // nil: T cannot be slimmed
	identity []field
	work     func(units int) error
	// top and topOmitted are what BareCharge reads, before the plan is
	// built (see topPlan).
	top        *node
	topOmitted *field
}

// New returns a Slimmer of items of type T (a struct) with shape. Its plan
// is built when it first slims, so that a list none of whose items needs it
// costs nothing.
func New[T any](shape Shape) *Slimmer[T] { return &Slimmer[T]{shape: shape} }

// plan builds the plan of T once.
func (s *Slimmer[T]) plan() {
	if s.planned {
		return
	}
	s.planned = true
	p := &planner{}
	root := p.plan(reflect.TypeFor[T](), "")
	s.root, s.paths = root, p.paths
	if root.kind != kindStruct {
		return
	}
	kept := root.fields[:0:0]
	for i := range root.fields {
		f := root.fields[i]
		switch {
		case f.name == OmittedField && f.node.typ == reflect.TypeFor[map[string]int32]():
			s.omitted = &f
			continue
		case slices.Contains(s.shape.Identity, f.name):
			s.identity = append(s.identity, f)
		}
		kept = append(kept, f)
	}
	root.fields = kept
}

// WithWork charges the work of slimming to charge, which fails once a
// budget is spent: slimming stops there with its error.
func (s *Slimmer[T]) WithWork(charge func(units int) error) *Slimmer[T] {
	s.work = charge
	return s
}

// size is one sizing of an item cut to k entries per list.
type size struct {
	k      int
	charge int // bound.Charge of the cut item, omitted record included
	left   []int64
	// longest is the longest list the sizing met (see meter.longest).
	longest int
}

// Item returns item cut so that bound.Charge of it is at most target: as is
// when it fits; else with every list in it, at any depth, cut to its first k
// entries for the largest k that fits; else its identity alone (which may
// still not fit: the caller then drops it whole). The result's omitted
// record counts what was left out, added to what item's own record counted.
// item is not changed, and the result shares what was not cut with it.
func (s *Slimmer[T]) Item(item *T, target int) (T, error) {
	out, _, err := s.Slim(item, target)
	return out, err
}

// Slim is Item, and bound.Charge of what it returns, as it sized it.
func (s *Slimmer[T]) Slim(item *T, target int) (slimmed T, charge int, err error) {
	s.plan()
	if s.omitted == nil {
		return *item, 0, ErrNoOmittedRecord
	}
	if err := s.charge(ItemWork); err != nil {
		return *item, 0, err
	}
	v := reflect.ValueOf(item).Elem()
	prev, _ := reflect.TypeAssert[map[string]int32](v.FieldByIndex(s.omitted.index))
	// Callers slim what they found too big: the whole item is not sized
	// first, the search finds it fits when a cut cuts nothing.
	none, err := s.measure(v, 0, target, prev)
	switch {
	case err != nil:
		return *item, 0, err
	case none.charge > target:
		return s.bareOrWhole(v, item, prev)
	case none.longest == 0:
		return *item, none.charge, nil // no list: it fits as it is
	}
	best, err := s.largestFit(v, none, target, prev)
	switch {
	case err != nil:
		return *item, 0, err
	case best.longest <= best.k:
		return *item, best.charge, nil // nothing cut: it fits as it is
	}
	slimmed, err = s.build(v, best, prev)
	return slimmed, best.charge, err
}

// measure sizes v cut to k entries per list, stopping past limit (then the
// charge is only known to be over it), and charges the work.
func (s *Slimmer[T]) measure(v reflect.Value, k, limit int, prev map[string]int32) (size, error) {
	m := &meter{k: k, limit: limit, left: make([]int64, len(s.paths)), heap: int(s.root.typ.Size())}
	if m.value(s.root, v) {
		j, h := s.omittedSize(m.left, prev)
		if j > 0 && m.written > 0 {
			j++ // its comma
		}
		m.json += j
		m.heap += h
	}
	if err := s.charge(ValueWork * m.values); err != nil {
		return size{}, err
	}
	charge := max(m.json, m.heap)
	if m.over() {
		charge = math.MaxInt // stopped early: only known to be over the limit
	}
	return size{k: k, charge: charge, left: m.left, longest: m.longest}, nil
}

// omittedSize is the JSON (member name included) and heap size of the
// omitted record of prev and the counts left.
func (s *Slimmer[T]) omittedSize(left []int64, prev map[string]int32) (jsonBytes, heap int) {
	entries := 0
	add := func(path string, n int64) {
		entries++
		jsonBytes += quotedLen(path) + 1 + intLen(min(n, math.MaxInt32))
		heap += len(path)
	}
	for path, n := range prev {
		i := slices.Index(s.paths, path)
		if i >= 0 && left[i] > 0 {
			n += int32(min(left[i], math.MaxInt32-int64(n)))
		}
		add(path, int64(n))
	}
	for i, n := range left {
		if _, counted := prev[s.paths[i]]; n > 0 && !counted {
			add(s.paths[i], n)
		}
	}
	if entries == 0 {
		return 0, 0
	}
	mapType := s.omitted.node.typ
	jsonBytes += s.omitted.nameBytes + len("{}") + entries - 1
	heap += bound.MapBytes(entries, int(mapType.Key().Size()), int(mapType.Elem().Size()))
	return jsonBytes, heap
}

// largestFit is the sizing of the largest k whose charge fits target (the
// charge grows with k; none, k = 0, fits). Each sizing walks what the cut
// keeps, and stops at twice the target, so that one that does not fit by
// less than that still says by how much: the next k is then the secant's
// between the largest that fits and the smallest that does not, which finds
// k in three or four sizings when the charge grows about evenly with k, and
// halving the interval when a guess made no progress bounds the rest.
func (s *Slimmer[T]) largestFit(v reflect.Value, none size, target int, prev map[string]int32) (size, error) {
	limit := target + min(target, math.MaxInt-target)
	best, over := none, size{k: math.MaxInt, charge: math.MaxInt} // best fits, over does not
	stalled := false
	for over.k-best.k > 1 && best.longest > best.k {
		probe := s.nextProbe(best, over, none, target, stalled)
		got, err := s.measure(v, probe, limit, prev)
		if err != nil {
			return none, err
		}
		narrowed := got.charge <= target && probe-best.k > (over.k-best.k)/4 || got.charge > target && over.k-probe > (over.k-best.k)/4
		stalled = over.k < math.MaxInt && !narrowed
		if got.charge <= target {
			best = got
		} else {
			over = got
		}
	}
	return best, nil
}

// nextProbe is the k to size next, between best (fits) and over (does
// not): where the line through them (or, with nothing over yet, through
// none and best) reaches target, or the middle when the last guess stalled.
func (s *Slimmer[T]) nextProbe(best, over, none size, target int, stalled bool) int {
	switch {
	case over.k == math.MaxInt && best.k == 0:
		return 1
	case over.k == math.MaxInt:
		perEntry := max(1, (best.charge-none.charge)/best.k)
		return best.k + max(1, (target-best.charge)/perEntry)
	case stalled || over.charge == math.MaxInt || over.charge <= best.charge:
		return best.k + (over.k-best.k)/2
	}
	step := int(int64(target-best.charge) * int64(over.k-best.k) / int64(over.charge-best.charge))
	return min(max(best.k+step, best.k+1), over.k-1)
}

// build is v cut to best.k entries per list, with its omitted record.
func (s *Slimmer[T]) build(v reflect.Value, best size, prev map[string]int32) (T, error) {
	c := &cutter{k: best.k, left: best.left}
	cut, _ := c.value(s.root, v)
	out := reflect.New(s.root.typ).Elem()
	out.Set(cut)
	record := maps.Clone(prev)
	for i, n := range best.left {
		if n > 0 {
			if record == nil {
				record = map[string]int32{}
			}
			record[s.paths[i]] = int32(min(int64(record[s.paths[i]])+n, math.MaxInt32))
		}
	}
	out.FieldByIndex(s.omitted.index).Set(reflect.ValueOf(record))
	result, _ := reflect.TypeAssert[T](out)
	return result, s.charge(ValueWork * c.values)
}

// bare is v's identity members alone, every other member it writes counted
// as left out whole. What an earlier cut counted inside those members is
// dropped from the record, so that a slimmed item cut to its identity
// records what the original cut to it does.
func (s *Slimmer[T]) bare(v reflect.Value, prev map[string]int32) (identity T, charge int, err error) {
	out := reflect.New(s.root.typ).Elem()
	for _, f := range s.identity {
		out.FieldByIndex(f.index).Set(v.FieldByIndex(f.index))
	}
	var record map[string]int32
	add := func(path string, n int32) {
		if record == nil {
			record = map[string]int32{}
		}
		record[path] += n
	}
	for i := range s.root.fields {
		f := &s.root.fields[i]
		isIdentity := slices.ContainsFunc(s.identity, func(g field) bool { return g.name == f.name })
		if !isIdentity && f.emitted(v.FieldByIndex(f.index)) {
			add(f.name, wholeMember)
		}
	}
	for path, n := range prev {
		if _, whole := record[topMember(path)]; !whole {
			add(path, n)
		}
	}
	out.FieldByIndex(s.omitted.index).Set(reflect.ValueOf(record))
	identity, _ = reflect.TypeAssert[T](out)
	sized, err := s.measure(out, math.MaxInt, math.MaxInt, record)
	if err != nil {
		return identity, 0, err
	}
	return identity, sized.charge, s.charge(ValueWork * len(s.root.fields))
}

// bareOrWhole is the item's identity alone, or the item as it is when its
// identity and the record of what it leaves out are no smaller.
func (s *Slimmer[T]) bareOrWhole(v reflect.Value, item *T, prev map[string]int32) (slimmed T, charge int, err error) {
	bare, charge, err := s.bare(v, prev)
	if err != nil {
		return *item, 0, err
	}
	whole, err := s.measure(v, math.MaxInt, charge, prev) // stops once over the identity's
	if err != nil || whole.charge <= charge {
		return *item, whole.charge, err
	}
	return bare, charge, nil
}

// topMember is the item's member a JSON path starts with.
func topMember(path string) string {
	if i := strings.IndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return path
}

func (s *Slimmer[T]) charge(units int) error {
	if s.work == nil {
		return nil
	}
	return s.work(units)
}

// Item returns item slimmed to target (see Slimmer.Item), for a caller that
// slims one item of its type.
func Item[T any](item *T, target int, shape Shape) (T, error) {
	return New[T](shape).Item(item, target)
}

// Describe says what slimming left out of one item, for a condition: "pipe
// p-42: 3950 source.postgres.tableMappings, 2 otherFields left out", the
// paths in order; "" when nothing was.
func Describe(noun, id string, omitted map[string]int32) string {
	if len(omitted) == 0 {
		return ""
	}
	paths := slices.Sorted(maps.Keys(omitted))
	parts := make([]string, len(paths))
	for i, path := range paths {
		parts[i] = fmt.Sprintf("%d %s", omitted[path], path)
	}
	return fmt.Sprintf("%s %s: %s left out", noun, bound.Cut(id, 64), strings.Join(parts, ", "))
}

// ptrValue is the addressable value item points to.
func ptrValue[T any](item *T) reflect.Value { return reflect.ValueOf(item).Elem() }
