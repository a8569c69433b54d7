package fairqueue

import (
	"container/heap"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// parkedTimes orders the parked items by the time they are due, earliest
// first, one entry per item: a periodic requeue may be a day away, and an
// entry left behind by each reconcile of a watch whose Secret churns would
// pile up for that long.
type parkedTimes struct {
	entries parkedHeap
	index   map[reconcile.Request]int
	// parked counts the items parked: of those due at once, the first
	// parked is first.
	parked uint64
}

type parkedEntry struct {
	item reconcile.Request
	at   time.Time
	seq  uint64
}

// set says that item is due at at, and whether it is now the first due.
func (p *parkedTimes) set(item reconcile.Request, at time.Time) bool {
	if p.index == nil {
		p.index = map[reconcile.Request]int{}
		p.entries.index = p.index
	}
	if i, ok := p.index[item]; ok {
		p.entries.items[i].at = at
		heap.Fix(&p.entries, i)
	} else {
		p.parked++
		heap.Push(&p.entries, parkedEntry{item: item, at: at, seq: p.parked})
	}
	return p.entries.items[0].item == item
}

// remove forgets item, if it is parked.
func (p *parkedTimes) remove(item reconcile.Request) {
	if i, ok := p.index[item]; ok {
		heap.Remove(&p.entries, i)
	}
}

// first is the item due first and when; false when none is parked.
func (p *parkedTimes) first() (reconcile.Request, time.Time, bool) {
	if len(p.entries.items) == 0 {
		return reconcile.Request{}, time.Time{}, false
	}
	return p.entries.items[0].item, p.entries.items[0].at, true
}

// parkedHeap is container/heap's view of the entries, keeping each item's
// place in index.
type parkedHeap struct {
	items []parkedEntry
	index map[reconcile.Request]int
}

func (h *parkedHeap) Len() int { return len(h.items) }
func (h *parkedHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if !a.at.Equal(b.at) {
		return a.at.Before(b.at)
	}
	return a.seq < b.seq
}

// Swap swaps two entries and their places in the index.
func (h *parkedHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.index[h.items[i].item] = i
	h.index[h.items[j].item] = j
}

// Push appends a parkedEntry (container/heap's side of heap.Push).
func (h *parkedHeap) Push(x any) {
	e, _ := x.(parkedEntry)
	h.index[e.item] = len(h.items)
	h.items = append(h.items, e)
}

// Pop removes the last entry (container/heap's side of heap.Pop and
// heap.Remove).
func (h *parkedHeap) Pop() any {
	last := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	delete(h.index, last.item)
	return last
}
