package tenancy

import (
	"fmt"
	"sync"
)

// The default budgets, for the Deployment's 256 MiB memory limit (and
// GOMEMLIMIT=256MiB). By the project's own figures (docs/benchmarks.md,
// "Memory"), a watch whose answers are the worst for memory costs the
// manager about 3.6 MiB all told (memory-worst-60: 276 MiB for 60 such
// watches, 58 MiB for one alone), about 4.5 times the 800 KiB its status
// keeps. DefaultManagerStatusBytes, 32 MiB, is 40 such statuses: 58 + 40 × 3.6 =
// 202 MiB, some 54 MiB under the limit. DefaultNamespaceStatusBytes, 8 MiB, is 10
// of them, so that it takes four namespaces at the worst case to fill the
// manager's budget; an ordinary watch's status keeps a few KiB, so a
// namespace holds well over a thousand of those.
const (
	DefaultNamespaceStatusBytes = 8 << 20
	DefaultManagerStatusBytes   = 32 << 20
)

// StatusBudget is one bound on the bytes statuses keep, and the setting a user
// changes it with, named in the messages that report it. Bytes <= 0: no
// bound.
type StatusBudget struct {
	Bytes   int
	Setting string
}

// StatusLedger books what each watch's status keeps, the fixed part (conditions,
// counts, room for messages) as well as the lists. Within a namespace, room
// is handed out first come, first kept: a watch keeps the room it holds as
// long as it exists, so that a new watch never takes the data of one its
// namespace already shows, and the same watches in the same order are always
// cut the same way. Between namespaces, the manager's budget is divided: each
// namespace with watches may keep an equal part of it (and no more than the
// namespace budget), whatever the others keep, so that the parts together
// never pass it. A namespace that comes has its part at once; one that kept
// more than its new part is cut to it as its watches write again. A watch
// cut to nothing still keeps its fixed part (a few KiB), which no budget can
// refuse and which is booked too: a namespace with very many watches passes
// its part by that much per watch, has its own lists cut to nothing, and
// takes nothing of another namespace's part. A nil StatusLedger bounds nothing and
// books nothing.
type StatusLedger struct {
	namespace, manager StatusBudget

	mu      sync.Mutex
	held    map[watchKey]int
	byNS    map[string]int
	inTotal int
}

type watchKey struct{ namespace, name string }

// NewStatusLedger returns a ledger with a budget per namespace and one for the manager.
func NewStatusLedger(namespace, manager StatusBudget) *StatusLedger {
	return &StatusLedger{namespace: namespace, manager: manager, held: map[watchKey]int{}, byNS: map[string]int{}}
}

// StatusGrant is the room a watch may keep for one status write.
type StatusGrant struct {
	// Bytes is the most the watch's status may keep: at least 1 (a status
	// size limit of 0 would bound nothing).
	Bytes int
	// why says which budget bounds Bytes below what the watch asked for;
	// "" when none does.
	why    string
	ledger *StatusLedger
	key    watchKey
}

// Room returns how many of want bytes the watch namespace/name may keep
// with the lists a sync read (newLists; a write that keeps the lists it has
// is not bounded again): what the namespace budget and the namespace's part
// of the manager's budget leave once the namespace's other watches are
// counted. The grant is booked for the watch at once, so that watches
// written at the same moment do not share the same room, until Kept books
// what the status keeps. Its reason names the watch's own namespace and the
// settings only: never what other namespaces keep, how many there are, nor
// what all watches keep.
func (l *StatusLedger) Room(namespace, name string, want int, newLists bool) StatusGrant {
	if l == nil || !newLists {
		return StatusGrant{Bytes: want}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	key := watchKey{namespace, name}
	siblings := l.byNS[namespace] - l.held[key] // the namespace's other watches
	g := StatusGrant{Bytes: want, ledger: l, key: key}
	if left, ok := leftOf(l.namespace, siblings); ok && left < g.Bytes {
		g.Bytes, g.why = left, fmt.Sprintf("the other watches of namespace %s keep %d KiB of the %d KiB its watches may keep together (%s)",
			namespace, siblings>>10, l.namespace.Bytes>>10, l.namespace.Setting)
	}
	if left, ok := l.managerRoomOf(namespace, siblings); ok && left < g.Bytes {
		g.Bytes, g.why = left, fmt.Sprintf("the other watches of namespace %s keep %d KiB of its part of the room all statuses share (%s)",
			namespace, siblings>>10, l.manager.Setting)
	}
	l.set(key, g.Bytes)
	g.Bytes = max(1, g.Bytes)
	return g
}

// managerRoomOf is what the manager's budget leaves a watch of namespace
// whose other watches keep siblings bytes, and whether that budget bounds
// anything: the namespace's part (partOf) less what its other watches keep.
// What other namespaces keep does not count: they are bounded by their own
// parts, so what one namespace keeps, however many watches it has, never
// takes another's part.
func (l *StatusLedger) managerRoomOf(namespace string, siblings int) (int, bool) {
	if l.manager.Bytes <= 0 {
		return 0, false
	}
	return max(0, l.partOf(namespace)-siblings), true
}

// partOf is the part of the manager's budget that each namespace with
// watches, namespace among them, may keep: an equal part, so that the parts
// together never pass the manager's budget.
func (l *StatusLedger) partOf(namespace string) int {
	n := len(l.byNS)
	if _, ok := l.byNS[namespace]; !ok {
		n++
	}
	return l.manager.Bytes / n
}

// leftOf is what b leaves once others bytes are kept, and whether b bounds
// anything.
func leftOf(b StatusBudget, others int) (int, bool) {
	if b.Bytes <= 0 {
		return 0, false
	}
	return max(0, b.Bytes-others), true
}

// Kept books size() as what the watch's status keeps, in place of the
// grant, and returns what its status says of the grant: why the lists were
// cut past what the status size limit asks ("; " and the reason), or ""
// when no budget bounded them. A grant from a nil ledger or for old lists
// books nothing and does not call size.
func (g StatusGrant) Kept(size func() int) string {
	if g.ledger == nil {
		return ""
	}
	g.ledger.Hold(g.key.namespace, g.key.name, size())
	if g.why == "" {
		return ""
	}
	return "; " + g.why
}

// Hold books bytes as what the watch namespace/name keeps now, in place of
// what it booked before.
func (l *StatusLedger) Hold(namespace, name string, bytes int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.set(watchKey{namespace, name}, bytes)
}

// HoldIfNew books what the watch keeps (size, asked only then) if it has
// booked nothing yet: a watch the manager finds at start keeps its place,
// counted before any other watch asks for room.
func (l *StatusLedger) HoldIfNew(namespace, name string, size func() int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	key := watchKey{namespace, name}
	if _, ok := l.held[key]; !ok {
		l.set(key, size())
	}
}

// Release forgets a watch that went away; its room is free for the others.
func (l *StatusLedger) Release(namespace, name string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	key := watchKey{namespace, name}
	l.set(key, 0)
	delete(l.held, key)
}

// Kept returns what the watches of namespace keep together, and what all
// watches keep.
func (l *StatusLedger) Kept(namespace string) (inNamespace, inTotal int) {
	if l == nil {
		return 0, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byNS[namespace], l.inTotal
}

func (l *StatusLedger) set(key watchKey, bytes int) {
	diff := bytes - l.held[key]
	l.held[key] = bytes
	l.byNS[key.namespace] += diff
	l.inTotal += diff
	if l.byNS[key.namespace] == 0 {
		delete(l.byNS, key.namespace)
	}
}
