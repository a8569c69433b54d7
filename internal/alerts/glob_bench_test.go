package alerts_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/alerts"
)

// BenchmarkGlobWorst is the CPU of the worst selectors (a 256-character
// pattern against a 4 MiB name from a tenant's host): the matcher of
// issue 37 (linear) beside the one it replaced (backtracking), in one run.
// Besides the time, each reports the CPU of the process per match
// (cpu-ms/op: on a shared machine the time is not the CPU), and the linear
// one its steps (see Pattern.match).
func BenchmarkGlobWorst(b *testing.B) {
	for _, tt := range adversarialCases() {
		b.Run(tt.name+"/linear", func(b *testing.B) {
			p := alerts.CompilePattern(tt.pattern)
			var steps int64
			before := cpuTime()
			for b.Loop() {
				_, steps = alerts.MatchSteps(p, tt.s)
			}
			reportCPU(b, before)
			b.ReportMetric(float64(steps), "steps/op")
		})
		b.Run(tt.name+"/backtracking", func(b *testing.B) {
			before := cpuTime()
			for b.Loop() {
				backtrackingGlob(tt.pattern, tt.s)
			}
			reportCPU(b, before)
		})
	}
}

// reportCPU reports the CPU the process used since before, per op.
func reportCPU(b *testing.B, before time.Duration) {
	b.ReportMetric(float64(cpuTime()-before)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// cpuTime is the CPU the process used so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(fmt.Sprint("getrusage: ", err))
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// backtrackingGlob is the matcher before issue 37, as it was: linear but
// for backtracking to the last star, which costs up to len(pattern) ×
// len(s).
func backtrackingGlob(pattern, s string) bool {
	p, r := []rune(pattern), []rune(s)
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(r) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == r[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi, mark = star+1, mark+1
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
