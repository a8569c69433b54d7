package slim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/servicewatch/servicewatch/internal/bound"
)

// MinCap is the least a list slims an item to by cutting inside it: under
// it an item is about its identity already, and a list that still does not
// fit is cut to identities when they fit (Identities), else by whole items
// (as the list keeper's, internal/cloudapi/lenient).
const MinCap = 1024

// List returns items with the big ones slimmed (see Item) so that their
// charges (bound.Charges) sum to at most budget, if slimming each to MinCap
// can get there: all items above a common cap, the level at which the list
// would fit, are cut to it, lowered by an eighth at least each round until
// the list fits or the cap is MinCap. items is not changed; the same items
// always give the same list.
func List[T any](items []T, budget int, shape Shape) []T {
	return New[T](shape).List(items, budget)
}

// List is the package's List with this Slimmer's work charge: a list whose
// slimming runs out of work is left as far as it got. A list that does not
// fit with its items at MinCap has items cut to their identities (see
// Identities): of the longest prefix whose identities fit, so that whole
// items go from its end only for want of room for their identities.
func (s *Slimmer[T]) List(items []T, budget int) []T {
	charges := bound.Charges(items)
	if sum(charges) <= budget {
		return items
	}
	out := slices.Clone(items)
	limit := math.MaxInt
	for sum(charges) > budget && limit > MinCap {
		limit = max(MinCap, min(Level(charges, budget), limit-limit/8))
		for i := range out {
			if charges[i] <= limit {
				continue
			}
			small, charge, err := s.Slim(&out[i], limit)
			if err != nil {
				return out
			}
			out[i], charges[i] = small, charge+1 // and its comma
		}
	}
	if sum(charges) > budget {
		_, _ = s.Identities(out, charges, budget) // run out of work: as far as it got
	}
	return out
}

// Level is the largest level such that the charges, each capped at it, sum
// to at most budget (math.MaxInt when they fit as they are).
func Level(charges []int, budget int) int {
	sorted := slices.Sorted(slices.Values(charges))
	rest := budget
	for i, c := range sorted {
		left := len(sorted) - i
		if c*left > rest {
			return max(0, rest/left)
		}
		rest -= c
	}
	return math.MaxInt
}

func sum(charges []int) int {
	n := 0
	for _, c := range charges {
		n += c
	}
	return n
}

// Cuts describes (see Describe) each item slimming cut, in list order; of
// says which item an entry is and what its omitted record holds.
func Cuts[T any](noun string, items []T, of func(*T) (id *string, omitted map[string]int32)) []string {
	var out []string
	for i := range items {
		id, omitted := of(&items[i])
		if len(omitted) > 0 {
			name := "(no id)"
			if id != nil {
				name = *id
			}
			out = append(out, Describe(noun, name, omitted))
		}
	}
	return out
}

// Encoded are items kept as their JSON encodings, one after another (see
// Keeper.Encoded). The zero value holds no item.
type Encoded[T any] struct {
	data []byte
	n    int
}

// Len is how many items e holds.
func (e Encoded[T]) Len() int { return e.n }

// Bytes is the size of the encodings.
func (e Encoded[T]) Bytes() int { return len(e.data) }

// Decode returns the items, in a new slice at each call (never nil), so
// that callers that share e own what they decode.
func (e Encoded[T]) Decode() ([]T, error) {
	out := make([]T, e.n)
	// One decoder for all, reading the encodings as a stream of values:
	// json.Unmarshal would allocate its state once per item.
	dec := json.NewDecoder(bytes.NewReader(e.data))
	for i := range out {
		if err := dec.Decode(&out[i]); err != nil {
			return nil, fmt.Errorf("decode kept item: %w", err)
		}
	}
	return out, nil
}
