package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"testing"
)

// corpus returns every string (member names and values) of the cloud
// client's test pipes, real and spec-shaped: what the credential rules run
// on as pipes are read.
func corpus(b *testing.B) []string {
	var out []string
	for _, file := range []string{"../testdata/pipes_real.json", "../testdata/pipes.json"} {
		raw, err := os.ReadFile(file)
		if err != nil {
			b.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		for {
			tok, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if s, ok := tok.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// BenchmarkValue applies the credential rules to every string of the test
// pipes: the rules before issue 27 (old) and now (new), side by side. Each
// op is the whole corpus.
func BenchmarkValue(b *testing.B) {
	strs := corpus(b)
	for _, bm := range []struct {
		name             string
		value            func(string) string
		isCredentialName func(string) bool
	}{{"old", oldValue, oldIsCredentialName}, {"new", Value, IsCredentialName}} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, s := range strs {
					_ = bm.value(s)
					_ = bm.isCredentialName(s)
				}
			}
		})
	}
}
