package v1beta1_test

import (
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/utils/ptr"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

// A status written by a manager before issue 28 holds the kinesis timestamp
// and the pubsub ackDeadline as strings. The manager's client must still
// decode it (one object it cannot decode fails its whole informer list): the
// string form reads as absent, the integer as itself, and a member the types
// lack (a newer manager's) is ignored, as the API machinery ignores it
// elsewhere.
func TestStatusOfEarlierManagersDecodes(t *testing.T) {
	tests := []struct {
		name, source  string
		kinesis       *int64
		ackDeadline   *int64
		wantErr       bool
		wantIteratorT string
	}{
		{name: "integers", source: `{"kinesis":{"timestamp":1767225600,"iteratorType":"AT_TIMESTAMP"},"pubsub":{"ackDeadline":60}}`,
			kinesis: ptr.To[int64](1767225600), ackDeadline: ptr.To[int64](60), wantIteratorT: "AT_TIMESTAMP"},
		{name: "numeric strings of earlier managers", source: `{"kinesis":{"timestamp":"1767225600","iteratorType":"AT_TIMESTAMP"},"pubsub":{"ackDeadline":"60"}}`,
			wantIteratorT: "AT_TIMESTAMP"},
		{name: "other strings of earlier managers", source: `{"kinesis":{"timestamp":"2026-01-01T00:00","iteratorType":"AT_TIMESTAMP"},"pubsub":{"ackDeadline":"10s"}}`,
			wantIteratorT: "AT_TIMESTAMP"},
		{name: "null", source: `{"kinesis":{"timestamp":null},"pubsub":{"ackDeadline":null}}`},
		{name: "a fraction is no integer", source: `{"kinesis":{"timestamp":1.5}}`, wantErr: true},
		{name: "a member the types lack", source: `{"kinesis":{"futureMember":1,"timestamp":5},"pubsub":{"futureMember":"x"}}`,
			kinesis: ptr.To[int64](5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var src swv1.PipeSource
			// The API machinery's own decoder, as the manager's client uses it.
			err := utiljson.Unmarshal([]byte(tt.source), &src)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("decoded %s, want an error", tt.source)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := src.Kinesis.Timestamp; !ptr.Equal(got, tt.kinesis) {
				t.Errorf("kinesis timestamp = %v, want %v", ptr.Deref(got, -1), ptr.Deref(tt.kinesis, -1))
			}
			if got := src.PubSub.AckDeadline; !ptr.Equal(got, tt.ackDeadline) {
				t.Errorf("ackDeadline = %v, want %v", ptr.Deref(got, -1), ptr.Deref(tt.ackDeadline, -1))
			}
			if got := ptr.Deref(src.Kinesis.IteratorType, ""); got != tt.wantIteratorT {
				t.Errorf("the other members were lost: iteratorType %q", got)
			}
		})
	}
}
