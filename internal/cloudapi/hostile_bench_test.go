package cloudapi

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
)

// hostileBody is a list-pipes body of about size bytes whose items are made
// by item: the worst answers a hostile cloud can serve within the cap.
func hostileBody(size int, item func(i int) string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"status":200,"requestId":"r","result":[`)
	for i := 0; b.Len() < size-64; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(item(i))
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// hostileBodies are the shapes a 16 MiB answer can take that cost the most
// decode work per byte.
func hostileBodies(size int) map[string][]byte {
	nested := strings.Repeat(`{"x":`, 200) + "1" + strings.Repeat(`}`, 200)
	manyMembers := func(i int) string {
		var s strings.Builder
		s.WriteString(`{"id":"` + fmt.Sprint(i) + `"`)
		for j := range 200 {
			fmt.Fprintf(&s, `,"m%d":"v"`, j)
		}
		return s.String() + "}"
	}
	escapes := `"` + strings.Repeat(`\u0041\"\\`, 4000) + `"`
	return map[string][]byte{
		"empty_objects": hostileBody(size, func(int) string { return "{}" }),
		"tiny_ids":      hostileBody(size, func(i int) string { return fmt.Sprintf(`{"id":"%x"}`, i) }),
		"deep_unknown": hostileBody(size, func(i int) string {
			return fmt.Sprintf(`{"id":"%x","source":{"kafka":{"offset":%s},"u":%s},"u":%s}`, i, nested, nested, nested)
		}),
		"many_members": hostileBody(size, manyMembers),
		"long_escapes": hostileBody(size, func(i int) string { return fmt.Sprintf(`{"id":"%x","name":%s,"u":%s}`, i, escapes, escapes) }),
		"numeric_text": hostileBody(size, func(i int) string {
			return fmt.Sprintf(`{"id":"%x","scaling":{"replicas":"1e18","replicaCpuMillicores":"999999999999Ei","replicaMemoryGb":"0.%sEi"}}`, i, strings.Repeat("1", 300))
		}),
	}
}

// BenchmarkDecodeHostile16MiB decodes the worst 16 MiB answers: what one
// hostile namespace costs the manager per list read. "whole" decodes the
// whole answer (no work budget: the decoder's own speed), "budget" as a
// call does, with the default work budget, which stops the costliest
// shapes early.
func BenchmarkDecodeHostile16MiB(b *testing.B) {
	for name, body := range hostileBodies(DefaultMaxResponseBytes) {
		for _, variant := range []struct {
			name   string
			budget int64
		}{{"whole", 0}, {"budget", DefaultDecodeWorkPerByte * DefaultMaxResponseBytes}} {
			b.Run(name+"/"+variant.name, func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					_, _ = decodePipes(bytes.NewReader(body), 200, listInput[swv1.Pipe]{
						opts:  ListOptions[swv1.Pipe]{KeepBytes: 800 << 10},
						scrub: redact.NewScrubber([]string{"fake-key-id", "fake-key-secret"}),
						work:  lenient.NewWork(variant.budget),
					})
				}
			})
		}
	}
}
