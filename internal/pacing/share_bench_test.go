package pacing

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkSharedKeyLine runs, on a simulated clock, one spent key (1 call
// a second, bursts of 2) on which a namespace's big new watches wait and,
// a second later, one new watch of another namespace asks: the budget's
// line before issue 30 ("before": first come, first served) and now
// ("after": the namespaces take turns, and a waiter's turn keeps its room).
// small-s is how long the other namespace's watch waited for its calls
// (simulated seconds), last-s when the big namespace's last watch got its
// own, asks/watch what the waiting cost in asks (reconciles); ns/op is the CPU of the
// whole simulation, the line's bookkeeping included.
func BenchmarkSharedKeyLine(b *testing.B) {
	for _, big := range []int{50, 500} {
		for _, how := range []string{"before", "after"} {
			b.Run(fmt.Sprintf("big=%d/%s", big, how), func(b *testing.B) {
				var r lineRun
				for b.Loop() {
					r = runSharedKeyLine(big, how == "before")
				}
				b.ReportMetric(r.small.Seconds(), "small-s")
				b.ReportMetric(r.last.Seconds(), "last-s")
				b.ReportMetric(r.asksPerWatch, "asks/watch")
			})
		}
	}
}

// lineRun is what one simulation measured.
type lineRun struct {
	small, last  time.Duration
	asksPerWatch float64
}

func runSharedKeyLine(big int, before bool) lineRun {
	c := &testClock{wall: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	p := newTestPacer(c)
	old := newOldQueue[string]()
	start := c.wall
	gcra := &gcraBudget{c: c, interval: time.Second, burst: 2, tat: start.Add(2 * time.Second)}
	asks := 0
	ask := func(key string) time.Duration {
		asks++
		budget := gcra.of("k")
		budget.Waiter = Waiter{Namespace: key[:strings.IndexByte(key, '/')]}
		if before {
			return p.oldAsk(old, key, User, budget, 2)
		}
		return p.Ask(key, User, budget, 2)
	}
	type due struct {
		at  time.Time
		key string
	}
	var line []due
	for i := range big {
		line = append(line, due{start, fmt.Sprintf("big/w%03d", i)})
	}
	line = append(line, due{start.Add(time.Second), "small/w0"})
	var r lineRun
	for len(line) > 0 {
		slices.SortStableFunc(line, func(a, b due) int { return a.at.Compare(b.at) })
		next := line[0]
		line = line[1:]
		c.wall = next.at
		if wait := ask(next.key); wait > 0 {
			line = append(line, due{c.wall.Add(wait), next.key})
			continue
		}
		p.Admitted(next.key)
		if next.key == "small/w0" {
			r.small = c.wall.Sub(start.Add(time.Second))
		}
		r.last = max(r.last, c.wall.Sub(start))
	}
	r.asksPerWatch = float64(asks) / float64(big+1)
	return r
}
