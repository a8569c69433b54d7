package redact

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// DefaultWork bounds the steps a Scrubber takes: for each text with
// NewScrubber, for all texts together with Within. A step is one edge of
// the decoded text read, one byte read by one pattern's automaton, one fall
// back along its failure links, or one state compared when states are
// merged. An error response, whose body is scrubbed as far as 189 KB past
// its 64 KiB cap with two 4 KiB credential parts (MaxCredentialBytes in
// cloudapi), takes 3 to 5 million steps with such a key, under a million
// with a key of tens of bytes; an alert's texts take fewer. A text made to
// keep many states alive takes more and stops here: 16 million steps take
// about 0.2 s (11 ns a step; see docs/benchmarks.md).
const DefaultWork = 16 << 20

// checkEvery is how many positions the search reads between two looks at
// its context.
const checkEvery = 1 << 10

// ErrWorkExceeded is a scrubbing stopped by its work bound (DefaultWork or
// Within's): its text is replaced by Placeholder whole.
var ErrWorkExceeded = errors.New("scrubbing the text for credentials exceeded its work bound")

// errTooManyStates is a text whose escapes overlap in more ways than any
// service's do: a text made to be expensive to search.
var errTooManyStates = fmt.Errorf("%w: the text can be decoded in too many ways at once", ErrWorkExceeded)

// budget is the work a Scrubber may still do, and why it stopped.
type budget struct {
	ctx context.Context
	// shared: left is for all texts together; else each text may take
	// perText steps.
	shared  bool
	perText int64

	mu   sync.Mutex
	left int64
	err  error
}

// work counts the steps of one search against its limit.
type work struct {
	ctx          context.Context
	steps, limit int64
}

// check fails the search once it has taken more than its limit, or (every
// checkEvery positions) once its context has ended.
func (w *work) check(pos int) error {
	if w.steps > w.limit {
		return fmt.Errorf("%w (%d steps)", ErrWorkExceeded, w.limit)
	}
	if pos%checkEvery == 0 {
		if err := w.ctx.Err(); err != nil {
			return fmt.Errorf("scrubbing the text for credentials stopped: %w", err)
		}
	}
	return nil
}

// start returns the work one search may do, or the error that stopped
// an earlier one of a shared budget.
func (b *budget) start() (*work, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shared && b.err != nil {
		return nil, b.err
	}
	limit := b.perText
	if b.shared {
		limit = b.left
	}
	return &work{ctx: b.ctx, limit: limit}, nil
}

// done records what a search took, and why it failed.
func (b *budget) done(w *work, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shared {
		b.left -= w.steps
	}
	if err != nil && b.err == nil {
		b.err = err
	}
}

// Within returns a Scrubber that finds what s finds, taking at most work
// steps over all the texts it scrubs together (a response's), and stopping
// once ctx ends. Once stopped, every text it scrubs is replaced by
// Placeholder whole, and Err says why.
func (s *Scrubber) Within(ctx context.Context, work int64) *Scrubber {
	return &Scrubber{matchers: s.matchers, budget: &budget{ctx: ctx, shared: true, left: work}}
}

// Err returns why s replaced a text whole rather than scrub it (an
// ErrWorkExceeded or its context's error), nil when every text was scrubbed.
func (s *Scrubber) Err() error {
	if s.budget == nil {
		return nil
	}
	s.budget.mu.Lock()
	defer s.budget.mu.Unlock()
	return s.budget.err
}
