package redact

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// The search reads a text as a graph: its positions are the nodes and each
// unit decodeAt finds is an edge, labeled with the bytes it stands for. An
// encoding of a pattern is a path whose labels spell the pattern. Trying
// each position and following each partial match, as the scrubber once did,
// costs len(text)·len(pattern) steps when both repeat one character; here
// each pattern is followed by a KMP automaton in one pass over the text
// forwards (where encodings end) and one backwards (where they start).
//
// A position may be reached by several paths, in several automaton states.
// A state whose string is a suffix of another's (a border, an ancestor in
// the failure tree) finds no match the other would not also find, so a
// position keeps only states that are no border of each other: one on
// ordinary text, a handful where escapes overlap. Every step is counted
// against the caller's work budget, which bounds what a text crafted to
// keep many states alive can cost.

// maxStates bounds the states kept at one position; more can only come
// from a text made to be expensive, and fails the search (closed).
const maxStates = 32

// ring is how many positions' states are kept at once: more than the
// longest unit, so that the states at the far end of any edge are at hand.
const ring = 32

// automaton is the KMP automaton of one pattern, read forwards or
// backwards (then p is the pattern reversed).
type automaton struct {
	p []byte
	// fail[s] is the longest proper border of p[:s]; fail[0] is -1.
	fail []int32
	// skip[s] is the longest border b of p[:s] where reading p[b] differs
	// from reading p[s], -1 if none: where p[s] failed to match, p[b]
	// would fail too. With it a step takes O(log len(p)) falls back at
	// most, however the text branches (Knuth, Morris and Pratt 1977).
	skip []int32
	// in and out number the failure tree in preorder: a is a border of b,
	// or b itself, when in[a] <= in[b] < out[a].
	in, out []int32
}

func newAutomaton(p []byte) *automaton {
	m := len(p)
	a := &automaton{p: p, fail: make([]int32, m+1), in: make([]int32, m+1), out: make([]int32, m+1)}
	a.fail[0] = -1
	k := int32(-1)
	for i := range m {
		for k >= 0 && p[k] != p[i] {
			k = a.fail[k]
		}
		k++
		a.fail[i+1] = k
	}
	a.skip = make([]int32, m+1)
	for s := range m + 1 {
		b := a.fail[s]
		if s < m && b >= 0 && p[b] == p[s] {
			b = a.skip[b]
		}
		a.skip[s] = b
	}
	// A state's parent is smaller than it: sizes from the leaves up, then
	// preorder numbers from the root down.
	size := a.out // reused: out[s] = in[s] + size[s] below
	for s := range size {
		size[s] = 1
	}
	for s := m; s > 0; s-- {
		size[a.fail[s]] += size[s]
	}
	next := make([]int32, m+1)
	next[0] = 1
	for s := 1; s <= m; s++ {
		parent := a.fail[s]
		a.in[s] = next[parent]
		next[parent] += size[s]
		next[s] = a.in[s] + 1
	}
	for s := range a.out {
		a.out[s] += a.in[s]
	}
	return a
}

// isBorder reports whether state x is state y or a border of it.
func (a *automaton) isBorder(x, y int32) bool { return a.in[x] <= a.in[y] && a.in[y] < a.out[x] }

// step is the state after reading c in state s.
func (a *automaton) step(s int32, c byte, w *work) int32 {
	for ; s >= 0; s = a.skip[s] {
		w.steps++
		if int(s) < len(a.p) && a.p[s] == c {
			return s + 1
		}
	}
	return 0
}

// occursIn reports whether a's pattern occurs in text, read as bytes.
func (a *automaton) occursIn(text string, w *work) bool {
	var st int32
	for i := 0; i < len(text); i++ {
		if st == 0 {
			j := strings.IndexByte(text[i:], a.p[0])
			if j < 0 {
				return false
			}
			i += j
		}
		st = a.step(st, text[i], w)
		if int(st) == len(a.p) {
			return true
		}
	}
	return false
}

// stateSet is the states kept at one position, in place: no slice to
// grow, nothing for the garbage collector to follow.
type stateSet struct {
	n int
	s [maxStates + 1]int32
}

func (set *stateSet) states() []int32 { return set.s[:set.n] }

func (set *stateSet) has(t int32) bool { return slices.Contains(set.states(), t) }

// add adds state t to set, keeping only states that are no border of
// another. It reports false when that makes more than maxStates.
func (a *automaton) add(set *stateSet, t int32) bool {
	kept := 0
	for _, s := range set.states() {
		if a.isBorder(t, s) {
			return true
		}
		if !a.isBorder(s, t) {
			set.s[kept] = s
			kept++
		}
	}
	set.s[kept] = t
	set.n = kept + 1
	return set.n <= maxStates
}

// edge is a unit as the search reads it: where it ends and the bytes it
// stands for.
type edge struct {
	end   int32
	n     uint8
	bytes [utf8.UTFMax]byte
}

func (e *edge) label() []byte { return e.bytes[:e.n] }

// edgesAt returns the edges leaving position i of text.
func edgesAt(text string, i int, buf []unit, out []edge) []edge {
	for _, u := range decodeAt(text, i, buf) {
		e := edge{end: int32(u.end)}
		switch {
		case u.isByte:
			e.n, e.bytes[0] = 1, byte(u.r)
		case utf8.ValidRune(u.r):
			e.n = uint8(utf8.EncodeRune(e.bytes[:], u.r))
		default: // a lone surrogate, or past the last code point
			continue
		}
		out = append(out, e)
	}
	return out
}

// states are the states of one automaton at the positions a pass holds.
type states [ring]stateSet

// forward reads text once, front to back, with every automaton, and
// returns for each the positions, in order, where it reached its pattern's
// end: where an encoding of the pattern ends. Each position is decoded
// once for all of them; each edge counts as a step.
func forward(text string, autos []*automaton, w *work) ([][]int, error) {
	sets := make([]states, len(autos))
	hits := make([][]int, len(autos))
	for k := range autos {
		sets[k][0].n = 1
	}
	var units [maxUnits]unit
	var buf [maxUnits]edge
	for i := 0; ; i++ {
		for k, a := range autos {
			if sets[k][i%ring].has(int32(len(a.p))) {
				hits[k] = append(hits[k], i)
			}
		}
		if i == len(text) {
			return hits, nil
		}
		edges := edgesAt(text, i, units[:0], buf[:0])
		w.steps += int64(len(edges))
		for k, a := range autos {
			cur := &sets[k][i%ring]
			for j := range edges {
				e := &edges[j]
				slot := &sets[k][int(e.end)%ring]
				for _, s := range cur.states() {
					for _, c := range e.label() {
						s = a.step(s, c, w)
					}
					w.steps += int64(slot.n)
					if !a.add(slot, s) {
						return nil, errTooManyStates
					}
				}
			}
			cur.n = 0
		}
		if err := w.check(i); err != nil {
			return nil, err
		}
	}
}

// backward is forward read back to front, with automata of the reversed
// patterns: it returns where encodings of the patterns start.
func backward(text string, autos []*automaton, w *work) ([][]int, error) {
	sets := make([]states, len(autos))
	hits := make([][]int, len(autos))
	for k := range autos {
		sets[k][len(text)%ring].n = 1
	}
	var units [maxUnits]unit
	var buf [maxUnits]edge
	for i := len(text) - 1; i >= 0; i-- {
		edges := edgesAt(text, i, units[:0], buf[:0])
		w.steps += int64(len(edges))
		for k, a := range autos {
			set := &sets[k][i%ring]
			set.n = 0
			for j := range edges {
				e := &edges[j]
				for _, s := range sets[k][int(e.end)%ring].states() {
					for _, c := range slices.Backward(e.label()) {
						s = a.step(s, c, w)
					}
					w.steps += int64(set.n)
					if !a.add(set, s) {
						return nil, errTooManyStates
					}
				}
			}
			if set.has(int32(len(a.p))) {
				hits[k] = append(hits[k], i)
			}
		}
		if err := w.check(i); err != nil {
			return nil, err
		}
	}
	for _, h := range hits {
		slices.Reverse(h)
	}
	return hits, nil
}

// matcher finds the encodings of one pattern.
type matcher struct {
	pattern
	forward, backward *automaton
}

func newMatcher(p pattern) matcher {
	reversed := []byte(p.text)
	slices.Reverse(reversed)
	return matcher{pattern: p, forward: newAutomaton([]byte(p.text)), backward: newAutomaton(reversed)}
}

// reach is the most bytes an encoding of the pattern can span.
func (m matcher) reach() int { return maxBytesPerByte * len(m.text) }

// pair returns where the pattern's encodings are, from where they end
// and where they start, both in order. An encoding ending at j starts at
// one of the starts within reach before it; the earliest is taken. Only
// when two encodings lie within reach of each other can that cover more
// than one of them, and then it covers the text between them too: more is
// redacted, never less.
func (m matcher) pair(ends, starts []int) []span {
	var spans []span
	k := 0
	for _, j := range ends {
		for k < len(starts) && starts[k] < j-m.reach() {
			k++
		}
		// A unit stands for no more bytes than it spans: an encoding
		// spans at least len(text) bytes.
		start := max(0, j-m.reach()) // unreachable: every end has its start
		if k < len(starts) && starts[k] <= j-len(m.text) {
			start = starts[k]
		}
		spans = appendMerged(spans, span{start, j})
	}
	return spans
}
