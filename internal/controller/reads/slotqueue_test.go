package reads

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/pacing"
)

// slotStep is one step of a table test of the slot book: an ask ("ask"),
// a holder giving its slot back ("release") or a waiter giving up ("cancel").
type slotStep struct {
	op, name string
	ask      SlotAsk
}

func ask(name, tenant, host string, level pacing.Level) slotStep {
	return slotStep{op: "ask", name: name, ask: SlotAsk{Tenant: tenant, Host: host, Level: level}}
}

func release(name string) slotStep { return slotStep{op: "release", name: name} }
func cancel(name string) slotStep  { return slotStep{op: "cancel", name: name} }

// asks is n asks of one tenant, host and level, named prefix-1 … prefix-n.
func asks(prefix string, n int, tenant, host string, level pacing.Level) []slotStep {
	out := make([]slotStep, n)
	for i := range out {
		out[i] = ask(prefix+"-"+string(rune('1'+i)), tenant, host, level)
	}
	return out
}

func steps(parts ...any) []slotStep {
	var out []slotStep
	for _, p := range parts {
		switch v := p.(type) {
		case slotStep:
			out = append(out, v)
		case []slotStep:
			out = append(out, v...)
		}
	}
	return out
}

// The slot book serves waiters by level, then in turns between tenants, then
// in arrival order; a waiter whose host or tenant is at its bound does not
// hold up one that may go. Each step lists the grants it makes, in order.
func TestSlotBookServesTenantsInTurns(t *testing.T) {
	cases := []struct {
		name   string
		limits SlotLimits
		steps  []slotStep
		// grants are the asks granted by each step, space separated.
		grants []string
	}{{
		name:   "a free slot goes at once",
		limits: SlotLimits{All: 2, PerHost: 2, PerTenant: 2},
		steps:  steps(ask("a", "ns1", "h", pacing.User), ask("b", "ns1", "h", pacing.User), ask("c", "ns1", "h", pacing.User)),
		grants: []string{"a", "b", ""},
	}, {
		name:   "higher levels first, arrival order within a tenant",
		limits: SlotLimits{All: 1, PerHost: 1, PerTenant: 1},
		steps: steps(ask("hold", "ns", "h", pacing.User), ask("periodic", "ns", "h", pacing.Periodic), ask("secret", "ns", "h", pacing.Secret),
			ask("user-1", "ns", "h", pacing.User), ask("user-2", "ns", "h", pacing.User),
			release("hold"), release("user-1"), release("user-2"), release("secret")),
		grants: []string{"hold", "", "", "", "", "user-1", "user-2", "secret", "periodic"},
	}, {
		// Issue 17 (c): 150 watches of one namespace wait; another
		// namespace's new watch is served at the next free slot, not after
		// them.
		name:   "a new tenant's ask goes before a waiting tenant's backlog",
		limits: SlotLimits{All: 2, PerHost: 2, PerTenant: 2},
		steps: steps(asks("burst", 6, "busy", "h", pacing.User), ask("victim", "other", "h", pacing.User),
			release("burst-1"), release("burst-2"), release("victim"), release("burst-3")),
		grants: []string{"burst-1", "burst-2", "", "", "", "", "", "victim", "burst-3", "burst-4", "burst-5"},
	}, {
		name:   "three tenants take turns",
		limits: SlotLimits{All: 1, PerHost: 1, PerTenant: 1},
		steps: steps(ask("hold", "x", "h", pacing.User), asks("a", 2, "a", "h", pacing.User), asks("b", 2, "b", "h", pacing.User), asks("c", 2, "c", "h", pacing.User),
			release("hold"), release("a-1"), release("b-1"), release("c-1"), release("a-2"), release("b-2")),
		grants: []string{"hold", "", "", "", "", "", "", "a-1", "b-1", "c-1", "a-2", "b-2", "c-2"},
	}, {
		// Issue 17 (b): one namespace's watches hang on more hosts than
		// All ÷ PerHost; its bound leaves slots to another namespace.
		name:   "a tenant at its bound leaves the rest to others",
		limits: SlotLimits{All: 4, PerHost: 2, PerTenant: 2},
		steps: steps(ask("h1", "busy", "h1", pacing.User), ask("h2", "busy", "h2", pacing.User), ask("h3", "busy", "h3", pacing.User),
			ask("victim", "other", "shared", pacing.Periodic)),
		grants: []string{"h1", "h2", "", "victim"},
	}, {
		// Issue 17 (d): on the one host every tenant shares, one tenant's
		// hanging calls hold at most its bound of the host's slots.
		name:   "a tenant's bound holds on a host all share",
		limits: SlotLimits{All: 32, PerHost: 3, PerTenant: 2},
		steps: steps(asks("hang", 5, "busy", "mgmt", pacing.User), ask("victim", "other", "mgmt", pacing.User),
			ask("third", "third", "mgmt", pacing.User)),
		grants: []string{"hang-1", "hang-2", "", "", "", "victim", ""},
	}, {
		name:   "a waiter whose host is full does not hold up the next",
		limits: SlotLimits{All: 3, PerHost: 1, PerTenant: 3},
		steps: steps(ask("slow", "ns", "slow", pacing.User), ask("slow-2", "ns", "slow", pacing.User), ask("fast", "ns", "fast", pacing.User),
			release("fast"), release("slow")),
		grants: []string{"slow", "", "fast", "", "slow-2"},
	}, {
		name:   "a lower level goes when the higher one cannot",
		limits: SlotLimits{All: 2, PerHost: 1, PerTenant: 2},
		steps: steps(ask("hold", "ns", "h", pacing.User), ask("user", "ns", "h", pacing.User), ask("periodic", "ns2", "other", pacing.Periodic),
			release("hold")),
		grants: []string{"hold", "", "periodic", "user"},
	}, {
		name:   "a waiter that gives up leaves the line",
		limits: SlotLimits{All: 1, PerHost: 1, PerTenant: 1},
		steps: steps(ask("hold", "ns", "h", pacing.User), ask("gone", "a", "h", pacing.User), ask("next", "b", "h", pacing.User),
			cancel("gone"), release("hold")),
		grants: []string{"hold", "", "", "", "next"},
	}, {
		name:   "the total bounds all hosts and tenants",
		limits: SlotLimits{All: 2, PerHost: 2, PerTenant: 2},
		steps: steps(ask("a", "a", "h1", pacing.User), ask("b", "b", "h2", pacing.User), ask("c", "c", "h3", pacing.User),
			release("a")),
		grants: []string{"a", "b", "", "c"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newSlotBook(tc.limits)
			waiters := map[string]*slotWaiter{}
			names := map[*slotWaiter]string{}
			for i, st := range tc.steps {
				switch st.op {
				case "ask":
					w := b.push(st.ask)
					waiters[st.name], names[w] = w, st.name
				case "release":
					b.release(waiters[st.name].ask)
				case "cancel":
					if !b.remove(waiters[st.name]) {
						t.Fatalf("step %d: %s was not waiting", i, st.name)
					}
				}
				var got []string
				for w := b.next(); w != nil; w = b.next() {
					got = append(got, names[w])
				}
				if g := strings.Join(got, " "); g != tc.grants[i] {
					t.Fatalf("step %d (%s %s): granted %q, want %q", i, st.op, st.name, g, tc.grants[i])
				}
			}
		})
	}
}

// The book's counts come back to nothing when every slot is given back,
// whatever the order: no tenant or host is left counted as holding.
func TestSlotBookForgetsWhatIsGivenBack(t *testing.T) {
	b := newSlotBook(SlotLimits{All: 3, PerHost: 2, PerTenant: 2})
	var held []*slotWaiter
	for i := range 12 {
		b.push(SlotAsk{Tenant: []string{"a", "b", "c"}[i%3], Host: []string{"h1", "h2"}[i%2], Level: pacing.Level(i % int(pacing.Levels))})
	}
	for range 100 {
		for w := b.next(); w != nil; w = b.next() {
			held = append(held, w)
		}
		if len(held) == 0 {
			break
		}
		b.release(held[0].ask)
		held = held[1:]
	}
	if b.held != 0 || len(b.hosts) != 0 || len(b.tenants) != 0 || len(b.served) != 0 {
		t.Errorf("after every slot came back: held %d, hosts %v, tenants %v, served %v", b.held, b.hosts, b.tenants, b.served)
	}
	for _, l := range b.levels {
		if l.waiting != 0 || len(l.tenants) != 0 {
			t.Errorf("a level still has waiters: %+v", l)
		}
	}
}

// An ask whose context ends while it waits gives up with the context's
// error; one granted just as it gave up hands the slot on.
func TestSlotsAcquireGivesUpWithItsContext(t *testing.T) {
	s := newSlotQueue(SlotLimits{All: 1, PerHost: 1, PerTenant: 1})
	hold, err := s.Acquire(t.Context(), SlotAsk{Tenant: "a", Host: "h", Level: pacing.User})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := s.Acquire(ctx, SlotAsk{Tenant: "b", Host: "h", Level: pacing.User}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("an ask with no free slot ended with %v, want %v", err, context.DeadlineExceeded)
	}
	if n := s.Waiting(pacing.User); n != 0 {
		t.Fatalf("%d asks still wait after giving up", n)
	}
	got := make(chan func(), 1)
	go func() {
		next, err := s.Acquire(t.Context(), SlotAsk{Tenant: "c", Host: "h", Level: pacing.Periodic})
		if err == nil {
			got <- next
		}
	}()
	for s.Waiting(pacing.Periodic) != 1 {
		time.Sleep(time.Millisecond)
	}
	hold()
	select {
	case next := <-got:
		next()
	case <-time.After(5 * time.Second):
		t.Fatal("the slot given back did not reach the waiter")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.book.held != 0 || len(s.granted) != 0 {
		t.Errorf("held %d, %d grants pending after all came back", s.book.held, len(s.granted))
	}
}
