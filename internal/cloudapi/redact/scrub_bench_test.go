package redact

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

// Error bodies come from outside; scrubbing one must stay cheap whatever it
// holds, including long runs of escape characters that every pattern could
// start with.
func BenchmarkScrubErrorBody(b *testing.B) {
	// The secrets of a management key: its secret, and the base64 of
	// keyID:secret that HTTP Basic sends.
	const keyID, secret = "fake-key-id", `fake\key+secret%value&"quoted"/slash`
	secrets := []string{secret, base64.StdEncoding.EncodeToString([]byte(keyID + ":" + secret))}
	const maxErrorBodyBytes = 64 << 10 // as much of an error body as the cloud client reads
	bodies := map[string]string{
		"typical JSON":       `{"status":401,"requestId":"9b2f4c1e-7a3d-4e5f-8a6b-1c2d3e4f5a6b","error":"invalid key: fake\\key+secret%value"}`,
		"64KiB backslashes":  strings.Repeat(`\`, maxErrorBodyBytes),
		"64KiB percent-25":   strings.Repeat(`%25`, maxErrorBodyBytes/3),
		"64KiB secret start": strings.Repeat(`fake\\u005ckey+sec `, maxErrorBodyBytes/19),
		"64KiB text":         strings.Repeat("lorem ipsum dolor sit amet ", maxErrorBodyBytes/27),
	}
	for name, body := range bodies {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s := NewScrubber(secrets)
				_ = s.Clean(body)
			}
		})
	}
}

// The worst cases of issue 27: a credential that is one character repeated
// (or a short period repeated) and a service that answers with the same
// character, in a text as long as Clean keeps (8 KiB) and as an error body
// (64 KiB); and backslashes, which every escape starts with. The old matcher
// (oldscrub_test.go) followed every partial match from every position: run
// it with -benchtime=1x, each of its operations takes seconds (backslashes:
// 11 s for 512 bytes, hours for 8 KiB). The new search reports its steps,
// the unit of DefaultWork, and what a step costs.
func BenchmarkScrubRepetitiveSecret(b *testing.B) {
	const secretBytes = 4096 // the longest credential the operator accepts
	cases := []struct{ name, secret, text string }{
		{"one char, 8KiB", strings.Repeat("a", secretBytes), strings.Repeat("a", 8<<10)},
		{"one char, 64KiB", strings.Repeat("a", secretBytes), strings.Repeat("a", 64<<10)},
		{"period 2, 8KiB", strings.Repeat("ab", secretBytes/2), strings.Repeat("ab", 4<<10)},
		{"backslashes, 512B", strings.Repeat(`\`, secretBytes), strings.Repeat(`\\`, 256)},
		{"typical key, 8KiB text", "fake-key-secret-value-0123", strings.Repeat("lorem ipsum dolor sit amet ", 8<<10/27)},
	}
	for _, c := range cases {
		b.Run("new/"+c.name, func(b *testing.B) {
			s := NewScrubber([]string{c.secret})
			b.ReportAllocs()
			const unbounded = 1 << 40
			var steps int64
			for b.Loop() {
				bounded := s.Within(context.Background(), unbounded)
				_ = bounded.Redact(c.text)
				if err := bounded.Err(); err != nil {
					b.Fatal(err)
				}
				steps = unbounded - bounded.budget.left
			}
			b.ReportMetric(float64(steps), "steps/op")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(steps), "ns/step")
		})
		b.Run("old/"+c.name, func(b *testing.B) {
			if testing.Short() {
				b.Skip("the old matcher takes seconds per operation")
			}
			s := oldNewScrubber([]string{c.secret})
			b.ReportAllocs()
			for b.Loop() {
				_ = s.Redact(c.text)
			}
		})
	}
}

// A text made to be expensive stops at the work bound: this is what the
// bound costs, at most, per response.
func BenchmarkScrubUntilTheWorkBound(b *testing.B) {
	s := NewScrubber([]string{strings.Repeat(`\`, 4096)})
	text := strings.Repeat(`\\`, 1<<20)
	b.ReportAllocs()
	for b.Loop() {
		bounded := s.Within(context.Background(), DefaultWork)
		if got := bounded.Redact(text); got != Placeholder || !errors.Is(bounded.Err(), ErrWorkExceeded) {
			b.Fatalf("Redact = %.20q, Err = %v: want the bound reached", got, bounded.Err())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/DefaultWork, "ns/step")
}
