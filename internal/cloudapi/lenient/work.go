package lenient

import (
	"errors"
	"fmt"
)

// A list answer is decoded in one pass as it streams in, and everything that
// pass does is counted in units of work, each about 10 ns of one core of the
// reference machine (make the units uniform, and a budget of units is a
// budget of CPU, whatever the answer's shape): each byte of an item costs
// ItemByteWork (scanned by the envelope's decoder, decoded strictly, encoded
// by the Keeper), each re-scan of a nested object by the member-by-member
// reader ObjectByteWork per byte, each value flattened into otherFields
// FlattenByteWork per byte, each string the credential scrubber reads
// a unit per byte, and each item and member a fixed charge, whose cost does
// not show in its bytes ({} is 3 bytes and a whole decoded, kept and
// encoded item). A hostile answer shaped to cost the most per byte (millions
// of empty items, objects nested hundreds deep, thousands of members) then
// runs out of its budget, while a real answer, whose work per byte is
// bounded by the depth of the types it is read into, does not (see
// cloudapi's DefaultDecodeWorkPerByte). The weights were measured with
// internal/cloudapi's TestDecodeWorkFollowsCPU.

// The weights of the work of one answer.
const (
	// ItemWork is the fixed charge of one item.
	ItemWork = 150
	// MemberWork is the fixed charge of one member read member by member.
	MemberWork = 40
	// ItemByteWork is the charge per byte of an item.
	ItemByteWork = 6
	// ObjectByteWork is the charge per byte of each object the member-by-
	// member reader splits again (see scan.go).
	ObjectByteWork = 2
	// FlattenByteWork is the charge per byte of each value flattened into
	// otherFields, token by token.
	FlattenByteWork = 8
)

// ErrWorkBudget is the error of an answer whose decoding needed more work
// than its budget allows.
var ErrWorkBudget = errors.New("decode work budget exceeded")

// Work counts the decode work of one answer against its budget. A nil
// *Work counts nothing and never runs out.
type Work struct {
	used, budget int64
}

// NewWork returns a Work of budget units; budget <= 0 never runs out.
func NewWork(budget int64) *Work { return &Work{budget: budget} }

// Charge counts n units, and fails with ErrWorkBudget once the budget is
// spent: the caller stops decoding there.
func (w *Work) Charge(n int) error {
	if w == nil {
		return nil
	}
	w.used += int64(n)
	if w.budget > 0 && w.used > w.budget {
		return fmt.Errorf("%w: more than %d units of work (about one per byte scanned)", ErrWorkBudget, w.budget)
	}
	return nil
}

// Used is the work counted so far.
func (w *Work) Used() int64 {
	if w == nil {
		return 0
	}
	return w.used
}
