package cloudapi

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
	"github.com/servicewatch/servicewatch/internal/cloudapi/slim"
)

// The seed corpus is committed under testdata/fuzz/<FuzzName>; f.Add seeds
// the realistic documents too, so plain `go test` runs them.
func addSeedFiles(f *testing.F, names ...string) {
	for _, name := range names {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func decodeBytes[T any](decode listDecoder[T], body []byte, opts ListOptions[T]) (List[T], error) {
	return decode(bytes.NewReader(body), 200, listInput[T]{opts: opts})
}

// checkRoundTrip asserts that what decoded re-marshals and decodes to the
// same value: the items go into status as JSON and are read back from it
// (with encoding/json, as the controller reads status).
func checkRoundTrip[T any](t *testing.T, items []T) {
	t.Helper()
	b, err := json.Marshal(items)
	if err != nil {
		t.Fatalf("re-marshal: %v", err)
	}
	var again []T
	if err := json.Unmarshal(b, &again); err != nil {
		t.Fatalf("decode of re-marshaled %s: %v", b, err)
	}
	if !reflect.DeepEqual(items, again) {
		t.Fatalf("round trip changed the value:\n%s", b)
	}
}

// checkKeepsPrefix asserts that a byte budget keeps the longest prefix of
// the whole list that fits it, and counts every item all the same.
func checkKeepsPrefix[T any](t *testing.T, body []byte, all []T, decode listDecoder[T]) {
	t.Helper()
	sizes := make([]int, len(all))
	whole := 0
	for i := range all {
		b, err := json.Marshal(all[i])
		if err != nil {
			t.Fatal(err)
		}
		sizes[i] = len(b) + 1
		whole += sizes[i]
	}
	for _, budget := range []int{1, whole / 3, whole / 2, whole - 1, whole} {
		got, err := decodeBytes(decode, body, ListOptions[T]{KeepBytes: budget})
		if err != nil {
			t.Fatalf("KeepBytes %d: %v", budget, err)
		}
		n, used := 0, 0
		for n < len(sizes) && used+max(sizes[n], slim.MinItemCharge) <= budget {
			used += max(sizes[n], slim.MinItemCharge)
			n++
		}
		if len(got.Items) < n || got.Total != len(all) {
			t.Fatalf("KeepBytes %d kept %d of %d items (Total %d), want at least the first %d", budget, len(got.Items), len(all), got.Total, n)
		}
		checkSlimmedPrefix(t, budget, got.Items, all)
	}
}

// checkSlimmedPrefix asserts that kept is a prefix of all, each item whole
// or slimmed (saying so in its omitted record), within budget.
func checkSlimmedPrefix[T any](t *testing.T, budget int, kept, all []T) {
	t.Helper()
	used := 0
	for i := range kept {
		b, err := json.Marshal(kept[i])
		if err != nil {
			t.Fatal(err)
		}
		used += max(len(b)+1, slim.MinItemCharge)
		if !reflect.DeepEqual(kept[i], all[i]) && !bytes.Contains(b, []byte(`"omitted":{`)) {
			t.Fatalf("KeepBytes %d: item %d changed without an omitted record: %s", budget, i, b)
		}
	}
	if budget > 0 && used > budget {
		t.Fatalf("KeepBytes %d: kept %d bytes", budget, used)
	}
}

// listDecoderProperty is what both list decoders must do with any body:
// fail, or return a non-nil list (result was an array) that survives a round
// trip, counts what Each saw, and keeps the longest prefix a budget allows.
func listDecoderProperty[T any](decode listDecoder[T]) func(*testing.T, []byte) {
	return func(t *testing.T, body []byte) {
		seen := 0
		l, err := decodeBytes(decode, body, ListOptions[T]{Each: func(*T) { seen++ }})
		if err != nil {
			return
		}
		if l.Items == nil {
			t.Fatal("success with nil items: result must have been an array")
		}
		if l.Total != len(l.Items) || seen != l.Total {
			t.Fatalf("%d items, Total %d, Each called %d times", len(l.Items), l.Total, seen)
		}
		checkRoundTrip(t, l.Items)
		checkKeepsPrefix(t, body, l.Items, decode)
	}
}

func FuzzDecodePipes(f *testing.F) {
	addSeedFiles(f, "pipes.json", "pipes_sparse.json")
	f.Fuzz(listDecoderProperty(decodePipes))
}

func FuzzDecodeReversePrivateEndpoints(f *testing.F) {
	addSeedFiles(f, "reverse_private_endpoints.json")
	f.Fuzz(listDecoderProperty(decodeReversePrivateEndpoints))
}

func FuzzDecodeAlert(f *testing.F) {
	addSeedFiles(f, "alert.json", "alert_sparse.json", "alert_current.json")
	scrub := redact.NewScrubber([]string{"fuzz-token"})
	f.Fuzz(func(t *testing.T, body []byte) {
		a, _, err := decodeAlert(body, scrub)
		if err != nil {
			return
		}
		b, err := json.Marshal(map[string]any{"data": a})
		if err != nil {
			t.Fatalf("re-marshal: %v", err)
		}
		again, _, err := decodeAlert(b, scrub)
		if err != nil || !reflect.DeepEqual(a, again) {
			t.Fatalf("round trip: %v\n%s", err, b)
		}
	})
}
