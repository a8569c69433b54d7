package cloudapi

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
)

// pipesBody returns a list-pipes body of n realistic pipes, built from the
// testdata document.
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
		b.Write(doc.Result[i%len(doc.Result)])
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

func BenchmarkDecodePipes1000(b *testing.B) {
	body := pipesBody(b, 1000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		l, err := decodePipes(bytes.NewReader(body), 200, ListOptions[swv1.Pipe]{})
		if err != nil || len(l.Items) != 1000 {
			b.Fatalf("%d items, %v", len(l.Items), err)
		}
	}
}
