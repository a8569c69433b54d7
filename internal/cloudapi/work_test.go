package cloudapi

import (
	"bytes"
	"os"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi/lenient"
	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
)

// decodeWork decodes body as a list of pipes the way a call does (the
// status budget, a scrubber) and returns the work it cost.
func decodeWork(body []byte) (int64, error) {
	work := lenient.NewWork(0)
	_, err := decodePipes(bytes.NewReader(body), 200, listInput[swv1.Pipe]{
		opts:  ListOptions[swv1.Pipe]{KeepBytes: 800 << 10},
		scrub: redact.NewScrubber([]string{"key-id-1234", "secret-abcdefghijklmnop"}), work: work,
	})
	return work.Used(), err
}

// The default work budget lets through every real answer the size cap
// lets through: real answers, whatever their shape, cost less per byte than
// DefaultDecodeWorkPerByte. Hostile ones cost more, and are cut.
func TestDecodeWorkOfRealAnswers(t *testing.T) {
	bodies := map[string][]byte{"1000 realistic pipes": pipesBody(t, 1000)}
	for _, name := range []string{"pipes.json", "pipes_real.json", "pipes_sparse.json", "reverse_private_endpoints.json"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		bodies[name] = b
	}
	for name, body := range bodies {
		work, err := decodeWork(body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if perByte := float64(work) / float64(len(body)); perByte > DefaultDecodeWorkPerByte {
			t.Errorf("%s costs %.1f units per byte, more than the default budget's %d", name, perByte, DefaultDecodeWorkPerByte)
		}
	}
	for name, body := range hostileBodies(256 << 10) {
		if name == "long_escapes" {
			continue // costly for the scrubber only, which its own bound covers
		}
		work, _ := decodeWork(body)
		t.Logf("%s: %.1f units per byte", name, float64(work)/float64(len(body)))
	}
}
