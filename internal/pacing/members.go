package pacing

// members remembers at which level each watch stands on each budget it
// waits for or claims, so that a watch that goes away is found on its own
// budgets without a walk over all of them.
type members[K comparable] map[K]map[string]Level

// of is the watch's level on the budget, if it stands there.
func (m members[K]) of(key K, budget string) (Level, bool) {
	l, ok := m[key][budget]
	return l, ok
}

// set records the watch at level on the budget.
func (m members[K]) set(key K, budget string, l Level) {
	if m[key] == nil {
		m[key] = map[string]Level{}
	}
	m[key][budget] = l
}

// drop forgets the watch on the budget.
func (m members[K]) drop(key K, budget string) {
	delete(m[key], budget)
	if len(m[key]) == 0 {
		delete(m, key)
	}
}

// levelSet is the watches of one level on one budget, in claims (claimSet)
// and in queue (line).
type levelSet[K comparable, S any] interface {
	*S
	// remove takes the watch out; a set left empty starts over.
	remove(key K)
	empty() bool
}

// leaveAll takes the watch out of its sets on every budget (see leave).
func leaveAll[K comparable, S any, P levelSet[K, S]](of members[K], budgets map[string]*[Levels]S, key K) {
	for budget := range of[key] {
		leave[K, S, P](of, budgets, budget, key)
	}
}

// leave takes the watch out of its set on the budget, if it stands in one;
// a budget with no watch left goes.
func leave[K comparable, S any, P levelSet[K, S]](of members[K], budgets map[string]*[Levels]S, budget string, key K) {
	level, ok := of.of(key, budget)
	if !ok {
		return
	}
	of.drop(key, budget)
	sets := budgets[budget]
	P(&sets[level]).remove(key)
	dropIfEmpty[K, S, P](budgets, budget)
}

// dropIfEmpty drops the budget when none of its sets holds a watch.
func dropIfEmpty[K comparable, S any, P levelSet[K, S]](budgets map[string]*[Levels]S, budget string) {
	sets := budgets[budget]
	if sets == nil {
		return
	}
	for l := range sets {
		if !P(&sets[l]).empty() {
			return
		}
	}
	delete(budgets, budget)
}

// setOf is the set of the level on the budget, the budget's sets made when
// it has none.
func setOf[S any](budgets map[string]*[Levels]S, budget string, level Level) *S {
	sets := budgets[budget]
	if sets == nil {
		sets = &[Levels]S{}
		budgets[budget] = sets
	}
	return &sets[level]
}
