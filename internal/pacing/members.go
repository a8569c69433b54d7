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
