package bound

import (
	"cmp"
	"maps"
	"slices"
	"strings"
)

// Tally counts things by name when the names are someone else's words (a
// state the cloud sends for each of a million pipes): at most a bounded
// number of names, each cut to a bounded length, are counted by name while
// counting, and the rest under one other name.
type Tally struct {
	counts       map[string]int32
	maxNames     int
	maxNameBytes int
	other        string
}

// NewTally counts by at most maxNames names of at most maxNameBytes bytes
// each; the rest are counted under other.
func NewTally(maxNames, maxNameBytes int, other string) Tally {
	return Tally{counts: map[string]int32{}, maxNames: maxNames, maxNameBytes: maxNameBytes, other: other}
}

// Add counts one of name.
func (t Tally) Add(name string) {
	name = Cut(name, t.maxNameBytes)
	if _, named := t.counts[name]; !named && len(t.counts) >= t.maxNames {
		name = t.other
	}
	t.counts[name]++
}

// Top is the tally with at most n names: the n-1 names counted most (ties by
// name) keep theirs and the rest are counted under the other name. It is nil
// when nothing was counted.
func (t Tally) Top(n int) map[string]int32 {
	if len(t.counts) == 0 {
		return nil
	}
	top := maps.Clone(t.counts)
	if len(top) <= n {
		return top
	}
	other := top[t.other]
	delete(top, t.other)
	names := slices.Collect(maps.Keys(top))
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(top[b], top[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for _, name := range names[n-1:] {
		other += top[name]
		delete(top, name)
	}
	top[t.other] = other
	return top
}

// Remove takes back one Add of name: the count it went to (name's, or
// other's) loses one, and a name whose count reaches zero is no longer
// named.
func (t Tally) Remove(name string) {
	name = Cut(name, t.maxNameBytes)
	if _, named := t.counts[name]; !named {
		name = t.other
	}
	t.counts[name]--
	if t.counts[name] <= 0 {
		delete(t.counts, name)
	}
}
