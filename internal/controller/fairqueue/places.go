package fairqueue

import "sync"

// places lets the tenants (namespaces) whose work waits in one workqueue
// take turns: each item queued gets its place among its tenant's items
// queued at that moment, and a queue that serves lower places first serves
// a tenant's first item before another tenant's hundredth. Without it, a
// tenant that creates 1,500 watches at once puts another tenant's new watch
// behind all of them (issue 17).
type places[K comparable] struct {
	mu     sync.Mutex
	queued map[string]map[K]int
}

// newPlaces returns an empty book.
func newPlaces[K comparable]() *places[K] {
	return &places[K]{queued: map[string]map[K]int{}}
}

// Queue records that key of tenant waits, and returns its place: how many
// items of the tenant waited before it (0 for the first). An item queued
// again before it was taken keeps its place.
func (q *places[K]) Queue(tenant string, key K) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.queued[tenant]
	if items == nil {
		items = map[K]int{}
		q.queued[tenant] = items
	}
	if place, ok := items[key]; ok {
		return place
	}
	place := len(items)
	items[key] = place
	return place
}

// Taken records that key of tenant left the queue; a tenant with nothing
// queued is forgotten.
func (q *places[K]) Taken(tenant string, key K) {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.queued[tenant]
	delete(items, key)
	if len(items) == 0 {
		delete(q.queued, tenant)
	}
}
