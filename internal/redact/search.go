package redact

import (
	"slices"
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

// add adds state t to set, keeping only states that are no border of
// another.
func (a *automaton) add(set []int32, t int32) []int32 {
	if len(set) == 0 {
		return append(set, t)
	}
	for _, s := range set {
		if a.isBorder(t, s) {
			return set
		}
	}
	kept := set[:0]
	for _, s := range set {
		if !a.isBorder(s, t) {
			kept = append(kept, s)
		}
	}
	return append(kept, t)
}

// edge is a unit as the search reads it: where it ends and the bytes it
// stands for.
type edge struct {
	end   int32
	n     uint8
	bytes [utf8.UTFMax]byte
}

func (e *edge) label() []byte { return e.bytes[:e.n] }

// graph holds the edges of a text, those leaving position i at
// edges[first[i]:first[i+1]].
type graph struct {
	first []int32
	edges []edge
}

func newGraph(text string) *graph {
	g := &graph{first: make([]int32, len(text)+1), edges: make([]edge, 0, len(text)+len(text)/8)}
	var buf [maxUnits]unit
	for i := range len(text) {
		g.first[i] = int32(len(g.edges))
		for _, u := range decodeAt(text, i, buf[:0]) {
			e := edge{end: int32(u.end)}
			switch {
			case u.isByte:
				e.n, e.bytes[0] = 1, byte(u.r)
			case utf8.ValidRune(u.r):
				e.n = uint8(utf8.EncodeRune(e.bytes[:], u.r))
			default: // a lone surrogate, or past the last code point
				continue
			}
			g.edges = append(g.edges, e)
		}
	}
	g.first[len(text)] = int32(len(g.edges))
	return g
}

func (g *graph) from(i int) []edge { return g.edges[g.first[i]:g.first[i+1]] }

// ends returns, in order, the positions where an encoding of a's pattern
// ends.
func (a *automaton) ends(g *graph, w *work) ([]int, error) {
	var sets [ring][]int32
	sets[0] = append(sets[0], 0)
	full := int32(len(a.p))
	var ends []int
	n := len(g.first) - 1
	for i := 0; i <= n; i++ {
		cur := sets[i%ring]
		if slices.Contains(cur, full) {
			ends = append(ends, i)
		}
		if i == n {
			break
		}
		edges := g.from(i)
		for k := range edges {
			e := &edges[k]
			slot := &sets[int(e.end)%ring]
			for _, s := range cur {
				for _, c := range e.label() {
					s = a.step(s, c, w)
				}
				*slot = a.add(*slot, s)
			}
			if len(*slot) > maxStates {
				return nil, errTooManyStates
			}
		}
		sets[i%ring] = cur[:0]
		if err := w.check(i); err != nil {
			return nil, err
		}
	}
	return ends, nil
}

// starts returns, in order, the positions where an encoding of the
// pattern starts; a reads the pattern reversed.
func (a *automaton) starts(g *graph, w *work) ([]int, error) {
	var sets [ring][]int32
	n := len(g.first) - 1
	sets[n%ring] = append(sets[n%ring], 0)
	full := int32(len(a.p))
	var starts []int
	for i := n - 1; i >= 0; i-- {
		set := sets[i%ring][:0]
		edges := g.from(i)
		for k := range edges {
			e := &edges[k]
			label := e.label()
			for _, s := range sets[int(e.end)%ring] {
				for _, c := range slices.Backward(label) {
					s = a.step(s, c, w)
				}
				set = a.add(set, s)
			}
			if len(set) > maxStates {
				return nil, errTooManyStates
			}
		}
		sets[i%ring] = set
		if slices.Contains(set, full) {
			starts = append(starts, i)
		}
		if err := w.check(i); err != nil {
			return nil, err
		}
	}
	slices.Reverse(starts)
	return starts, nil
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

// spans returns where the pattern's encodings are in g. An encoding ending
// at j starts at one of the starts found within reach before it; the
// earliest is taken. Only when two encodings lie within reach of each other
// can that cover more than one of them, and then it covers the text between
// them too: more is redacted, never less.
func (m matcher) spans(g *graph, w *work) ([]span, error) {
	ends, err := m.forward.ends(g, w)
	if err != nil || len(ends) == 0 {
		return nil, err
	}
	starts, err := m.backward.starts(g, w)
	if err != nil {
		return nil, err
	}
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
	return spans, nil
}
