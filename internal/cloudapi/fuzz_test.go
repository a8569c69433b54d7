package cloudapi

import (
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"testing"
	"time"
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

// checkRoundTrip asserts that what decoded re-marshals and decodes to the
// same value: the controller's JSON round trip into its status types relies
// on it.
func checkRoundTrip[T any](t *testing.T, items []T, decode func([]byte, int) ([]T, error)) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"status": 200, "result": items})
	if err != nil {
		t.Fatalf("re-marshal: %v", err)
	}
	again, err := decode(b, 200)
	if err != nil {
		t.Fatalf("decode of re-marshalled %s: %v", b, err)
	}
	if !reflect.DeepEqual(items, again) {
		t.Fatalf("round trip changed the value:\n%s", b)
	}
}

// listDecoderProperty is what both list decoders must do with any body:
// fail, or return a non-nil list (result was an array) that survives a
// round trip.
func listDecoderProperty[T any](decode func([]byte, int) ([]T, error)) func(*testing.T, []byte) {
	return func(t *testing.T, body []byte) {
		items, err := decode(body, 200)
		if err != nil {
			return
		}
		if items == nil {
			t.Fatal("success with nil items: result must have been an array")
		}
		checkRoundTrip(t, items, decode)
	}
}

func FuzzDecodePipes(f *testing.F) {
	addSeedFiles(f, "pipes.json", "pipes_sparse.json")
	decode := func(b []byte, status int) ([]Pipe, error) {
		l, err := decodePipes(b, status)
		return l.Items, err
	}
	f.Fuzz(listDecoderProperty(decode))
}

func FuzzDecodeReversePrivateEndpoints(f *testing.F) {
	addSeedFiles(f, "reverse_private_endpoints.json")
	decode := func(b []byte, status int) ([]ReversePrivateEndpoint, error) {
		l, err := decodeReversePrivateEndpoints(b, status)
		return l.Items, err
	}
	f.Fuzz(listDecoderProperty(decode))
}

func FuzzDecodeAlert(f *testing.F) {
	addSeedFiles(f, "alert.json", "alert_sparse.json")
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := decodeAlert(body)
		if err != nil {
			return
		}
		b, err := json.Marshal(map[string]any{"data": a})
		if err != nil {
			t.Fatalf("re-marshal: %v", err)
		}
		again, err := decodeAlert(b)
		if err != nil || !reflect.DeepEqual(a, again) {
			t.Fatalf("round trip: %v\n%s", err, b)
		}
	})
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"7", "0.5", "Wed, 21 Oct 2015 07:28:00 GMT", "1e308", "-1", "NaN", "1767254400", ""} {
		f.Add(s, s)
	}
	now := time.Unix(1_767_000_000, 0)
	f.Fuzz(func(t *testing.T, retryAfterValue, resetValue string) {
		h := http.Header{}
		h.Set("Retry-After", retryAfterValue)
		h.Set("X-RateLimit-Reset", resetValue)
		if d := retryAfter(h, now); d < 0 || d > maxRetryAfter {
			t.Fatalf("retryAfter(%q, %q) = %v", retryAfterValue, resetValue, d)
		}
	})
}
