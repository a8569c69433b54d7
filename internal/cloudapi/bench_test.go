package cloudapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
)

// pipesBody returns a list-pipes body of n realistic pipes with distinct ids
// in no order, built from the testdata document.
func pipesBody(tb testing.TB, n int) []byte {
	raw, err := os.ReadFile("testdata/pipes.json")
	if err != nil {
		tb.Fatal(err)
	}
	var doc struct {
		Result []json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		tb.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString(`{"status":200,"requestId":"9b2f4c1e-7a3d-4e5f-8a6b-1c2d3e4f5a6b","result":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(withID(tb, doc.Result[i%len(doc.Result)], fmt.Sprintf("%08x-0000-4000-8000-000000000000", uint32(i)*2654435761)))
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// withID returns the pipe raw with its id replaced by id.
func withID(tb testing.TB, raw json.RawMessage, id string) []byte {
	var pipe struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &pipe); err != nil {
		tb.Fatal(err)
	}
	return bytes.Replace(raw, []byte(`"`+pipe.ID+`"`), []byte(`"`+id+`"`), 1)
}

func BenchmarkDecodePipes1000(b *testing.B) {
	benchmarkDecodePipes(b, ListOptions[swv1.Pipe]{})
}

// BenchmarkDecodePipes1000StatusBudget decodes as the controller does: with
// the default status size limit, which 1000 pipes exceed.
func BenchmarkDecodePipes1000StatusBudget(b *testing.B) {
	benchmarkDecodePipes(b, ListOptions[swv1.Pipe]{KeepBytes: 800 << 10})
}

func benchmarkDecodePipes(b *testing.B, opts ListOptions[swv1.Pipe]) {
	body := pipesBody(b, 1000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		l, err := decodePipes(bytes.NewReader(body), 200, listInput[swv1.Pipe]{opts: opts})
		if err != nil || l.Total != 1000 || len(l.Items) == 0 {
			b.Fatalf("%d of %d items, %v", len(l.Items), l.Total, err)
		}
	}
}

// BenchmarkDecodeAlert decodes one alert of the current shape (channels,
// silence, execution errors), as each alert of a sync is.
func BenchmarkDecodeAlert(b *testing.B) {
	body, err := os.ReadFile("testdata/alert_current.json")
	if err != nil {
		b.Fatal(err)
	}
	scrub := redact.NewScrubber([]string{"a-bearer-token-of-the-operator"})
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := decodeAlert(body, scrub); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeRealPipes decodes testdata/pipes_real.json, pipes shaped as
// the real services send them, which take the member-by-member reading.
func BenchmarkDecodeRealPipes(b *testing.B) {
	body, err := os.ReadFile("testdata/pipes_real.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodePipes(bytes.NewReader(body), 200, listInput[swv1.Pipe]{}); err != nil {
			b.Fatal(err)
		}
	}
}
