package lenient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// decoderEachMember is how eachMember split an object before scan.go: a
// json.Decoder per object, a decoded json.RawMessage per member. Kept as the
// reference the scan must agree with, and as the "before" of its benchmark.
func decoderEachMember(raw []byte, f func(name string, value json.RawMessage)) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return ReadObject(dec, func(name string) error {
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return err
		}
		f(name, value)
		return nil
	})
}

// decoderEachElement is eachElement before scan.go.
func decoderEachElement(raw []byte, f func(i int, value json.RawMessage)) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return err
	}
	for i := 0; dec.More(); i++ {
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return err
		}
		f(i, value)
	}
	return nil
}

type member struct {
	name  string
	value string
}

func members(split func([]byte, func(string, json.RawMessage)) error, raw []byte) ([]member, error) {
	var out []member
	err := split(raw, func(name string, value json.RawMessage) { out = append(out, member{name, string(value)}) })
	return out, err
}

func elements(split func([]byte, func(int, json.RawMessage)) error, raw []byte) ([]string, error) {
	var out []string
	err := split(raw, func(_ int, value json.RawMessage) { out = append(out, string(value)) })
	return out, err
}

// FuzzScanAgreesWithTheDecoder: on every valid JSON object or array, the
// scan splits exactly as encoding/json's decoder does.
func FuzzScanAgreesWithTheDecoder(f *testing.F) {
	for _, seed := range []string{
		`{}`, `[]`, ` { "a" : 1 , "b":[1, {"c":"}"}], "d\"e":"x\\", "\u00e9":null} `,
		`{"a":{"b":{"c":[]}},"a":true,"n":-1.5e+3}`, `[1,"2",[3],{"4":5}, null ]`,
		"{\"\xff\":1}", `{"a":"\u0022}"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		switch FirstByte(raw) {
		case '{':
			want, wantErr := members(decoderEachMember, raw)
			got, err := members(eachMember, raw)
			if (err != nil) != (wantErr != nil) || !slices.Equal(got, want) {
				t.Errorf("eachMember(%q) = %q, %v; the decoder says %q, %v", raw, got, err, want, wantErr)
			}
		case '[':
			want, wantErr := elements(decoderEachElement, raw)
			got, err := elements(eachElement, raw)
			if (err != nil) != (wantErr != nil) || !slices.Equal(got, want) {
				t.Errorf("eachElement(%q) = %q, %v; the decoder says %q, %v", raw, got, err, want, wantErr)
			}
		}
	})
}

// The scan never reads past the end of what it is given, whatever it is.
func TestScanStopsOnMalformedValues(t *testing.T) {
	for _, raw := range []string{``, `{`, `{"a`, `{"a":`, `{"a":1`, `{"a":1,`, `{"a" 1}`, `{1:2}`, `[`, `[1`, `[1 2]`, `{"\`, `{"a":"\`} {
		if _, err := members(eachMember, []byte(raw)); err == nil && strings.HasPrefix(raw, "{") {
			t.Errorf("eachMember(%q) did not fail", raw)
		}
		if _, err := elements(eachElement, []byte(raw)); err == nil && strings.HasPrefix(raw, "[") {
			t.Errorf("eachElement(%q) did not fail", raw)
		}
	}
}

// BenchmarkSplitMembers splits an item of 200 members, and a real pipe,
// with the decoder (before) and the scan (after), side by side.
func BenchmarkSplitMembers(b *testing.B) {
	var many strings.Builder
	many.WriteString(`{"id":"p"`)
	for j := range 200 {
		fmt.Fprintf(&many, `,"m%d":"v"`, j)
	}
	many.WriteString("}")
	pipe := `{"id":"a1","name":"events_kafka","state":"Running","scaling":{"replicas":2,"replicaCpuMillicores":"500m"},` +
		`"source":{"kafka":{"type":"msk","brokers":"b-1.example.invalid:9096","topics":"events","offset":{"strategy":"from_timestamp"}}},` +
		`"destination":{"database":"analytics","table":"events","managedTable":true}}`
	for name, raw := range map[string][]byte{"200_members": []byte(many.String()), "real_pipe": []byte(pipe)} {
		for impl, split := range map[string]func([]byte, func(string, json.RawMessage)) error{"before": decoderEachMember, "after": eachMember} {
			b.Run(name+"/"+impl, func(b *testing.B) {
				b.SetBytes(int64(len(raw)))
				b.ReportAllocs()
				for b.Loop() {
					_ = split(raw, func(string, json.RawMessage) {})
				}
			})
		}
	}
}
