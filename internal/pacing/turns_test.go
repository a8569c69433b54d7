package pacing

import (
	"slices"
	"testing"
)

// A watch with more reads than its budget admits at once makes them in
// batches, in turn: every read comes round within ceil(n/size) syncs.
func TestTurnsTakeEveryReadInTurn(t *testing.T) {
	tests := []struct {
		name    string
		n, size int
		want    [][]int // the batches of successive syncs
	}{
		{"reads that fit go together", 3, 10, [][]int{{0, 1, 2}, {0, 1, 2}}},
		{"an unlimited budget takes all", 3, 0, [][]int{{0, 1, 2}}},
		{"7 reads, 3 at once", 7, 3, [][]int{{0, 1, 2}, {3, 4, 5}, {6, 0, 1}, {2, 3, 4}, {5, 6, 0}}},
		{"a budget of one", 2, 1, [][]int{{0}, {1}, {0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turns := newTurns[string]()
			for i, want := range tt.want {
				got := turns.Next("w", tt.n, tt.size)
				if !slices.Equal(got, want) {
					t.Fatalf("sync %d: batch %v, want %v", i, got, want)
				}
				if again := turns.Next("w", tt.n, tt.size); !slices.Equal(again, got) {
					t.Fatalf("sync %d: asking again (the budget said wait) gave %v, want the same %v", i, again, got)
				}
				turns.Took("w", tt.n, tt.size)
			}
			turns.Forget("w")
			if got := turns.Next("w", tt.n, tt.size); got[0] != 0 {
				t.Errorf("a forgotten watch starts at %d, want 0", got[0])
			}
		})
	}
}

// Fewer reads than before (alert IDs removed) never index past them.
func TestTurnsFollowAShorterList(t *testing.T) {
	turns := newTurns[string]()
	turns.Next("w", 10, 4)
	turns.Took("w", 10, 4)
	turns.Took("w", 10, 4) // next starts at 8
	if got := turns.Next("w", 5, 2); !slices.Equal(got, []int{3, 4}) {
		t.Errorf("batch %v of 5 reads, want [3 4]", got)
	}
}
