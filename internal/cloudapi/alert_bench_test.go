package cloudapi

import (
	"os"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi/redact"
)

// decodeAlertBefore is decodeAlert as it was before issue 27 (commit
// cc8b72b), which cleaned the note and the execution errors only: kept for
// BenchmarkDecodeAlertBeforeAfter.
func decodeAlertBefore(body []byte, s *redact.Scrubber) (a swv1.AlertStatus, leftOut []string, err error) {
	if a, leftOut, err = readAlertEnvelope(body); err != nil {
		return swv1.AlertStatus{}, nil, err
	}
	if a.Note != nil {
		a.Note = new(s.CleanTo(*a.Note, maxNoteRunes))
	}
	a.ExecutionErrors = latestExecutionErrors(a.ExecutionErrors, s)
	return a, leftOut, nil
}

// BenchmarkDecodeAlertBeforeAfter decodes one alert of the current shape
// as before issue 27 and now, when every string of it is scrubbed, side by
// side.
func BenchmarkDecodeAlertBeforeAfter(b *testing.B) {
	body, err := os.ReadFile("testdata/alert_current.json")
	if err != nil {
		b.Fatal(err)
	}
	scrub := redact.NewScrubber([]string{"a-bearer-token-of-the-operator"})
	for _, bm := range []struct {
		name   string
		decode func([]byte, *redact.Scrubber) (swv1.AlertStatus, []string, error)
	}{{"before", decodeAlertBefore}, {"after", decodeAlert}} {
		b.Run(bm.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := bm.decode(body, scrub); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
