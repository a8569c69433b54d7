package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

func TestPerSecond(t *testing.T) {
	from := time.Unix(1_700_000_000, 0)
	at := from.Add
	tests := []struct {
		name  string
		times []time.Time
		span  time.Duration
		want  []int
	}{
		{"none", nil, 3 * time.Second, []int{0, 0, 0}},
		{"binned by whole seconds from the start", []time.Time{at(0), at(999 * time.Millisecond), at(time.Second), at(2500 * time.Millisecond)},
			3 * time.Second, []int{2, 1, 1}},
		{"outside the span left out", []time.Time{at(-time.Millisecond), at(3 * time.Second), at(time.Second)},
			3 * time.Second, []int{0, 1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := perSecond(tt.times, from, tt.span)
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestSpread(t *testing.T) {
	tests := []struct {
		name       string
		bins       []int
		peakToMean float64
		busy       int
	}{
		{"even", []int{3, 3, 3, 3}, 1, 4},
		{"all in one second", []int{0, 12, 0, 0}, 4, 1},
		{"bunched", []int{6, 0, 2, 0}, 3, 2},
		{"nothing", []int{0, 0}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := spreadOf(tt.bins)
			if math.Abs(s.peakToMean()-tt.peakToMean) > 1e-9 || s.busy != tt.busy || s.seconds != len(tt.bins) {
				t.Errorf("peak÷mean %v busy %d of %d, want %v busy %d of %d", s.peakToMean(), s.busy, s.seconds, tt.peakToMean, tt.busy, len(tt.bins))
			}
		})
	}
}

func TestSelectCalls(t *testing.T) {
	from := time.Unix(1_700_000_000, 0)
	a, b := keyPair{"a", "a-secret"}, keyPair{"b", "b-secret"}
	calls := []call{
		{Operation: fakecloud.OpListPipes, KeyFingerprint: a.fingerprint(), Time: from, Status: 200},
		{Operation: fakecloud.OpListReversePrivateEndpoints, KeyFingerprint: a.fingerprint(), Time: from.Add(time.Second), Status: 429},
		{Operation: fakecloud.OpListPipes, KeyFingerprint: b.fingerprint(), Time: from.Add(2 * time.Second), Status: 200},
		{Operation: fakecloud.OpListPipes, KeyFingerprint: a.fingerprint(), Time: from.Add(3 * time.Second), Status: 200},
	}
	tests := []struct {
		name    string
		filters []callFilter
		want    int
	}{
		{"all", nil, 4},
		{"one key", []callFilter{withKey(a)}, 3},
		{"one key and operation", []callFilter{withKey(a), withOperation(fakecloud.OpListPipes)}, 2},
		{"a window", []callFilter{since(from.Add(time.Second)), before(from.Add(3 * time.Second))}, 2},
		{"rejected", []callFilter{withStatus(429)}, 1},
	}
	for _, tt := range tests {
		if got := len(selectCalls(calls, tt.filters...)); got != tt.want {
			t.Errorf("%s: %d calls, want %d", tt.name, got, tt.want)
		}
	}
	if first := earliest(calls[1:]); !first.Equal(from.Add(time.Second)) {
		t.Errorf("earliest = %v", first)
	}
	if !earliest(nil).IsZero() {
		t.Error("earliest of no calls is not zero")
	}
}

func TestParseProcStatus(t *testing.T) {
	status := "Name:\tmanager\nVmPeak:\t 2000000 kB\nVmHWM:\t   81920 kB\nVmRSS:\t   40960 kB\nThreads:\t12\n"
	rss, peak, err := parseProcStatus(strings.NewReader(status))
	if err != nil || rss != 40<<20 || peak != 80<<20 {
		t.Errorf("rss %d peak %d err %v; want 40 MiB, 80 MiB", rss, peak, err)
	}
	if _, _, err := parseProcStatus(strings.NewReader("Name:\tzombie\n")); err == nil {
		t.Error("a status without VmHWM accepted")
	}
}

func TestEmptyItemsEnvelope(t *testing.T) {
	for _, size := range []int{100, 101, 102, 1 << 20} {
		body := emptyItemsEnvelope(size)
		if len(body) != size {
			t.Errorf("size %d: got %d bytes", size, len(body))
		}
		var v struct{ Result []struct{} }
		if err := json.Unmarshal([]byte(body), &v); err != nil || len(v.Result) < (size-100)/3 {
			t.Errorf("size %d: %d items, %v", size, len(v.Result), err)
		}
	}
}
