package pacing

import (
	"hash/fnv"
	"sync"
)

// GroupOf names a phase group by what its watches read: a hash of the
// parts (a service's API, organization and ID; or an alert list's API,
// host and credential digest), each ended by a zero byte so that no two
// lists of parts run together.
func GroupOf(parts ...string) uint64 {
	h := fnv.New64a()
	for _, part := range parts {
		_, _ = h.Write([]byte(part))
		_, _ = h.Write([]byte{0})
	}
	return h.Sum64()
}

// listGroups remembers, for each watch that reads an alert list shared
// beyond its service, the phase group of that list (see Pacer.ReadsList).
//
// Which group wins when a watch's service group and its list group differ:
// the list's. A list of an alert host is one read for every watch on the
// host and credential, whatever their services, while a service group's
// shared reads (pipes, endpoints) serve only the watches of one service;
// those that read the same list stay together in the list's group, so only
// watches of one service that read different lists (or none) part, and
// each part makes the service's reads once more per interval, which the
// demand book counts (its asks are per group) so that the budgets pace it.
// A group keyed by both would split the list's watches by service, and the
// list would be read by the first of them while the others synced later
// with a read made before a change. Phases are per interval (see phases),
// so the watches of one list at different intervals align per interval.
type listGroups[K comparable] struct {
	mu sync.Mutex
	of map[K]uint64
}

func newListGroups[K comparable]() *listGroups[K] { return &listGroups[K]{of: map[K]uint64{}} }

// set records the watch's list group; 0 forgets it.
func (g *listGroups[K]) set(key K, list uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if list == 0 {
		delete(g.of, key)
		return
	}
	g.of[key] = list
}

// groupOf is the phase group the watch syncs with: its list's when it
// reads one, else its own (its service's).
func (g *listGroups[K]) groupOf(w Watch[K]) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if list, ok := g.of[w.Key]; ok {
		return list
	}
	return w.Group
}
