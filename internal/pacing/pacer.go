package pacing

// Pacer holds the books of one reconciler: when each watch syncs next, its
// phase, what it asks of its budgets, its claims on them and its place in
// their lines. K names a
// watch, R a read.
type Pacer[K, R comparable] struct {
	Schedules *Schedules[K]
	Phases    *Phases[K]
	Demands   *Demands[K, R]
	Claims    *Claims[K]
	Queue     *Queue[K]
	Turns     *Turns[K]
}

// New returns empty books.
func New[K, R comparable]() *Pacer[K, R] {
	return &Pacer[K, R]{Schedules: NewSchedules[K](), Phases: NewPhases[K](), Demands: NewDemands[K, R](), Claims: NewClaims[K](), Queue: NewQueue[K](), Turns: NewTurns[K]()}
}

// Forget drops everything the books hold of a watch that went away.
func (p *Pacer[K, R]) Forget(key K) {
	p.Schedules.Forget(key)
	p.Phases.Forget(key)
	p.Demands.Forget(key)
	p.Claims.Release(key)
	p.Queue.Forget(key)
	p.Turns.Forget(key)
}
