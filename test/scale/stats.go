package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// perSecond bins event times into the seconds of [from, from+span): the
// count of each second.
func perSecond(times []time.Time, from time.Time, span time.Duration) []int {
	bins := make([]int, int(span/time.Second))
	for _, t := range times {
		d := t.Sub(from)
		if d < 0 || d >= span {
			continue
		}
		if i := int(d / time.Second); i < len(bins) {
			bins[i]++
		}
	}
	return bins
}

// spread sums up how evenly load falls on seconds: the busiest second over
// the mean second, and how many seconds saw any load at all.
type spread struct {
	total, peak, busy, seconds int
}

func spreadOf(bins []int) spread {
	s := spread{seconds: len(bins)}
	for _, n := range bins {
		s.total += n
		s.peak = max(s.peak, n)
		if n > 0 {
			s.busy++
		}
	}
	return s
}

// mean is the load of the mean second.
func (s spread) mean() float64 {
	if s.seconds == 0 {
		return 0
	}
	return float64(s.total) / float64(s.seconds)
}

// peakToMean is 1 for perfectly even load and grows as load bunches up; 0
// when there was none.
func (s spread) peakToMean() float64 {
	if s.total == 0 {
		return 0
	}
	return float64(s.peak) / s.mean()
}

// callFilter selects calls from the fake's log.
type callFilter func(call) bool

// since selects the calls at or after t.
func since(t time.Time) callFilter { return func(c call) bool { return !c.Time.Before(t) } }

// before selects the calls before t.
func before(t time.Time) callFilter { return func(c call) bool { return c.Time.Before(t) } }

// withKey selects the calls made with a management key.
func withKey(k keyPair) callFilter {
	fp := k.fingerprint()
	return func(c call) bool { return c.KeyFingerprint == fp }
}

// withStatus selects the calls answered with status.
func withStatus(status int) callFilter { return func(c call) bool { return c.Status == status } }

// withOperation selects the calls of one operation.
func withOperation(op fakecloud.Operation) callFilter {
	return func(c call) bool { return c.Operation == op }
}

// selectCalls returns the calls that pass every filter.
func selectCalls(calls []call, filters ...callFilter) []call {
	var out []call
next:
	for _, c := range calls {
		for _, f := range filters {
			if !f(c) {
				continue next
			}
		}
		out = append(out, c)
	}
	return out
}

func timesOf(calls []call) []time.Time {
	out := make([]time.Time, len(calls))
	for i, c := range calls {
		out[i] = c.Time
	}
	return out
}

// earliest returns the time of the first call; zero when there is none.
func earliest(calls []call) time.Time {
	var first time.Time
	for _, c := range calls {
		if first.IsZero() || c.Time.Before(first) {
			first = c.Time
		}
	}
	return first
}

// seconds formats a duration as seconds with one decimal.
func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// mebibytes formats a byte count in MiB.
func mebibytes(b int64) string { return fmt.Sprintf("%d MiB", (b+(1<<19))>>20) }

// times formats a ratio.
func times(r float64) string { return fmt.Sprintf("%.2f×", r) }

// periods sums up the gaps between consecutive syncs of each watch.
type periods struct {
	count, within     int
	shortest, longest time.Duration
}

// periodsOf takes the list-pipes calls (one per sync of a watch, each watch
// reading a service of its own) and measures each watch's periods that end
// in [from, from+span): how many are within 10% of every, and the shortest
// and longest.
func periodsOf(calls []call, from time.Time, span, every time.Duration) periods {
	byService := map[string][]time.Time{}
	for _, c := range calls {
		byService[c.ServiceID] = append(byService[c.ServiceID], c.Time)
	}
	var p periods
	for _, times := range byService {
		slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
		for i := 1; i < len(times); i++ {
			if d := times[i].Sub(from); d < 0 || d >= span {
				continue
			}
			gap := times[i].Sub(times[i-1])
			if p.count == 0 || gap < p.shortest {
				p.shortest = gap
			}
			p.longest = max(p.longest, gap)
			p.count++
			if off := gap - every; off.Abs() <= every/10 {
				p.within++
			}
		}
	}
	return p
}

// writeCalls keeps the fake's call log in the run's directory as
// calls.tsv (seconds from from, operation, service, key fingerprint,
// status), so that where a scenario's calls bunch can be looked at after
// the run.
func writeCalls(dir string, calls []call, from time.Time) error {
	var b strings.Builder
	for _, c := range calls {
		fmt.Fprintf(&b, "%.3f\t%s\t%s\t%s\t%d\n", c.Time.Sub(from).Seconds(), c.Operation, c.ServiceID, c.KeyFingerprint, c.Status)
	}
	return os.WriteFile(filepath.Join(dir, "calls.tsv"), []byte(b.String()), 0o644)
}
