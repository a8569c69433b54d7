package pacing

import (
	"context"
	"testing"
	"time"
)

// A read slot freed while reads of every level wait goes to a user's work
// first, then to a Secret's change, then to a periodic refresh; within a
// level, in arrival order.
func TestSlotsServeHigherLevelsFirst(t *testing.T) {
	s := NewSlots(1)
	ctx := t.Context()
	if err := s.Acquire(ctx, Periodic); err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 4)
	wait := func(name string, level Level) {
		s.mu.Lock()
		before := len(s.waiting[level])
		s.mu.Unlock()
		go func() {
			if err := s.Acquire(ctx, level); err == nil {
				order <- name
			}
		}()
		waitForWaiters(t, s, level, before+1, name)
	}
	wait("periodic", Periodic)
	wait("secret", Secret)
	wait("user-1", User)
	wait("user-2", User)
	for _, want := range []string{"user-1", "user-2", "secret", "periodic"} {
		s.Release()
		if got := <-order; got != want {
			t.Fatalf("slot went to %s, want %s", got, want)
		}
	}
}

// A new read does not overtake waiters of its own level or above, but does
// overtake lower ones when a slot is free.
func TestSlotsFastPathRespectsWaiters(t *testing.T) {
	s := NewSlots(1)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := s.Acquire(t.Context(), User); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, Periodic); err == nil {
		t.Fatal("a periodic read took a slot none was free of")
	}
	s.Release()
	if err := s.Acquire(t.Context(), Secret); err != nil {
		t.Fatalf("a free slot was refused: %v", err)
	}
}

// waitForWaiters waits until want reads wait at level.
func waitForWaiters(t *testing.T, s *Slots, level Level, want int, name string) {
	t.Helper()
	waitFor(t, name+" to wait", func() bool { return s.waiters(level) >= want })
}

// waiters counts the reads waiting at level.
func (s *Slots) waiters(level Level) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiting[level])
}

// waitFor polls cond for up to a second.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 1000 {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}
