package pacing

import "time"

// askBeforeReserve is Pacer.Ask before a namespace within its share kept
// its room (reservations): claims per key, not per namespace, and every
// namespace's waiters taking turns in the line, whatever its share. Kept
// to measure the two side by side (TestSharedKeyKeepsSmallNamespacesOnTime,
// BenchmarkSharedKeyPeriods).
func (p *Pacer[K, R]) askBeforeReserve(key K, level Level, b Budget, n int) time.Duration {
	now := p.clock.Now()
	wait, held := p.claims.HeldFor(b.ID, key, level, now)
	if !held {
		spacing := spacingOf(b.Rate)
		switch {
		case !first(p.queue.Turn(b.ID, key, b.Waiter, level, n, now, spacing, nil)):
			wait = p.queue.Wait(b.ID, key, b.Waiter, level, n, b.Rate, spacing, nil)
		default:
			if wait = b.Admit(n); wait > 0 {
				wait = p.queue.Wait(b.ID, key, b.Waiter, level, n, b.Rate, wait, nil)
			} else {
				p.queue.Served(b.ID, key, b.Waiter, level, n)
			}
		}
	}
	if wait > 0 {
		p.queue.Due(b.ID, key, level, now.Add(wait))
		p.claims.Claim(b.ID, key, level, now.Add(wait))
	}
	return wait
}

// first is the first of two values.
func first[A, B any](a A, _ B) A { return a }
