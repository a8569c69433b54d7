package reads

import (
	"context"
	"slices"
	"sync"

	"github.com/servicewatch/servicewatch/internal/pacing"
)

// SlotLimits bound the cloud calls in flight. A slot is held by one sync
// while it calls one host (its calls to that host at once share it), so a
// sync calling two hosts holds two, and none while it waits for another
// host. The bounds count those holds.
type SlotLimits struct {
	// All bounds the holds of every host and tenant together.
	All int
	// PerHost bounds the holds of one API host, so that a host that hangs
	// holds at most that many of All.
	PerHost int
	// PerTenant bounds the holds of one tenant (a namespace) on all hosts
	// together, so that the watches of one tenant, whatever hosts they name
	// and however many they are, leave the rest of All (and of each host's
	// PerHost) to the others.
	PerTenant int
}

// SlotAsk is what a sync asks a slot for.
type SlotAsk struct {
	// Tenant is whose work it is: a watch's namespace.
	Tenant string
	// Host is the API host the sync is to call.
	Host string
	// Level is the work's level: higher levels are served first.
	Level pacing.Level
}

// slotQueue hands out the slots of SlotLimits. Waiters are served by level,
// highest first; within a level, the tenants that wait take turns (round
// robin), and a tenant's own waiters go in arrival order. A waiter that
// cannot be served (its host or its tenant is at its bound) does not hold
// up those behind it that can.
type slotQueue struct {
	mu      sync.Mutex
	book    slotBook
	granted map[*slotWaiter]chan struct{}
}

// newSlotQueue returns slots bounded by l (each bound at least one).
func newSlotQueue(l SlotLimits) *slotQueue {
	return &slotQueue{book: newSlotBook(l), granted: map[*slotWaiter]chan struct{}{}}
}

// Acquire takes a slot for ask, waiting its turn until ctx ends. The
// returned function gives the slot back; call it once.
func (s *slotQueue) Acquire(ctx context.Context, ask SlotAsk) (func(), error) {
	s.mu.Lock()
	w := s.book.push(ask)
	ch := make(chan struct{})
	s.granted[w] = ch
	s.dispatchLocked()
	s.mu.Unlock()

	release := func() { s.release(w) }
	select {
	case <-ch:
		return release, nil
	case <-ctx.Done():
		s.mu.Lock()
		waiting := s.book.remove(w)
		delete(s.granted, w)
		s.mu.Unlock()
		if !waiting { // granted meanwhile: hand the slot on
			release()
		}
		return nil, ctx.Err()
	}
}

// release gives w's slot back and serves the waiters it lets in.
func (s *slotQueue) release(w *slotWaiter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.book.release(w.ask)
	s.dispatchLocked()
}

// dispatchLocked grants every waiter that may go now.
func (s *slotQueue) dispatchLocked() {
	for {
		w := s.book.next()
		if w == nil {
			return
		}
		close(s.granted[w])
		delete(s.granted, w)
	}
}

// Waiting counts the asks waiting at level.
func (s *slotQueue) Waiting(level pacing.Level) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.book.levels[level].waiting
}

// slotBook is the bookkeeping of slotQueue, without locks or channels: what is
// held, who waits, and whose turn it is.
type slotBook struct {
	limits  SlotLimits
	held    int
	hosts   map[string]int
	tenants map[string]int
	levels  [pacing.Levels]slotLevel
	// served is when each tenant that holds or waits was last granted a
	// slot, counted in grants; a tenant never served (or back after it
	// held and waited for nothing) has none, and goes first.
	served map[string]uint64
	grants uint64
	seq    uint64
}

// slotLevel is the waiters of one level, per tenant.
type slotLevel struct {
	tenants map[string]*tenantWaiters
	waiting int
}

// tenantWaiters are one tenant's waiters of a level, in arrival order per
// host.
type tenantWaiters struct {
	hosts map[string][]*slotWaiter
	n     int
}

type slotWaiter struct {
	ask SlotAsk
	seq uint64 // arrival order
}

func newSlotBook(l SlotLimits) slotBook {
	l.All, l.PerHost, l.PerTenant = max(1, l.All), max(1, l.PerHost), max(1, l.PerTenant)
	b := slotBook{limits: l, hosts: map[string]int{}, tenants: map[string]int{}, served: map[string]uint64{}}
	for i := range b.levels {
		b.levels[i].tenants = map[string]*tenantWaiters{}
	}
	return b
}

// push puts an ask in line.
func (b *slotBook) push(ask SlotAsk) *slotWaiter {
	b.seq++
	w := &slotWaiter{ask: ask, seq: b.seq}
	l := &b.levels[ask.Level]
	t := l.tenants[ask.Tenant]
	if t == nil {
		t = &tenantWaiters{hosts: map[string][]*slotWaiter{}}
		l.tenants[ask.Tenant] = t
	}
	t.hosts[ask.Host] = append(t.hosts[ask.Host], w)
	t.n++
	l.waiting++
	return w
}

// next takes the waiter that goes next out of line and counts its slot as
// held; nil when none may go now. Of the highest level that has a waiter
// that may go, the tenants take turns: the one served least recently goes
// (a round robin that also puts a tenant that just came ahead of one that
// has been served all along), and its earliest waiter that may go.
func (b *slotBook) next() *slotWaiter {
	if b.held >= b.limits.All {
		return nil
	}
	for lv := pacing.Levels - 1; lv >= 0; lv-- {
		var best *slotWaiter
		for tenant, t := range b.levels[lv].tenants {
			if b.tenants[tenant] >= b.limits.PerTenant {
				continue
			}
			if w := b.first(t); w != nil && (best == nil || b.before(w, best)) {
				best = w
			}
		}
		if best != nil {
			b.drop(best)
			b.held++
			b.hosts[best.ask.Host]++
			b.tenants[best.ask.Tenant]++
			b.grants++
			b.served[best.ask.Tenant] = b.grants
			return best
		}
	}
	return nil
}

// before tells whether w's tenant's turn comes before other's: served less
// recently, or as recently and asked earlier.
func (b *slotBook) before(w, other *slotWaiter) bool {
	ws, others := b.served[w.ask.Tenant], b.served[other.ask.Tenant]
	if ws != others {
		return ws < others
	}
	return w.seq < other.seq
}

// first is the tenant's earliest waiter whose host has a free slot.
func (b *slotBook) first(t *tenantWaiters) *slotWaiter {
	var best *slotWaiter
	for host, line := range t.hosts {
		if b.hosts[host] < b.limits.PerHost && (best == nil || line[0].seq < best.seq) {
			best = line[0]
		}
	}
	return best
}

// remove takes a waiter that gave up out of line; false when it was not
// waiting any more.
func (b *slotBook) remove(w *slotWaiter) bool {
	t := b.levels[w.ask.Level].tenants[w.ask.Tenant]
	if t == nil || !slices.Contains(t.hosts[w.ask.Host], w) {
		return false
	}
	b.drop(w)
	b.forgetIfIdle(w.ask.Tenant)
	return true
}

// drop takes w out of its line.
func (b *slotBook) drop(w *slotWaiter) {
	l := &b.levels[w.ask.Level]
	t := l.tenants[w.ask.Tenant]
	line := slices.DeleteFunc(t.hosts[w.ask.Host], func(other *slotWaiter) bool { return other == w })
	if len(line) == 0 {
		delete(t.hosts, w.ask.Host)
	} else {
		t.hosts[w.ask.Host] = line
	}
	t.n--
	l.waiting--
	if t.n == 0 {
		delete(l.tenants, w.ask.Tenant)
	}
}

// release counts a held slot of ask as free.
func (b *slotBook) release(ask SlotAsk) {
	b.held--
	decrement(b.hosts, ask.Host)
	decrement(b.tenants, ask.Tenant)
	b.forgetIfIdle(ask.Tenant)
}

// forgetIfIdle forgets when a tenant that neither holds nor waits was
// served, so that the book keeps nothing of tenants gone.
func (b *slotBook) forgetIfIdle(tenant string) {
	if b.tenants[tenant] > 0 {
		return
	}
	for i := range b.levels {
		if b.levels[i].tenants[tenant] != nil {
			return
		}
	}
	delete(b.served, tenant)
}

// decrement counts one less of key, forgetting it at zero.
func decrement(m map[string]int, key string) {
	if m[key] <= 1 {
		delete(m, key)
		return
	}
	m[key]--
}
