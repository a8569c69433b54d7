package slim

import (
	"strings"
)

// The storage under a Keeper: the arena of kept encodings, the ordered
// index of kept entries (a max-heap by key, so the last in (rank, id) order
// goes first when the budget is short). The kept items leave it as Encoded
// (list.go).

// arena is an io.Writer that appends to itself.
type arena []byte

// Write appends p, doubling the capacity when it runs out: append grows
// large slices by a quarter, which for a list of a few MiB allocates five
// times its size along the way.
func (a *arena) Write(p []byte) (int, error) {
	if len(*a)+len(p) > cap(*a) {
		grown := make(arena, len(*a), max(2*cap(*a), len(*a)+len(p), 4096))
		copy(grown, *a)
		*a = grown
	}
	*a = append(*a, p...)
	return len(p), nil
}

// itemKey orders items for keeping: by rank (see WithRank: the items that
// need attention first), then by id, items without an id ("") first, those
// by a hash of their content; seq, the item's place among the distinct
// items of the response, orders what is left equal (identical items, in
// practice).
type itemKey struct {
	rank    int
	id      string
	content uint64
	seq     int
}

func (a itemKey) less(b itemKey) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.listedBefore(b)
}

// idBefore reports whether a comes before b by rank, then id alone.
func (a itemKey) idBefore(b itemKey) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.id < b.id
}

// listedBefore orders keys as the list shows them: by id, whatever their
// rank.
func (a itemKey) listedBefore(b itemKey) bool {
	if c := strings.Compare(a.id, b.id); c != 0 {
		return c < 0
	}
	if a.content != b.content {
		return a.content < b.content
	}
	return a.seq < b.seq
}

// keptEntry is one kept item: its key and where its encoding is.
type keptEntry struct {
	key       itemKey
	off, size int
	// charge is what the entry counts against the budget (see MinItemCharge).
	charge int
	// whole is its charge before any slimming (of an id that repeats, the
	// largest), which sets the cap.
	whole int
	// bare: slimming could take no more of it.
	bare bool
	// bareCharge is its charge cut to its identity (see WithIdentities): an
	// int32 beside bare, in what was padding, so that the entry is no bigger.
	bareCharge int32
	// aloneCharge is its charge cut to its identity alone, without the
	// omitted record.
	aloneCharge int32
}

// keptHeap is a max-heap of entries by key. Once a duplicate has asked
// for one, it keeps an index of where each entry with an id is: most
// responses have no duplicates and do not pay for it.
type keptHeap struct {
	entries []keptEntry
	index   map[string]int // nil until find
}

// find returns the place of the entry with id.
func (h *keptHeap) find(id string) (int, bool) {
	if h.index == nil {
		h.index = make(map[string]int, len(h.entries))
		for i := range h.entries {
			h.place(i)
		}
	}
	i, ok := h.index[id]
	return i, ok
}

func (h *keptHeap) less(i, j int) bool { return h.entries[i].key.less(h.entries[j].key) }

func (h *keptHeap) swap(i, j int) {
	h.entries[i], h.entries[j] = h.entries[j], h.entries[i]
	h.place(i)
	h.place(j)
}

// place records where entry i is.
func (h *keptHeap) place(i int) {
	if id := h.entries[i].key.id; id != "" && h.index != nil {
		h.index[id] = i
	}
}

// maxBelow reports whether the heap is empty or its largest key is below key.
func (h *keptHeap) maxBelow(key itemKey) bool {
	return len(h.entries) == 0 || h.entries[0].key.less(key)
}

func (h *keptHeap) push(e keptEntry) {
	h.entries = append(h.entries, e)
	h.place(len(h.entries) - 1)
	h.up(len(h.entries) - 1)
}

// pop removes and returns the entry with the largest key.
func (h *keptHeap) pop() keptEntry {
	last := len(h.entries) - 1
	h.swap(0, last)
	e := h.entries[last]
	h.entries = h.entries[:last]
	delete(h.index, e.key.id)
	h.down(0, last)
	return e
}

// sorted orders the entries by key in place (heapsort) and returns them.
// The index is gone after it.
func (h *keptHeap) sorted() []keptEntry {
	h.index = nil
	for end := len(h.entries) - 1; end > 0; end-- {
		h.swap(0, end)
		h.down(0, end)
	}
	return h.entries
}

func (h *keptHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(parent, i) {
			return
		}
		h.swap(parent, i)
		i = parent
	}
}

// down restores the heap below i within the first n entries.
func (h *keptHeap) down(i, n int) {
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

// contentHash orders items without an id by their encoding. FNV-1a is
// enough: two encodings with one hash only fall back to response order. It
// is written out rather than taken from hash/fnv, whose hash.Hash is one
// allocation per item: a list of millions of {} paid millions.
func contentHash(enc []byte) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for _, c := range enc {
		h ^= uint64(c)
		h *= prime
	}
	return h
}

// compactArena copies the kept encodings to a fresh arena once dropped ones
// take more than half of it, so the arena stays within twice the budget.
func (k *Keeper[T]) compactArena() {
	if len(k.arena) <= 2*k.used+4096 {
		return
	}
	fresh := make(arena, 0, 2*k.used)
	for i := range k.kept.entries {
		e := &k.kept.entries[i]
		e.off, fresh = len(fresh), append(fresh, k.arena[e.off:e.off+e.size]...)
	}
	k.arena = fresh
}
