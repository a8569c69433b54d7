package bound

import (
	"encoding/json"
	"math"
	"reflect"
	"time"
)

// MapBytes is what a map of n entries costs besides what its keys and
// values point to, as the runtime lays it out (Go 1.24's maps, measured): a
// header, and groups of 8 slots, each slot a key and a value, behind a
// control word. Up to 8 entries fit one group, and larger maps keep their
// groups at most 7/8 full in tables of a power of two groups. Even a map of
// two entries costs about 250 bytes, which a per-entry estimate (16 bytes
// an entry, as this was until issue 28) put at 70: a status of many items
// that each hold a small map (the omitted record of a slimmed item) was
// charged at a third of what the cache holds.
func MapBytes(n, keySize, elemSize int) int {
	const header, control, slots = 48, 8, 8
	slot := (keySize + elemSize + 7) / 8 * 8
	group := control + slots*slot
	if n <= slots {
		return header + group
	}
	groups := 1
	for groups*7 < n {
		groups *= 2
	}
	return 2*header + groups*group // and the table's own header
}

var timeType = reflect.TypeFor[time.Time]()

// GoSize estimates the bytes a value costs decoded, as a cache of decoded
// objects holds it: its own size and everything it points to (strings,
// slices, maps, pointed-to structs), not the allocator's rounding. A value
// of many tiny items costs several times its JSON: an empty pipe is 2 bytes
// of JSON and over a hundred decoded, so a bound on JSON alone does not
// bound memory.
func GoSize[T any](v *T) int {
	rv := reflect.ValueOf(v).Elem()
	return int(rv.Type().Size()) + HeapSize(rv)
}

// HeapSize is what v points to, outside its own inline size: GoSize less
// the size of v's type, for a caller that walks a value with reflect.
func HeapSize(v reflect.Value) int {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		return int(v.Type().Elem().Size()) + HeapSize(v.Elem())
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		return int(v.Elem().Type().Size()) + HeapSize(v.Elem())
	case reflect.String:
		return v.Len()
	case reflect.Slice:
		// Its length, not its capacity: a list cut for the status keeps its
		// backing array only until it is written, and decoding grows one at
		// most by half again.
		n := v.Len() * int(v.Type().Elem().Size())
		for i := range v.Len() {
			n += HeapSize(v.Index(i))
		}
		return n
	case reflect.Map:
		if v.IsNil() {
			return 0
		}
		n := MapBytes(v.Len(), int(v.Type().Key().Size()), int(v.Type().Elem().Size()))
		for it := v.MapRange(); it.Next(); {
			n += HeapSize(it.Key()) + HeapSize(it.Value())
		}
		return n
	case reflect.Struct:
		if v.Type() == timeType {
			return 0 // its location is shared
		}
		n := 0
		for _, field := range v.Fields() {
			n += HeapSize(field)
		}
		return n
	default:
		return 0
	}
}

// Charge is what v is charged by a bound on what is kept of it: the larger
// of its JSON size and its decoded size (GoSize), since a cache holds it
// decoded and the API server stores its JSON. A value that cannot be encoded
// is charged math.MaxInt32: it is never kept.
func Charge[T any](v *T) int { return charge(v, 0) }

// Charges are what each item of a list is charged: as Charge, with one byte
// more of JSON for the comma that separates it from the next.
func Charges[T any](items []T) []int {
	sizes := make([]int, len(items))
	for i := range items {
		sizes[i] = charge(&items[i], 1)
	}
	return sizes
}

// charge is Charge with extra bytes of JSON around v.
func charge[T any](v *T, extra int) int {
	raw, err := json.Marshal(v)
	if err != nil {
		return math.MaxInt32
	}
	return max(len(raw)+extra, GoSize(v))
}

// Prefix returns how many leading sizes fit in budget, and what they use of
// it.
func Prefix(sizes []int, budget int) (n, used int) {
	for i, size := range sizes {
		if used+size > budget {
			return i, used
		}
		used += size
	}
	return len(sizes), used
}
