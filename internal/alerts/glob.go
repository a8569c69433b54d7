package alerts

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// A name pattern is matched in time linear in the name, whatever the
// pattern: a tenant's host decides the names (one alert name may fill a
// 16 MiB answer) and every watch sharing the host's list matches each of
// them, so a matcher that backtracks (pattern length × name length: 1.5 s
// of a core for a 256-character pattern and a 4 MiB name) would let one
// tenant spend the manager's CPU for everyone. The pattern is compiled once
// per selector: split at its stars into segments, a match is the first
// segment at the name's start, the last at its end, and each segment
// between at its leftmost place after the previous one. Leftmost is never
// worse than any later place, because a segment matches a fixed number of
// characters, so no choice is ever revisited. A segment without ? is found
// with Knuth-Morris-Pratt (skipping to its first byte with
// strings.IndexByte), one with ? by bit-parallel Shift-And over the
// name's characters: either examines each byte of the name a bounded
// number of times (Shift-And one machine word per 64 characters of the
// segment per character).

// anyRune is the token of ? in a compiled segment: it matches any one
// character. A rune decoded from a string is never negative.
const anyRune rune = -1

// Pattern is a name pattern compiled once for every name it is matched
// against (see Glob for its grammar). It is immutable: safe for concurrent
// use.
type Pattern struct {
	// segments are the runs between stars; with no star, one segment that
	// must be the whole name.
	segments []segment
	starred  bool
}

// segment is a run of a pattern between stars: characters and ?.
type segment struct {
	tokens []rune
	// literal is the segment's UTF-8 when it has no ?; "" otherwise.
	literal string
	// fail is Knuth-Morris-Pratt's failure function of literal: fail[q]
	// is the length of the longest proper prefix of literal[:q+1] that is
	// also its suffix.
	fail []int
	// shiftAnd finds a segment with ?; nil for a literal one.
	shiftAnd *shiftAnd
}

// CompilePattern compiles pattern, any string: every pattern is valid.
func CompilePattern(pattern string) *Pattern {
	parts := strings.Split(pattern, "*")
	p := &Pattern{starred: len(parts) > 1}
	for i, part := range parts {
		middle := i > 0 && i < len(parts)-1
		if part == "" && middle {
			continue // a run of stars is one star
		}
		p.segments = append(p.segments, compileSegment(part))
	}
	return p
}

// compileSegment compiles a run of a pattern without stars.
func compileSegment(part string) segment {
	s := segment{tokens: []rune(part)} // an invalid byte is U+FFFD, as in the name
	for i, r := range s.tokens {
		if r == '?' {
			s.tokens[i] = anyRune
		}
	}
	if !slices.Contains(s.tokens, anyRune) {
		s.literal = string(s.tokens)
		s.fail = failureFunction(s.literal)
		return s
	}
	s.shiftAnd = newShiftAnd(s.tokens)
	return s
}

// failureFunction is Knuth-Morris-Pratt's failure function of lit.
func failureFunction(lit string) []int {
	fail := make([]int, len(lit))
	k := 0
	for q := 1; q < len(lit); q++ {
		for k > 0 && lit[q] != lit[k] {
			k = fail[k-1]
		}
		if lit[q] == lit[k] {
			k++
		}
		fail[q] = k
	}
	return fail
}

// Match tells whether name matches the pattern whole.
func (p *Pattern) Match(name string) bool {
	var steps int64
	return p.match(name, &steps)
}

// match is Match, adding the steps it took to *steps: each a byte or a
// character examined, or a machine word of Shift-And, a few nanoseconds
// at most. They are linear in len(name): at most about
// 3×len(name) + len(pattern) + ⌈len(pattern)/64⌉×len(name).
func (p *Pattern) match(name string, steps *int64) bool {
	*steps += int64(len(name)) // utf8.ValidString
	if !utf8.ValidString(name) {
		name = validUTF8(name, steps)
	}
	if !p.starred {
		end, ok := p.segments[0].prefix(name, steps)
		return ok && end == len(name)
	}
	first, last := &p.segments[0], &p.segments[len(p.segments)-1]
	start, ok := first.prefix(name, steps)
	if !ok {
		return false
	}
	end, ok := last.suffix(name, steps)
	if !ok || end < start {
		return false
	}
	rest := name[start:end]
	for i := 1; i < len(p.segments)-1; i++ {
		after, ok := p.segments[i].index(rest, steps)
		if !ok {
			return false
		}
		rest = rest[after:]
	}
	return true
}

// validUTF8 is s with each byte that is not part of a valid UTF-8 sequence
// replaced by U+FFFD, as []rune(s) reads it: the pattern's characters are
// then compared byte for byte.
func validUTF8(s string, steps *int64) string {
	*steps += int64(len(s))
	b := make([]byte, 0, len(s)+len(s)/2)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}

// prefix tells whether name starts with the segment, and where the match
// ends.
func (s *segment) prefix(name string, steps *int64) (end int, ok bool) {
	if s.shiftAnd == nil {
		*steps += int64(len(s.literal))
		return len(s.literal), strings.HasPrefix(name, s.literal)
	}
	for _, t := range s.tokens {
		*steps++
		r, size := utf8.DecodeRuneInString(name[end:])
		if size == 0 || (t != anyRune && t != r) {
			return 0, false
		}
		end += size
	}
	return end, true
}

// suffix tells whether name ends with the segment, and where the match
// starts.
func (s *segment) suffix(name string, steps *int64) (start int, ok bool) {
	if s.shiftAnd == nil {
		*steps += int64(len(s.literal))
		return len(name) - len(s.literal), strings.HasSuffix(name, s.literal)
	}
	start = len(name)
	for _, t := range slices.Backward(s.tokens) {
		*steps++
		r, size := utf8.DecodeLastRuneInString(name[:start])
		if size == 0 || (t != anyRune && t != r) {
			return 0, false
		}
		start -= size
	}
	return start, true
}

// index finds the segment's leftmost match in text, and where it ends.
func (s *segment) index(text string, steps *int64) (end int, ok bool) {
	if s.shiftAnd != nil {
		return s.shiftAnd.index(text, steps)
	}
	return s.indexLiteral(text, steps)
}

// indexLiteral is Knuth-Morris-Pratt: each byte of text is examined at
// most twice (once forward, once per fallback it paid for). Where no byte
// of the literal is matched yet, strings.IndexByte skips to the next
// candidate.
func (s *segment) indexLiteral(text string, steps *int64) (end int, ok bool) {
	lit, fail := s.literal, s.fail
	q, n := 0, int64(0)
	defer func() { *steps += n }()
	for i := 0; i < len(text); i++ {
		if q == 0 {
			skip := strings.IndexByte(text[i:], lit[0])
			if skip < 0 {
				n += int64(len(text) - i)
				return 0, false
			}
			n += int64(skip)
			i += skip
		}
		c := text[i]
		for q > 0 && c != lit[q] {
			n++
			q = fail[q-1]
		}
		n++
		if c == lit[q] {
			q++
			if q == len(lit) {
				return i + 1, true
			}
		}
	}
	return 0, false
}

// shiftAnd finds a segment with ? by bit-parallel simulation of its
// automaton: bit j of the state says that the characters read so far end
// with a match of the segment's first j+1 tokens.
type shiftAnd struct {
	words int
	// last is the bit of the last token in the state's last word.
	last uint64
	// any are the positions of ?, which every character may take.
	any []uint64
	// ascii are the positions each ASCII character may take (any
	// included), words per character.
	ascii []uint64
	// others are the positions of the other characters of the segment.
	others map[rune][]uint64
}

func newShiftAnd(tokens []rune) *shiftAnd {
	words := (len(tokens) + 63) / 64
	sa := &shiftAnd{words: words, last: 1 << uint((len(tokens)-1)%64), any: make([]uint64, words),
		ascii: make([]uint64, utf8.RuneSelf*words), others: map[rune][]uint64{}}
	for j, t := range tokens {
		w, bit := j/64, uint64(1)<<uint(j%64)
		switch {
		case t == anyRune:
			sa.any[w] |= bit
		case t < utf8.RuneSelf:
			sa.ascii[int(t)*words+w] |= bit
		default:
			if sa.others[t] == nil {
				sa.others[t] = make([]uint64, words)
			}
			sa.others[t][w] |= bit
		}
	}
	for c := range utf8.RuneSelf {
		for w := range words {
			sa.ascii[c*words+w] |= sa.any[w]
		}
	}
	for _, mask := range sa.others {
		for w := range words {
			mask[w] |= sa.any[w]
		}
	}
	return sa
}

// index finds the leftmost match in text, and where it ends: one step per
// machine word of the state per character of text.
func (sa *shiftAnd) index(text string, steps *int64) (end int, ok bool) {
	var buf [4]uint64
	state := buf[:0]
	if sa.words > len(buf) {
		state = make([]uint64, 0, sa.words)
	}
	state = state[:sa.words]
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		i += size
		mask := sa.maskOf(r)
		carry := uint64(1) // a match of the first token may start at every character
		for w := range state {
			next := state[w]<<1 | carry
			carry = state[w] >> 63
			state[w] = next & mask[w]
		}
		*steps += int64(sa.words)
		if state[sa.words-1]&sa.last != 0 {
			return i, true
		}
	}
	return 0, false
}

// maskOf are the positions character r may take.
func (sa *shiftAnd) maskOf(r rune) []uint64 {
	if r < utf8.RuneSelf {
		return sa.ascii[int(r)*sa.words : (int(r)+1)*sa.words]
	}
	if mask, ok := sa.others[r]; ok {
		return mask
	}
	return sa.any
}
