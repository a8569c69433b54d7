package bound

import (
	"cmp"
	"encoding/json"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Ellipsis marks where Cut and CutRunes cut a string.
const Ellipsis = "…"

// Bytes returns the longest prefix of s of at most n bytes that ends on a
// rune boundary. Invalid UTF-8 before the cut is kept as it is: a caller that
// scrubs secrets must still see the first bytes of one cut inside a rune.
func Bytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Cut returns s when it has at most n bytes, and otherwise the longest
// prefix that leaves room for Ellipsis within n bytes, followed by Ellipsis.
// When n has no room for Ellipsis, the result is Ellipsis alone, which is
// longer than n: every caller's n is far larger.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Bytes(s, n-len(Ellipsis)) + Ellipsis
}

// Runes returns the first n runes of s (each invalid byte counting as one),
// or s when it has no more.
func Runes(s string, n int) string {
	for i := range s {
		if n <= 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// CutRunes returns s when it has at most n runes, and otherwise its first
// n-1 runes followed by Ellipsis: n runes in all.
func CutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return Runes(s, n-1) + Ellipsis
}

// Join joins items with "; " while they fit in n bytes, and says how many
// more there are ("; and 3 more"), so that a message naming a hundred
// failing items with long IDs stays short and still tells how many there
// were. When not even the first item fits whole, it is shown cut.
func Join(items []string, n int) string {
	if whole := strings.Join(items, "; "); len(whole) <= n {
		return whole
	}
	var b strings.Builder
	for i, item := range items {
		sep := ""
		if i > 0 {
			sep = "; "
		}
		// Item i fits if the rest can still be counted after it.
		if b.Len()+len(sep)+len(item)+len(AndMore(len(items)-i-1)) > n {
			if i == 0 {
				more := AndMore(len(items) - 1)
				return Cut(item, n-len(more)) + more
			}
			return b.String() + AndMore(len(items)-i)
		}
		b.WriteString(sep)
		b.WriteString(item)
	}
	return b.String()
}

// AndMore says that n more items were left out of a list ("; and n more"),
// or nothing when n is 0.
func AndMore(n int) string {
	if n == 0 {
		return ""
	}
	return "; and " + strconv.Itoa(n) + " more"
}

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

// Tally counts things by name when the names are someone else's words (a
// state the cloud sends for each of a million pipes): at most a bounded
// number of names, each cut to a bounded length, are counted by name while
// counting, and the rest under one other name.
type Tally struct {
	counts       map[string]int32
	maxNames     int
	maxNameBytes int
	other        string
}

// NewTally counts by at most maxNames names of at most maxNameBytes bytes
// each; the rest are counted under other.
func NewTally(maxNames, maxNameBytes int, other string) Tally {
	return Tally{counts: map[string]int32{}, maxNames: maxNames, maxNameBytes: maxNameBytes, other: other}
}

// Add counts one of name.
func (t Tally) Add(name string) {
	name = Cut(name, t.maxNameBytes)
	if _, named := t.counts[name]; !named && len(t.counts) >= t.maxNames {
		name = t.other
	}
	t.counts[name]++
}

// Top is the tally with at most n names: the n-1 names counted most (ties by
// name) keep theirs and the rest are counted under the other name. It is nil
// when nothing was counted.
func (t Tally) Top(n int) map[string]int32 {
	if len(t.counts) == 0 {
		return nil
	}
	top := maps.Clone(t.counts)
	if len(top) <= n {
		return top
	}
	other := top[t.other]
	delete(top, t.other)
	names := slices.Collect(maps.Keys(top))
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(top[b], top[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for _, name := range names[n-1:] {
		other += top[name]
		delete(top, name)
	}
	top[t.other] = other
	return top
}

// Remove takes back one Add of name: the count it went to (name's, or
// other's) loses one, and a name whose count reaches zero is no longer
// named.
func (t Tally) Remove(name string) {
	name = Cut(name, t.maxNameBytes)
	if _, named := t.counts[name]; !named {
		name = t.other
	}
	t.counts[name]--
	if t.counts[name] <= 0 {
		delete(t.counts, name)
	}
}
