package cloudapi

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
)

// keeper receives the items of one list response as they are decoded, and
// keeps what List promises: each distinct item once, and of those the longest
// prefix of the id order that fits the byte budget. Its memory is the kept
// items plus eight bytes or so per distinct id, never the whole response.
type keeper[T any] struct {
	idOf   func(*T) string
	redact func(*T)
	each   func(*T)
	budget int // <= 0: keep everything

	// seen holds a hash of every id met, not the id: a response of a million
	// tiny items must stay cheap. Two ids whose 64-bit hashes collide (about
	// one chance in ten million for a million ids) would merge; the seed is
	// random per call, so no response can aim for it.
	seed  maphash.Seed
	seen  map[uint64]struct{}
	total int

	kept keptHeap[T]
	used int // summed size of the kept items
	// cutoff is the smallest key ever dropped for want of room. An item at
	// or after it cannot be in the prefix: the prefix already stops before
	// the cutoff item.
	cutoff    itemKey
	hasCutoff bool
	size      sizeCounter
	encoder   *json.Encoder
}

func newKeeper[T any](idOf func(*T) string, redact func(*T), opts ListOptions[T]) *keeper[T] {
	k := &keeper[T]{
		idOf:   idOf,
		redact: redact,
		each:   opts.Each,
		budget: opts.KeepBytes,
		seed:   maphash.MakeSeed(),
		seen:   map[uint64]struct{}{},
		kept:   keptHeap[T]{idOf: idOf},
	}
	k.encoder = json.NewEncoder(&k.size)
	return k
}

// add takes one decoded item. The keeper copies it: item may be reused.
func (k *keeper[T]) add(item *T) error {
	if k.redact != nil {
		k.redact(item)
	}
	id := k.idOf(item)
	if k.isDuplicate(id) {
		return nil
	}
	k.total++
	if k.each != nil {
		k.each(item)
	}
	key := itemKey{id: id, seq: k.total}
	if k.budget <= 0 {
		k.kept.push(*item, key.seq, 0)
		return nil
	}
	if k.hasCutoff && !key.less(k.cutoff) {
		return nil
	}
	size, err := k.encodedSize(item)
	if err != nil {
		return err
	}
	k.kept.push(*item, key.seq, size)
	k.used += size
	// The kept items are the longest fitting prefix of the items seen so
	// far. Invariant: they are exactly the seen items before the cutoff,
	// they fit, and (once there is a cutoff) they do not fit together with
	// the cutoff item, the next one in key order. An item at or after the
	// cutoff leaves all three true by being dropped. One before it joins;
	// popping the largest keys until the rest fits then leaves the items
	// before the last key popped, which did not fit with them: the new
	// cutoff. Without the cutoff, an item after a dropped one could later
	// slip in ahead of it and leave a gap in the prefix.
	for k.used > k.budget {
		dropped, size := k.kept.popMax()
		k.used -= size
		k.cutoff, k.hasCutoff = dropped, true
	}
	return nil
}

// isDuplicate records id and reports whether it was met before. Items
// without an id are never duplicates.
func (k *keeper[T]) isDuplicate(id string) bool {
	if id == "" {
		return false
	}
	h := maphash.String(k.seed, id)
	if _, ok := k.seen[h]; ok {
		return true
	}
	k.seen[h] = struct{}{}
	return false
}

// encodedSize is the item's share of a JSON list: its encoding and a comma.
func (k *keeper[T]) encodedSize(item *T) (int, error) {
	k.size = 0
	if err := k.encoder.Encode(item); err != nil {
		return 0, fmt.Errorf("measure item: %w", err)
	}
	// Encode ends the value with a newline, which stands for the comma.
	return int(k.size), nil
}

// items returns the kept items in key order. The keeper is spent after it.
func (k *keeper[T]) items() []T {
	return k.kept.sorted()
}

// sizeCounter is an io.Writer that only counts, so measuring an item
// allocates nothing.
type sizeCounter int

func (c *sizeCounter) Write(p []byte) (int, error) {
	*c += sizeCounter(len(p))
	return len(p), nil
}

// itemKey orders items: by id, items without an id ("") first; seq, the
// item's place among the distinct items of the response, orders equal ids.
type itemKey struct {
	id  string
	seq int
}

func (a itemKey) less(b itemKey) bool {
	if a.id != b.id {
		return a.id < b.id
	}
	return a.seq < b.seq
}

// keptHeap is a max-heap of items by itemKey. Items, sequence numbers and
// sizes are parallel slices, so that the items end up in a []T without a
// copy. The id is read from the item, not stored twice.
type keptHeap[T any] struct {
	idOf  func(*T) string
	items []T
	seqs  []int
	sizes []int
}

func (h *keptHeap[T]) key(i int) itemKey {
	return itemKey{id: h.idOf(&h.items[i]), seq: h.seqs[i]}
}

func (h *keptHeap[T]) less(i, j int) bool { return h.key(i).less(h.key(j)) }

func (h *keptHeap[T]) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.seqs[i], h.seqs[j] = h.seqs[j], h.seqs[i]
	h.sizes[i], h.sizes[j] = h.sizes[j], h.sizes[i]
}

func (h *keptHeap[T]) push(item T, seq, size int) {
	h.items = append(h.items, item)
	h.seqs = append(h.seqs, seq)
	h.sizes = append(h.sizes, size)
	h.up(len(h.items) - 1)
}

// popMax removes the item with the largest key and returns its key and size.
func (h *keptHeap[T]) popMax() (itemKey, int) {
	last := len(h.items) - 1
	h.swap(0, last)
	key, size := h.key(last), h.sizes[last]
	var zero T
	h.items[last] = zero // let the garbage collector have it
	h.items, h.seqs, h.sizes = h.items[:last], h.seqs[:last], h.sizes[:last]
	h.down(0, last)
	return key, size
}

// sorted orders the items by key in place (heapsort) and returns them; never
// nil, so that an empty result reads as an empty list.
func (h *keptHeap[T]) sorted() []T {
	for end := len(h.items) - 1; end > 0; end-- {
		h.swap(0, end)
		h.down(0, end)
	}
	if h.items == nil {
		return []T{}
	}
	return h.items
}

func (h *keptHeap[T]) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(parent, i) {
			return
		}
		h.swap(parent, i)
		i = parent
	}
}

// down restores the heap below i within the first n items.
func (h *keptHeap[T]) down(i, n int) {
	for {
		largest, left, right := i, 2*i+1, 2*i+2
		if left < n && h.less(largest, left) {
			largest = left
		}
		if right < n && h.less(largest, right) {
			largest = right
		}
		if largest == i {
			return
		}
		h.swap(i, largest)
		i = largest
	}
}
